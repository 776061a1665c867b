# SPDX-License-Identifier: GPL-2.0-or-later
"""mount_lib.py - helpers shared by the Python tests that run under
tests/mount/harness.sh (tests/reliability, tests/crypt).

Every access to the mount that could hang goes through op(): it runs in a
forked child that is SIGKILLed once it is hung (a FUSE request waits
killably once interrupted, so only SIGKILL frees a caller stuck on a hung
daemon), and the result comes back as ("ok", value) or ("err", errno).
A hang is a failure of the test, never a retry.  Hung means: the call has
not returned and neither the child nor the daemon has used any CPU for
SC_REL_OP_TIMEOUT seconds (default 20).  Not "slow": on a loaded machine
both still get the CPU now and then and so keep the call alive however
long it takes; a stopped or deadlocked daemon does not.

Counters (ops, bytes, faults, errors) are summed in STATS and printed by
summary() as one "figures:" line that docs/reliability.md quotes.
"""
import errno
import os
import pickle
import re
import select
import signal
import subprocess
import sys
import time

NAME = os.path.basename(sys.argv[0])
CONFIG = os.environ.get("CONFIG", "?")
# What a FAIL line names besides the script; a test may add to it (t_crypt.py
# adds the block size).
CONTEXT = CONFIG
OP_TIMEOUT = float(os.environ.get("SC_REL_OP_TIMEOUT", "20"))
FULL = os.environ.get("SC_REL_FULL", "0") == "1"
STATS = {"ops": 0, "bytes": 0, "faults": 0, "errors_seen": 0}
# The options a daemon a test starts itself gets besides the harness's:
# -o io_uring under SC_TEST_IO_URING=1 (tests/mount/harness.sh).
URING_OPTS = ["-o", "io_uring"] if os.environ.get("SC_TEST_IO_URING") == "1" else []


def fail(msg):
    print(f"{NAME}: FAIL ({CONTEXT}): {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def note(msg):
    print(f"{NAME}: {msg}", flush=True)


def cpu_ticks(pid):
    """CPU time pid has used (user + system, all threads, in clock ticks),
    or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])	# utime, stime
    except (OSError, ValueError, IndexError):
        return None


def progress(child):
    """What op() watches for progress: the CPU time of its child and of
    the daemon (None for one that is gone or unknown)."""
    try:
        daemon = cpu_ticks(daemon_pid())
    except (KeyError, ValueError, OSError):
        daemon = None
    return cpu_ticks(child), daemon


def op(fn, *args, uid=None, groups=(), timeout=None):
    """Runs fn(*args) in a child (as uid/gid uid with supplementary groups
    groups, none by default, if uid is given).

    Returns ("ok", result) or ("err", errno).  Fails the test if the child
    dies of a signal, or hangs: no answer while neither it nor the daemon
    used any CPU for the timeout (see the top of this file)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            if uid is not None:
                os.setgroups(list(groups))
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            res = ("ok", fn(*args))
        except OSError as e:
            res = ("err", e.errno)
        except BaseException as e:  # a bug in the test itself
            res = ("exc", repr(e))
        data = pickle.dumps(res)
        os.write(w, data)
        os._exit(0)
    os.close(w)
    limit = timeout or OP_TIMEOUT
    last = progress(pid)
    t0 = still_since = time.monotonic()
    chunks = []
    os.set_blocking(r, False)
    while True:
        try:
            b = os.read(r, 1 << 20)
            if b:
                chunks.append(b)
                continue
            break
        except BlockingIOError:
            pass
        now = time.monotonic()
        if now - t0 >= 0.25:		# sampled, /proc is not free
            t0 = now
            cur = progress(pid)
            if cur != last:
                last, still_since = cur, now
        if now - still_since > limit:
            os.kill(pid, signal.SIGKILL)
            # No blocking wait: a child whose request the daemon already
            # took cannot die before the daemon answers it (the kernel
            # waits out requests in userspace), so report the hang now.
            os.waitpid(pid, os.WNOHANG)
            os.close(r)
            fail(f"{getattr(fn, '__name__', fn)}{args!r} did not return, and neither it nor the "
                 f"daemon used any CPU for {limit}s (hang)")
        time.sleep(0.002)
    os.close(r)
    _, st = os.waitpid(pid, 0)
    check(os.WIFEXITED(st), f"{getattr(fn, '__name__', fn)}{args!r}: child died (status {st})")
    res = pickle.loads(b"".join(chunks))
    if res[0] == "exc":
        fail(f"test bug in {getattr(fn, '__name__', fn)}{args!r}: {res[1]}")
    STATS["ops"] += 1
    if res[0] == "err":
        STATS["errors_seen"] += 1
    return res


def ename(e):
    return errno.errorcode.get(e, str(e))


def errno_of(fn, *args):
    """Calls fn(*args) here (not in a child): 0 if it returns, its errno if it
    raises OSError."""
    try:
        fn(*args)
    except OSError as e:
        return e.errno
    return 0


def want_err(res, allowed, what):
    check(res[0] == "err" and res[1] in allowed,
          f"{what}: got {fmt(res)}, want {'/'.join(ename(e) for e in allowed)}")


def want_ok(res, what):
    check(res[0] == "ok", f"{what}: got {fmt(res)}, want success")
    return res[1]


def fmt(res):
    if res[0] == "err":
        return ename(res[1])
    v = res[1]
    if isinstance(v, (bytes, bytearray)):
        return f"{len(v)} bytes"
    return f"ok {v!r}"


# Plain file helpers, for use inside op() (they run in the child).
def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def write_file(path, data, mode=0o644, sync=True):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        n = 0
        while n < len(data):
            n += os.write(fd, data[n:])
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    return len(data)


def pread_file(path, size, off):
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.pread(fd, size, off)
    finally:
        os.close(fd)


def pwrite_file(path, data, off, sync=False):
    """Writes data at off in place (no O_TRUNC: a truncate to 0 may give the
    file new keys), then fsyncs if sync.  Returns what pwrite returned."""
    fd = os.open(path, os.O_WRONLY)
    try:
        n = os.pwrite(fd, data, off)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    return n


def stat_size(path):
    return os.stat(path).st_size


def lstat_mode(path):
    return os.lstat(path).st_mode


def pattern(n, seed):
    import random
    return random.Random(repr(seed)).randbytes(n)


def daemon_pid():
    state = os.environ.get("SC_HARNESS_STATE")
    if state and os.path.exists(os.path.join(state, "daemon.pid")):
        with open(os.path.join(state, "daemon.pid")) as f:
            return int(f.read())
    return int(os.environ["DAEMON_PID"])


def log_words(path):
    """The lines of a test's own log at path, each split into words
    (none yet: an empty list), for a writer process's log of its calls."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [ln.split() for ln in f]


def thread_stacks(pid):
    """One line per thread of process pid: "TID COMM: the top of its kernel
    stack", for the diagnostics of a test whose mount stopped answering."""
    out = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        comm, top = "?", "?"
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stack") as f:
                top = " < ".join(ln.split()[1] for ln in f.read().splitlines()[:4])
        except OSError as e:
            top = f"({e.strerror})"
        out.append(f"{tid} {comm}: {top}")
    return out


def daemon_alive(what):
    """The daemon process exists and the mount answers a stat of its root."""
    pid = daemon_pid()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        fail(f"{what}: the daemon (pid {pid}) is gone")
    res = op(os.stat, os.environ["MNT"])
    check(res[0] == "ok", f"{what}: stat of the mount root: {fmt(res)}")


def daemon_log():
    """The lines of the daemon's log (DAEMON_LOG, set by the harness)."""
    with open(os.environ["DAEMON_LOG"], errors="replace") as f:
        return f.readlines()


def sanitizer_lines():
    """Lines of the daemon log that a sanitizer or a crash wrote."""
    log = os.environ.get("DAEMON_LOG")
    if not log or not os.path.exists(log):
        return []
    return [ln.rstrip() for ln in daemon_log()
            if re.search(r"Sanitizer|runtime error|\basan\b|Segmentation|Aborted|"
                         r"stack-buffer|heap-", ln)]


def unmount():
    """Unmounts the harness's mount and waits for the daemon to exit, with no
    deadline (its exit status is the harness's to check, at the remount)."""
    pid = daemon_pid()
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        fail(f"daemon {pid} is gone before the unmount")
    try:
        r = subprocess.run(["fusermount3", "-u", os.environ["MNT"]])
        check(r.returncode == 0, "fusermount3 -u failed")
        select.select([pidfd], [], [])	# readable once the process has exited
    finally:
        os.close(pidfd)


def remount(kill=False):
    args = [os.environ["SC_REMOUNT"]] + (["--kill"] if kill else [])
    r = subprocess.run(args)
    check(r.returncode == 0, f"remount{' --kill' if kill else ''} failed (daemon exit status "
                             f"on unmount is checked by the harness: see its message)")


def drop_caches(path=None):
    """Drops the kernel's clean caches: the page cache of one backing file
    (fadvise, local) or, without path, dentries/inodes/pages of the machine
    (so the FUSE kernel side forgets our inodes and the daemon its state)."""
    if path:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        return
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def backing_of(path, backing=None):
    """The backing path of PATH (a path in the mount) under backing (default
    $BACKING), found by inode: the mount reports the backing file's st_ino,
    so this works whether names are encrypted or not.  The first path find
    lists (one link of a hard-linked file).  Fails the test if none."""
    backing = backing or os.environ["BACKING"]
    st = want_ok(op(os.lstat, path), f"lstat {path}")
    r = subprocess.run(["find", backing, "-xdev", "-inum", str(st.st_ino), "-print", "-quit"],
                       capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout,
          f"no backing file for {path} (inode {st.st_ino}) under {backing}: {r.stderr.strip()!r}")
    return r.stdout.rstrip("\n")


def grep_backing(backing, marker):
    """Files under backing holding marker (bytes), by grep -r -a -l -F."""
    r = subprocess.run(["grep", "-r", "-a", "-l", "-F", marker.decode(), backing],
                       capture_output=True)
    check(r.returncode in (0, 1), f"grep failed: {r.stderr.decode()!r}")
    return r.stdout.decode().split()


def summary(extra=""):
    s = " ".join(f"{k}={v}" for k, v in STATS.items())
    note(f"figures: config={CONFIG} {s} {extra}".rstrip())
