#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""outage_test.py - a stackcrypt mount over CephFS while its OSD, then its
MDS, is killed (kill -9) and started again under a writer.

Run by `tests/ceph/harness.sh [--libcephfs] --keep-going CONFIG` (BACKING
on a ceph-fuse mount, or SRC its cephfs:// URL), on a cluster of its own
that it alone uses (scripts/ceph.sh kill-daemon refuses otherwise:
meson.build gives these tests their own SC_CEPH_DIR and port, and runs
them one at a time).

A writer process goes round: it creates file fN (written, fsynced,
closed: acknowledged once all three succeeded) and appends record N, of
fixed size, to one file it keeps open (O_APPEND; written and fsynced:
acknowledged with the offset it landed at).  Before each call it logs
which call it makes, after it what came of it, each line stamped with the
monotonic clock and fsynced to a local file (never on CephFS).

For each daemon, osd.0 then mds.a:
  1. once the writer has 3 more acknowledged files and records, it is
     paused between two rounds; the daemon is killed (scripts/ceph.sh
     kill-daemon: SIGKILL by pid); the writer goes on, so that its next
     calls are made while the daemon is dead;
  2. once the writer has logged a call made after the kill, and for the
     OSD a client (ceph-fuse, or the daemon's libcephfs) has a request to
     it in flight (objecter_requests on its admin socket), for the MDS the
     monitor reports it laggy (no beacon for 15 s), the daemon is started
     again (scripts/ceph.sh start-daemon, which waits until it serves);
     the writer, no remount, must then get 3 more files and records
     acknowledged; after the MDS's restart, a second mount of the volume
     by its cephfs:// URL is refused: the one-mount lock, which the MDS
     holds for the daemon's session, was kept across it (and by its
     ceph-fuse path, which this host's mountinfo may refuse first).
Then:
  - nothing was acknowledged that cannot have reached Ceph: no file whose
    fsync began after the kill and returned before the restart began (an
    fsync needs the OSD; a create needs the MDS), and no record so during
    the OSD's outage (a record's fsync may return while the MDS is down:
    the data is on the OSD);
  - the writer's failures, if any, were clean errors (EIO, ENOTCONN,
    ETIMEDOUT, EINTR), never another; the outage may also only make calls
    wait;
  - every acknowledged file and record reads back exactly through this
    mount, the daemon exits 0 at unmount, fsck finds 0 problems (exit 0),
    and every one reads back again through a fresh mount (a new daemon,
    and through cephfs:// a new libcephfs session);
  - the daemon logged no error line but those an outage explains
    (OUTAGE_LINES), and no sanitizer report.
Every wait is for a condition and bounded (BOUND) only so that a mount
that never recovers fails, with diagnostics: the writer's last lines, the
cluster's state and each of the daemon's threads' kernel stacks.
"""
import errno
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "lib"))
import mount_lib as ml  # noqa: E402

MNT = os.environ["MNT"]
FSIZE = 3 * 4096 + 100		# a file: three units and a tail
RSIZE = 1000			# a record: not a unit's divisor, so records straddle units
BOUND = 600			# seconds: a mount that has not recovered by then has failed
CLEAN = {"EIO", "ENOTCONN", "ETIMEDOUT", "EINTR"}
# Patterns of the error lines the daemon may log about an outage: none.
# Its calls into Ceph wait, none fails, so it has nothing to say (no line
# in any run; docs/usage.md "Over CephFS"); an evicted cephfs:// session
# would log "the client's MDS session is gone", and fail the test.
OUTAGE_LINES = []


def now():
    return time.monotonic()


def record(i):
    return ml.pattern(RSIZE, ("rec", i))


def writer(d, log, pause, stop):
    out = open(log, "a")

    def say(*w):
        out.write(" ".join(str(x) for x in w) + " %.3f\n" % now())
        out.flush()
        os.fsync(out.fileno())

    def call(what, i, fn, *args):
        say("call", what, i)
        try:
            r = fn(*args)
        except OSError as e:
            say("err", what, i, errno.errorcode.get(e.errno, str(e.errno)))
            raise
        return r

    afd = None
    i = 0
    while not os.path.exists(stop):
        if os.path.exists(pause):
            say("paused", i)
            while os.path.exists(pause) and not os.path.exists(stop):
                time.sleep(0.01)
            say("resumed", i)
            continue
        try:
            data = ml.pattern(FSIZE, i)
            fd = call("create", i, os.open, os.path.join(d, "f%d" % i),
                      os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                done = 0
                while done < len(data):
                    done += call("write", i, os.write, fd, data[done:])
                call("fsync", i, os.fsync, fd)
            finally:
                call("close", i, os.close, fd)
            say("ackfile", i)
        except OSError:
            time.sleep(0.05)	# a mount that fails at once: no flood
        try:
            if afd is None:
                afd = call("open-append", i, os.open, os.path.join(d, "append"),
                           os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            n = call("append", i, os.write, afd, record(i))
            end = os.lseek(afd, 0, os.SEEK_CUR)
            if n != RSIZE:
                say("short", "append", i, n)
            else:
                call("fsync-append", i, os.fsync, afd)
                say("ackrec", i, end - RSIZE)
        except OSError:
            if afd is not None:	# a new fd after a failure: the old one may be dead
                try:
                    os.close(afd)
                except OSError:
                    pass
                afd = None
            time.sleep(0.05)
        i += 1
    os._exit(0)


def lines(log):
    """The writer's lines, split: [kind, ..., time]."""
    out = []
    for w in ml.log_words(log):
        if len(w) >= 2:
            w[-1] = float(w[-1])
            out.append(w)
    return out


def acked(log):
    """Acknowledged files {i: time} and records {i: (offset, time)}."""
    files, recs = {}, {}
    for w in lines(log):
        if w[0] == "ackfile":
            files[int(w[1])] = w[-1]
        elif w[0] == "ackrec":
            recs[int(w[1])] = (int(w[2]), w[-1])
    return files, recs


def diagnose(log):
    """A writer that does not get on: where it and the daemon wait, and what
    the cluster says.  For the log only; every probe bounded."""
    for w in lines(log)[-8:]:
        print(f"outage_test.py: writer: {' '.join(str(x) for x in w)}", file=sys.stderr)
    print(f"outage_test.py: now {now():.3f}", file=sys.stderr)
    conf = os.path.join(cdir(), "ceph.conf")
    for cmd in (["ceph", "-c", conf, "-s"], ["ceph", "-c", conf, "health", "detail"],
                ["ceph", "-c", conf, "tell", "mds.a", "session", "ls"]):
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=60)
            out = r.stdout
        except subprocess.TimeoutExpired:
            out = "no answer in 60 s"
        print(f"outage_test.py: {' '.join(cmd[3:])}:\n{out}", file=sys.stderr)
    pid = ml.daemon_pid()
    if not os.path.exists(f"/proc/{pid}"):
        print(f"outage_test.py: the daemon {pid} is gone", file=sys.stderr)
        return
    for t in ml.thread_stacks(pid):
        print(f"outage_test.py: daemon thread {t}", file=sys.stderr)


def wait_for(cond, child, log, what, every=0.1):
    """Polls cond() every `every` s until it holds; fails after BOUND s, or
    if the writer died.  Probes that run the ceph CLI poll once a second:
    each costs a process start of a second's CPU on a loaded machine."""
    start = now()
    while not cond():
        pid, _ = os.waitpid(child, os.WNOHANG)
        ml.check(pid == 0, f"{what}: the writer died")
        if now() - start >= BOUND:
            diagnose(log)
            ml.fail(f"{what}: not reached after {BOUND} s")
        time.sleep(every)


def ceph_sh(*args):
    r = subprocess.run([os.environ["SC_CEPH_SH"], "-w", os.environ["SC_CEPH_WORK"], *args],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ml.check(r.returncode == 0, f"scripts/ceph.sh {' '.join(args)}: {r.stdout.strip()}")
    return r.stdout.strip()


def cdir():
    return os.environ.get("SC_CEPH_DIR", "/var/tmp/stackcrypt-ceph")


def osd_request_waits():
    """True if a client of the cluster has an OSD request in flight (its
    admin socket's objecter_requests: ceph.conf's [client] gives each
    client process one)."""
    run = os.path.join(cdir(), "run")
    for n in os.listdir(run):
        if not (n.startswith("client.") and n.endswith(".asok")):
            continue
        try:
            r = subprocess.run(["ceph", "--admin-daemon", os.path.join(run, n), "objecter_requests"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               timeout=60)
            if r.returncode == 0 and json.loads(r.stdout).get("ops"):
                return True
        except (subprocess.TimeoutExpired, ValueError):
            pass	# a client that has just ended, or a socket left behind
    return False


def mds_laggy():
    conf = os.path.join(cdir(), "ceph.conf")
    try:
        r = subprocess.run(["ceph", "-c", conf, "--connect-timeout", "60", "mds", "stat"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False
    return r.returncode == 0 and ("laggy" in r.stdout or "up:active" not in r.stdout)


def outage(name, child, log, pause):
    """Kills daemon name under the writer and starts it again; returns
    (time the kill was done, time the restart began, time it serves)."""
    files, recs = acked(log)
    nf, nr = len(files) + 3, len(recs) + 3
    wait_for(lambda: all(len(a) >= n for a, n in zip(acked(log), (nf, nr))), child, log,
             f"before the kill of {name}: {nf} files and {nr} records")
    open(pause, "w").close()
    wait_for(lambda: lines(log)[-1][0] == "paused", child, log,
             f"before the kill of {name}: the writer paused")
    ceph_sh("kill-daemon", name)
    killed = now()
    os.unlink(pause)
    # the writer's next call, made with the daemon dead
    wait_for(lambda: any(w[0] == "call" and w[-1] > killed for w in lines(log)), child, log,
             f"after the kill of {name}: a call")
    if name.startswith("osd"):
        # and a client (ceph-fuse below BACKING, or the daemon's libcephfs)
        # has a request to the dead OSD in flight: the writer waits on it
        wait_for(osd_request_waits, child, log, f"after the kill of {name}: a client's OSD request",
                 every=1)
    if name.startswith("mds"):
        # and the monitor has seen the MDS go (no beacon for
        # mds_beacon_grace, 15 s): the clients then get a map without an
        # active MDS, and reconnect to a new one through its replay, not
        # only to a daemon that took the old one's place at once
        wait_for(mds_laggy, child, log, f"after the kill of {name}: the monitor sees it gone",
                 every=1)
    started = now()
    ml.note(ceph_sh("start-daemon", name))
    serves = now()
    files, recs = acked(log)
    nf, nr = len(files) + 3, len(recs) + 3
    wait_for(lambda: all(len(a) >= n for a, n in zip(acked(log), (nf, nr))), child, log,
             f"after the restart of {name}: {nf} files and {nr} records (no remount)")
    if name.startswith("mds"):
        # the one-mount lock is the MDS's: the daemon's session re-sent it
        # to the new MDS when it reconnected.  By the ceph-fuse path the
        # daemon's mount may be found in this host's mountinfo first (a
        # refusal of its own); by the URL, in a build with libcephfs, only
        # the lock can refuse it
        second_mount_refused(os.environ["BACKING"], ("in use by another stackcrypt mount",
                                                      "is already mounted at"))
        if has_cephfs():
            url = os.environ["SC_CEPH_URL"] + os.environ["BACKING"][len(os.environ["SC_CEPH_DIR_MNT"]):]
            second_mount_refused(url, ("in use by another stackcrypt mount",))
    return killed, started, serves


def has_cephfs():
    r = subprocess.run([os.environ["SC_BIN"], "--version"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return "+cephfs" in r.stdout


def second_mount_refused(src, rules):
    """A second stackcrypt mount of the volume, by src, is refused (exit 10,
    one of rules named) while the harness's daemon holds it."""
    mnt = os.path.join(os.environ["SC_LOCAL_REF"], "second")
    os.makedirs(mnt, exist_ok=True)
    r = subprocess.run([os.environ["SC_BIN"], "mount", "--keyfile=" + os.environ["KEYFILE"], src, mnt],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open("/proc/self/mounts") as f:
        mounted = any(ln.split()[1] == mnt for ln in f)
    if mounted:	# the bug this looks for: never leave it behind
        subprocess.run(["fusermount3", "-u", mnt])
    os.rmdir(mnt)
    ml.check(r.returncode == 10 and not mounted and any(w in r.stdout for w in rules),
             f"a second mount by {src} after the MDS's restart: exit {r.returncode}, "
             f"mounted {mounted}: {r.stdout.strip()}")


def began(log, what, i):
    """When the writer began call what of round i (the last such call)."""
    t = None
    for w in lines(log):
        if w[0] == "call" and w[1] == what and int(w[2]) == i:
            t = w[-1]
    return t


def longest_call(ls, t0, t1):
    """The writer's call that waited longest of those under way in [t0, t1]:
    (what, seconds), from a call's line to the next line."""
    best = ("none", 0.0)
    for a, b in zip(ls, ls[1:]):
        if a[0] == "call" and a[-1] <= t1 and b[-1] >= t0 and b[-1] - a[-1] > best[1]:
            best = (f"{a[1]} of round {a[2]}", b[-1] - a[-1])
    return best


def check_acks_in_outages(log, windows):
    files, recs = acked(log)
    for name, (killed, started, _) in windows.items():
        for i, t in files.items():
            b = began(log, "fsync", i)
            ml.check(not (b > killed and t < started),
                     f"file f{i} acknowledged while {name} was dead: its fsync began "
                     f"{b - killed:.1f} s after the kill and returned {started - t:.1f} s "
                     f"before the restart")
        if name.startswith("osd"):
            for i, (_, t) in recs.items():
                b = began(log, "fsync-append", i)
                ml.check(not (b > killed and t < started),
                         f"record {i} acknowledged while {name} was dead")


def check_data(d, log, what):
    files, recs = acked(log)
    for i in sorted(files):
        res = ml.op(ml.read_file, os.path.join(d, "f%d" % i))
        ml.check(res == ("ok", ml.pattern(FSIZE, i)),
                 f"{what}: acknowledged file f{i}: {ml.fmt(res) if res[0] != 'ok' else 'wrong data'}")
    res = ml.op(ml.read_file, os.path.join(d, "append"))
    ml.check(res[0] == "ok", f"{what}: reading the appended file: {ml.fmt(res)}")
    data = res[1]
    for i, (off, _) in sorted(recs.items()):
        ml.check(data[off:off + RSIZE] == record(i),
                 f"{what}: acknowledged record {i} at offset {off} of {len(data)}: wrong data")
    return len(files), len(recs), len(data)


def unmount_checked():
    """Unmounts, and the daemon must have exited 0."""
    ml.unmount()
    rc = os.path.join(os.environ["SC_HARNESS_STATE"], "daemon.rc")
    start = now()
    while not os.path.exists(rc):	# the wrapper writes it as the daemon ends
        ml.check(now() - start < BOUND, "the daemon's exit status never came")
        time.sleep(0.05)
    with open(rc) as f:
        code = f.read().strip()
    ml.check(code == "0", f"the daemon exited with status {code} at unmount")


def main():
    d = os.path.join(MNT, "outage")
    os.mkdir(d)
    state = os.environ["SC_LOCAL_REF"]	# local, not CephFS
    log, pause, stop = (os.path.join(state, n) for n in ("writer.log", "writer.pause", "writer.stop"))
    child = os.fork()
    if child == 0:
        writer(d, log, pause, stop)
    windows = {}
    try:
        for name in ("osd.0", "mds.a"):
            windows[name] = outage(name, child, log, pause)
    finally:
        open(stop, "w").close()
        if os.path.exists(pause):
            os.unlink(pause)
        # the writer ends at its next round, once its calls return: if a
        # daemon is still dead (a failure above), `down` ends it
        start = now()
        while os.waitpid(child, os.WNOHANG)[0] == 0:
            if now() - start >= BOUND:
                diagnose(log)
                os.kill(child, 9)
                os.waitpid(child, 0)
                ml.fail(f"the writer did not stop in {BOUND} s")
            time.sleep(0.1)
    ls = lines(log)
    errs = sorted({f"{w[1]}:{w[3]}" for w in ls if w[0] == "err"})
    files, recs = acked(log)
    for name, (killed, started, serves) in windows.items():
        w, t = longest_call(ls, killed, serves)
        ml.note(f"{name}: dead {started - killed:.1f} s, starting {serves - started:.1f} s; "
                f"the writer's longest call meanwhile: {w} for {t:.1f} s")
    ml.note(f"{len(files)} files and {len(recs)} records acknowledged; failed calls: "
            f"{', '.join(errs) or 'none'}")
    ml.check({e.split(":")[1] for e in errs} <= CLEAN, f"unexpected errors: {errs}")
    check_acks_in_outages(log, windows)
    check_data(d, log, "same mount")
    unmount_checked()
    r = subprocess.run([os.environ["SC_BIN"], "fsck", "--keyfile=" + os.environ["KEYFILE"],
                        os.environ["SRC"]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    ml.check(r.returncode == 0 and "; 0 problems" in r.stdout,
             f"fsck after the outages: exit {r.returncode}: {r.stdout.strip()[-2000:]}")
    ml.remount()
    nf, nr, size = check_data(d, log, "a fresh mount")
    unmount_checked()
    loglines = [ln.rstrip() for ln in ml.daemon_log()]
    expected = [ln for ln in loglines if any(re.search(p, ln) for p in OUTAGE_LINES)]
    other = [ln for ln in loglines if re.search(r"error", ln, re.I) and ln not in expected]
    ml.check(not other, f"daemon error lines: {other[:5]}")
    ml.check(not ml.sanitizer_lines(), f"sanitizer: {ml.sanitizer_lines()[:5]}")
    print(f"outage: {nf} files and {nr} records ({size} bytes appended) intact across "
          f"{', '.join(windows)} kill -9; daemon lines about the outage: {len(expected)}")


if __name__ == "__main__":
    main()
