#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""t_hostile.py - someone with write access to the backing directory.

    harness.sh --keep-going CONFIG ext4 -- t_hostile.py      (CONFIG: a crypt one)

with SC_MOUNT_OPTS=allow_other,attr_timeout=0,entry_timeout=0 (meson.build).

Each damaged file starts as a plaintext with a marker, written through the
mount.  Then the backing directory is changed behind the daemon, in two
phases, and every access through the mount runs in a child killed after a
timeout (a hang fails the test):

offline (the daemon unmounted -- fusermount3 -u -- while the damage is done,
then mounted again, so nothing is cached):
  truncated   to 0, 1, 7, 15, 16, 17, bs-1, bs, bs+1, bs+15, bs+16,
              2*bs+5, size-1: stat and read give exactly the new size;
              the whole units before the (new) final unit and the unit it
              steals from read back intact (docs/format.md 3-4: units are
              independent, there is no size field and no integrity: the
              rest is garbage for AES, the old prefix for null)
  extended    by 1 byte, by a unit of zeros, by 5000 random bytes: size and
              intact units as above
  swapped     two files' headers exchanged: each reads as garbage of the
              right size for AES (a header is not bound to its file, so a
              swap within a volume cannot be detected: docs/format.md 1-2,
              8), as the old contents for null (no key)
  tiny_iv     the unauthenticated tiny IV changed: a 9-byte file reads 9
              bytes of garbage (AES), a large file is unaffected
  foreign     a header from another volume, a header of 0, 1, one byte
              short, one byte long and 4000 bytes, random bytes of the
              right size, an unknown version (3), the other known version
              (1 <-> 2, at that version's size), a changed flag byte,
              an emptied (headerless) file of size 0 adopted: EIO on open for
              read and for write, on truncate, each with a log line naming
              the file by its path in the mount; the backing bytes and
              header untouched
  replaced    by a directory (EISDIR), a fifo (a kernel fifo: O_NONBLOCK
              read open works, write open ENXIO), a symlink to itself and a
              two-link loop (ELOOP), a symlink to another file (follows it)
online (the daemon holds the files open or cached):
  a file truncated, another extended, one replaced by a directory, one
  whose header is replaced, while the mount has them cached; then reads and
  writes through the mount: EIO or data, never a crash or a hang; chattr +i
  and +a on backing files: reads work, writes and truncates give EPERM and
  change nothing; a backing directory removed: ENOENT; a file extended to
  1 TiB: its end reads short or EIO, its whole units intact; the
  config replaced by garbage, by another volume's, by a fifo, a directory
  and a symlink: the running mount keeps working (its key is in memory), a
  new mount is refused at once with exit 13 (12 for the other volume's:
  wrong key), the restored config mounts again.
race (100 rounds of 21 calls per thread; 1000 with SC_REL_FULL=1): two
  threads per file read, write and truncate three files through the mount
  while a vandal truncates, overwrites and re-headers their backing files
  until they are done: every call returns data or EIO; a fourth file read
  in a loop meanwhile always reads right.
No verdict depends on timing or load: waits for a mount, an unmount or a
refused mount have no deadline (one of the outcomes waited for always comes;
a hang is mount_lib.op's or meson's to report), and the race is a fixed amount
of work, not a time.
Always: control files stay intact, no plaintext marker ever appears in the
backing directory (AES), the daemon is alive, and after a clean unmount
its log has no sanitizer or crash line.
"""
import errno
import os
import re
import shutil
import stat
import subprocess
import sys
import random
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from mount_lib import (FULL, STATS, URING_OPTS, check, daemon_alive, daemon_pid, fail, fmt, note, op,  # noqa: E402
                     daemon_log, pattern, pread_file, pwrite_file, read_file, remount, sanitizer_lines, stat_size,
                     summary, unmount, want_err, want_ok, write_file, grep_backing, lstat_mode)

MNT = os.environ["MNT"]
BACKING = os.environ["BACKING"]
CONFIG = os.environ["CONFIG"]
KEYFILE = os.environ["KEYFILE"]
SC_BIN = os.environ["SC_BIN"]
BS = int(os.environ.get("SC_BLOCK_SIZE", "4096"))
AES = CONFIG.startswith("aes-")
HDR = "user.stackcrypt"
MARKER = b"SC-HOSTILE-MARKER-9d2a"
S0 = 3 * BS + 100


def mp(n):
    return os.path.join(MNT, n)


def bp(n):
    return os.path.join(BACKING, n)


def content(name, n=S0):
    body = pattern(n, name)
    return (MARKER + body)[:n] if n > len(MARKER) else body


def make(name, n=S0):
    write_file(mp(name), content(name, n))
    STATS["bytes"] += n


def intact_prefix(n):
    """Plaintext bytes of a file cut/extended to n that must still decrypt:
    the whole units before the final one and before the unit the final one
    steals from (docs/format.md section 4)."""
    if n <= 15:
        return 0
    last = (n - 1) // BS * BS
    return last if n - last >= 16 else max(last - BS, 0)


def log_names(name):
    """The daemon's lines naming name by its path in the mount (canonical)."""
    return [ln for ln in daemon_log() if f"{os.path.realpath(MNT)}/{name}:" in ln]


def backing_state(name):
    p = bp(name)
    with open(p, "rb") as f:
        data = f.read()
    try:
        h = os.getxattr(p, HDR)
    except OSError as e:
        h = e.errno
    return data, h


def other_volume_header(tmp):
    """A valid header made by another volume of the same cipher."""
    b2, m2, key2 = os.path.join(tmp, "b2"), os.path.join(tmp, "m2"), os.path.join(tmp, "key2")
    os.makedirs(b2)
    os.mkdir(m2)
    with open(key2, "w") as f:
        f.write(os.urandom(32).hex())
    os.chmod(key2, 0o600)
    subprocess.run([SC_BIN, "init", f"--cipher={CONFIG}", f"--block-size={BS}", "--plaintext-names",
                    f"--keyfile={key2}", b2], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    # In the foreground, so that we can wait for it to exit.
    d = subprocess.Popen([SC_BIN, "mount", "-f", *URING_OPTS, f"--keyfile={key2}", b2, m2])
    try:
        check(mounted_or_exited(d, m2), "the second volume did not mount")
        write_file(os.path.join(m2, "f"), b"x" * 1000)
    finally:
        subprocess.run(["fusermount3", "-u", m2])
        if os.path.ismount(m2):		# -u refused: do not wait for ever
            d.kill()
        d.wait()
    return os.getxattr(os.path.join(b2, "f"), HDR), os.path.join(b2, ".stackcrypt.conf"), key2


def mounted_or_exited(proc, mnt):
    """Waits, with no deadline, until mnt is a mount point (True) or proc
    has exited without mounting it (False): a mount command does one or
    the other, however long a loaded machine makes it take."""
    while not os.path.ismount(mnt):
        if proc.poll() is not None:
            return os.path.ismount(mnt)
        time.sleep(0.02)
    return True


def offline(tmp):
    trunc = [0, 1, 7, 15, 16, 17, BS - 1, BS, BS + 1, BS + 15, BS + 16, 2 * BS + 5, S0 - 1]
    ext = {"ext-1": S0 + 1, "ext-unit": S0 + BS, "ext-garbage": S0 + 5000}
    bad_hdr = ["foreign", "h0", "h1", "hshort", "hlong", "h4000", "hrand", "hv3", "hvother",
               "hflags", "headerless"]
    for i in range(4):
        make(f"good{i}", S0 + i * 1000)
    for n in trunc:
        make(f"tr-{n}")
    for name in ext:
        make(name)
    for name in ("sw-a", "sw-b", "big-iv") + tuple(bad_hdr):
        make(name)
    make("tiny-iv", 9)
    for name in ("rep-dir", "rep-fifo", "rep-loop", "rep-loop2", "rep-link"):
        make(name)
    foreign_hdr, _, _ = other_volume_header(tmp)
    os.sync()
    unmount()
    # ---- the damage, with no daemon running ----
    for n in trunc:
        os.truncate(bp(f"tr-{n}"), n)
    os.truncate(bp("ext-1"), ext["ext-1"])
    os.truncate(bp("ext-unit"), ext["ext-unit"])
    with open(bp("ext-garbage"), "ab") as f:
        f.write(os.urandom(5000))
    ha, hb = os.getxattr(bp("sw-a"), HDR), os.getxattr(bp("sw-b"), HDR)
    os.setxattr(bp("sw-a"), HDR, hb)
    os.setxattr(bp("sw-b"), HDR, ha)
    for name in ("tiny-iv", "big-iv"):
        h = bytearray(os.getxattr(bp(name), HDR))
        h[-16:] = os.urandom(16)	# the tiny IV ends every header version
        os.setxattr(bp(name), HDR, bytes(h))
    good_hdr = os.getxattr(bp("hv3"), HDR)
    hl = len(good_hdr)
    check(hl == {1: 72, 2: 56}.get(good_hdr[0]), f"header of version {good_hdr[0]}: {hl} bytes")
    os.setxattr(bp("foreign"), HDR, foreign_hdr)
    os.setxattr(bp("h0"), HDR, b"")
    os.setxattr(bp("h1"), HDR, good_hdr[:1])
    os.setxattr(bp("hshort"), HDR, good_hdr[:hl - 1])
    os.setxattr(bp("hlong"), HDR, good_hdr + b"\0")
    os.setxattr(bp("h4000"), HDR, good_hdr + os.urandom(4000 - hl))
    os.setxattr(bp("hrand"), HDR, good_hdr[:1] + os.urandom(hl - 1))
    os.setxattr(bp("hv3"), HDR, b"\x03" + good_hdr[1:])
    # the other version's byte and size, the same fields: the MAC covers the version
    other = 3 - good_hdr[0]
    os.setxattr(bp("hvother"), HDR, bytes([other]) + good_hdr[1:{1: 72, 2: 56}[other]] +
                bytes(max(0, {1: 72, 2: 56}[other] - hl)))
    h = bytearray(os.getxattr(bp("hflags"), HDR))
    h[3] = 1
    os.setxattr(bp("hflags"), HDR, bytes(h))
    os.removexattr(bp("headerless"), HDR)
    os.unlink(bp("rep-dir"))
    os.mkdir(bp("rep-dir"))
    with open(bp("rep-dir/inner"), "wb") as f:
        f.write(b"")
    os.unlink(bp("rep-fifo"))
    os.mkfifo(bp("rep-fifo"), 0o644)
    os.unlink(bp("rep-loop"))
    os.symlink("rep-loop", bp("rep-loop"))
    os.unlink(bp("rep-loop2"))
    os.symlink("rep-loop2b", bp("rep-loop2"))
    os.symlink("rep-loop2", bp("rep-loop2b"))
    os.unlink(bp("rep-link"))
    os.symlink("good1", bp("rep-link"))
    before = {n: backing_state(n) for n in bad_hdr}
    STATS["faults"] += len(trunc) + len(ext) + 2 + 2 + len(bad_hdr) + 5
    r = subprocess.run([os.environ["SC_REMOUNT"]])
    check(r.returncode == 0, "mount after the offline damage failed")
    # ---- what the mount shows ----
    for n in trunc:
        name = f"tr-{n}"
        check(want_ok(op(stat_size, mp(name)), f"stat {name}") == n, f"{name}: st_size")
        got = want_ok(op(read_file, mp(name)), f"read {name} (truncated to {n})")
        check(len(got) == n, f"{name}: read {len(got)} bytes, want {n}")
        k = intact_prefix(n)
        check(got[:k] == content(name)[:k], f"{name}: the intact units [0,{k}) differ")
        if not AES:
            check(got == content(name)[:n], f"{name}: null cipher, not the old prefix")
    for name, n in ext.items():
        check(want_ok(op(stat_size, mp(name)), f"stat {name}") == n, f"{name}: st_size")
        got = want_ok(op(read_file, mp(name)), f"read {name} (extended to {n})")
        check(len(got) == n, f"{name}: read {len(got)} bytes, want {n}")
        k = intact_prefix(S0)
        check(got[:k] == content(name)[:k], f"{name}: the intact units [0,{k}) differ")
    for name in ("sw-a", "sw-b"):
        got = want_ok(op(read_file, mp(name)), f"read {name} (header swapped)")
        check(len(got) == S0, f"{name}: {len(got)} bytes")
        if AES:
            check(got != content(name), f"{name}: the swapped header still decrypts it")
        else:
            check(got == content(name), f"{name}: null cipher changed by a header swap")
    got = want_ok(op(read_file, mp("tiny-iv")), "read tiny-iv")
    check(len(got) == 9 and (got != content("tiny-iv", 9) or not AES), f"tiny-iv: {got!r}")
    check(want_ok(op(read_file, mp("big-iv")), "read big-iv") == content("big-iv"),
          "a changed tiny IV damaged a large file")
    for name in bad_hdr:
        want_err(op(read_file, mp(name)), {errno.EIO}, f"open {name} for read")
        want_err(op(write_file, mp(name), MARKER * 50), {errno.EIO}, f"open {name} for write")
        want_err(op(os.truncate, mp(name), 5), {errno.EIO}, f"truncate {name}")
        check(want_ok(op(stat_size, mp(name)), f"stat {name}") == S0, f"{name}: stat size")
        check(log_names(name), f"{name}: no log line naming {mp(name)}")
        check(backing_state(name) == before[name], f"{name}: the backing file was changed")
    # the types
    check(stat.S_ISDIR(want_ok(op(lstat_mode, mp("rep-dir")), "lstat rep-dir")), "rep-dir")
    want_err(op(read_file, mp("rep-dir")), {errno.EISDIR}, "read rep-dir")
    check(want_ok(op(os.listdir, mp("rep-dir")), "list rep-dir") == ["inner"], "rep-dir listing")
    check(stat.S_ISFIFO(want_ok(op(lstat_mode, mp("rep-fifo")), "lstat rep-fifo")), "rep-fifo")
    want_ok(op(fifo_open, mp("rep-fifo"), os.O_RDONLY | os.O_NONBLOCK), "open rep-fifo O_NONBLOCK")
    want_err(op(fifo_open, mp("rep-fifo"), os.O_WRONLY | os.O_NONBLOCK), {errno.ENXIO},
             "open rep-fifo for write, no reader")
    for name in ("rep-loop", "rep-loop2"):
        want_err(op(read_file, mp(name)), {errno.ELOOP}, f"read {name}")
        want_err(op(write_file, mp(name), b"x"), {errno.ELOOP}, f"write {name}")
    check(want_ok(op(read_file, mp("rep-link")), "read rep-link") == content("good1", S0 + 1000),
          "rep-link does not lead to good1")
    check(stat.S_ISFIFO(os.lstat(bp("rep-fifo")).st_mode), "the backing fifo was replaced")


def fifo_open(p, flags):
    os.close(os.open(p, flags))


def online(tmp):
    for name in ("on-tr", "on-ext", "on-dir", "on-hdr"):
        make(name)
        want_ok(op(read_file, mp(name)), f"read {name}")	# cached by kernel and daemon
    fd = os.open(mp("on-tr"), os.O_RDWR)		# held open while it shrinks
    try:
        os.truncate(bp("on-tr"), BS + 5)
        os.truncate(bp("on-ext"), S0 + 2 * BS + 3)
        os.unlink(bp("on-dir"))
        os.mkdir(bp("on-dir"))
        os.setxattr(bp("on-hdr"), HDR, b"\x01" + os.urandom(71))
        STATS["faults"] += 4
        # Mounted with attr_timeout=0,entry_timeout=0 (meson.build): the
        # kernel asks the daemon again at every access, no wait needed.
        for off in (0, BS, 2 * BS, 3 * BS):
            res = op(os.pread, fd, BS, off)
            if res[0] == "ok":
                k = intact_prefix(BS + 5)
                want = content("on-tr")[off:min(off + BS, k)]
                check(res[1][:len(want)] == want, f"on-tr: read at {off} of a shrunk file: wrong data")
            else:
                check(res[1] == errno.EIO, f"on-tr: read at {off}: {fmt(res)}, want data or EIO")
        res = op(os.pwrite, fd, MARKER * 20, 10)
        check(res[0] == "ok" or res[1] == errno.EIO, f"on-tr: write: {fmt(res)}")
    finally:
        os.close(fd)
    for name in ("on-tr", "on-ext"):
        res = op(read_file, mp(name))
        check(res[0] == "ok" or res[1] == errno.EIO, f"{name}: read: {fmt(res)}")
        if res[0] == "ok":
            k = intact_prefix(BS + 5 if name == "on-tr" else S0)
            check(res[1][:k] == content(name)[:k] or name == "on-tr",
                  f"{name}: intact units differ")
        res = op(append, mp(name), MARKER * 30)
        check(res[0] == "ok" or res[1] == errno.EIO, f"{name}: append: {fmt(res)}")
    res = op(read_file, mp("on-dir"))
    check(res[0] == "err" and res[1] in (errno.EISDIR, errno.EIO, errno.ESTALE, errno.ENOENT),
          f"on-dir: read after replacement by a directory: {fmt(res)}")
    res = op(read_file, mp("on-hdr"))
    check(res[0] == "err" and res[1] == errno.EIO or res[0] == "ok" and res[1] == content("on-hdr"),
          f"on-hdr: read with a header replaced under a cached key: {fmt(res)}")
    # Flags and removals with one right errno each.
    for name in ("on-imm", "on-app", "on-gone/f", "on-huge"):
        if "/" in name:
            os.mkdir(mp("on-gone"))
        make(name)
        want_ok(op(read_file, mp(name)), f"read {name}")
    subprocess.run(["chattr", "+i", bp("on-imm")], check=True)
    subprocess.run(["chattr", "+a", bp("on-app")], check=True)
    shutil.rmtree(bp("on-gone"))
    os.truncate(bp("on-huge"), 1 << 40)
    STATS["faults"] += 4
    try:
        for name in ("on-imm", "on-app"):
            check(want_ok(op(read_file, mp(name)), f"read {name}") == content(name),
                  f"{name}: contents")
            want_err(op(pwrite_file, mp(name), MARKER, 5), {errno.EPERM}, f"write {name} (chattr)")
            want_err(op(os.truncate, mp(name), 1), {errno.EPERM}, f"truncate {name} (chattr)")
            check(read_file(mp(name)) == content(name), f"{name} changed by refused writes")
    finally:
        subprocess.run(["chattr", "-i", bp("on-imm")])
        subprocess.run(["chattr", "-a", bp("on-app")])
    want_err(op(read_file, mp("on-gone/f")), {errno.ENOENT}, "read a file whose backing dir was removed")
    want_err(op(write_file, mp("on-gone/g"), b"x"), {errno.ENOENT}, "create in a removed backing dir")
    check(want_ok(op(stat_size, mp("on-huge")), "stat on-huge") == 1 << 40, "on-huge: size")
    res = op(pread_file, mp("on-huge"), 100, (1 << 40) - 50)
    check(res[0] == "ok" and len(res[1]) <= 50 or res[0] == "err" and res[1] == errno.EIO,
          f"on-huge: read at the end of a file extended to 1 TiB behind the mount: {fmt(res)}")
    # What the daemon still has cached decides whether it reads the old
    # size or the new: either way the whole units before the old final
    # one are intact (the final one is garbage once read as a whole unit).
    k = intact_prefix(S0)
    res = op(pread_file, mp("on-huge"), k, 0)
    check(res[0] == "ok" and res[1] == content("on-huge")[:k],
          f"on-huge: its first {k} bytes: {fmt(res)}")
    want_ok(op(os.unlink, mp("on-huge")), "unlink on-huge")	# not for grep to read 1 TiB
    daemon_alive("after the online damage")
    # ---- the config replaced while mounted ----
    _, other_conf, _ = other_volume_header(os.path.join(tmp, "again"))
    conf = bp(".stackcrypt.conf")
    saved = os.path.join(tmp, "conf.saved")
    shutil.copy2(conf, saved)
    m3 = os.path.join(tmp, "m3")
    os.mkdir(m3)
    # The volume is mounted: a second mount is refused (exit 10, "already
    # mounted at") before its config is read, whatever the config holds.
    kinds = (("garbage", 10), ("another volume's", 10), ("a fifo", 10), ("a directory", 10),
             ("a symlink to the real one", 10))
    for what, code in kinds:
        if os.path.isdir(conf) and not os.path.islink(conf):
            os.rmdir(conf)
        else:
            os.unlink(conf)
        if what == "garbage":
            with open(conf, "wb") as f:
                f.write(os.urandom(300))
        elif what == "another volume's":
            shutil.copy2(other_conf, conf)
        elif what == "a fifo":		# must not block a mount opening it
            os.mkfifo(conf, 0o600)
        elif what == "a directory":
            os.mkdir(conf)
        else:
            os.symlink(saved, conf)
        STATS["faults"] += 1
        check(want_ok(op(read_file, mp("good0")), f"read good0, config {what}")
              == content("good0", S0), f"good0 with the config replaced by {what}")
        name = f"new-after-{kinds.index((what, code))}"
        want_ok(op(write_file, mp(name), content(name)), f"create a file, config {what}")
        check(want_ok(op(read_file, mp(name)), f"read {name}") == content(name), f"{name} reads back")
        # -f: a refused mount exits at once; one that mounts stays (and is undone).
        d = subprocess.Popen([SC_BIN, "mount", "-f", *URING_OPTS, f"--keyfile={KEYFILE}", BACKING, m3],
                             stderr=subprocess.PIPE)
        if mounted_or_exited(d, m3):
            subprocess.run(["fusermount3", "-u", m3])
            d.communicate()
            fail(f"a new mount with the config replaced by {what} succeeded")
        _, err = d.communicate()
        check(d.returncode == code, f"a new mount with the config replaced by {what}: exit "
                                    f"{d.returncode}, want {code} ({err.decode().strip()!r})")
    os.unlink(conf)
    shutil.copy2(saved, conf + ".new")
    os.rename(conf + ".new", conf)


def race():
    """Readers and writers through the mount (2 threads per file) while a
    vandal truncates, overwrites and re-headers the same backing files.
    Allowed: data or EIO.  A control file nobody vandalizes, read in a
    loop meanwhile, must always read right.

    A fixed amount of work, not a time: each worker runs ROUNDS rounds, the
    vandal and the control reader go on until every worker is done (and
    each acts at least once), so a loaded machine makes the race slower,
    never emptier.  How the calls interleave is up to the scheduler, which
    is the point; no interleaving may give anything but data or EIO."""
    names = [f"race{i}" for i in range(3)]
    for n in names + ["race-ctl"]:
        make(n, 20 * BS + 123)
    rounds = 1000 if FULL else 100
    done = threading.Event()
    bad, counts = [], {"io": 0, "eio": 0, "rounds": 0, "vandal": 0, "ctl": 0}
    lock = threading.Lock()

    def worker(n, seed):
        rnd = random.Random(repr(seed))
        for _ in range(rounds):
            if bad:
                break
            try:
                fd = os.open(mp(n), os.O_RDWR)
                try:
                    for _ in range(20):
                        off = rnd.randrange(0, 25 * BS)
                        if rnd.random() < 0.3:
                            os.pwrite(fd, MARKER * rnd.randrange(1, 400), off)
                        else:
                            os.pread(fd, rnd.randrange(1, 70000), off)
                    if rnd.random() < 0.1:
                        os.ftruncate(fd, rnd.randrange(0, 25 * BS))
                finally:
                    os.close(fd)
                with lock:
                    counts["io"] += 21
            except OSError as e:
                with lock:
                    counts["eio"] += 1
                    if e.errno != errno.EIO:
                        bad.append(f"{n}: {e!r}")
            with lock:
                counts["rounds"] += 1

    def control():
        want = content("race-ctl", 20 * BS + 123)
        while not bad and not (done.is_set() and counts["ctl"]):
            try:
                if read_file(mp("race-ctl")) != want:
                    bad.append("race-ctl read wrong data during the race")
            except OSError as e:
                bad.append(f"race-ctl: {e!r}")
            counts["ctl"] += 1

    def vandal(seed):
        rnd = random.Random(seed)
        while not bad and not (done.is_set() and counts["vandal"]):
            p = bp(rnd.choice(names))
            r = rnd.random()
            try:
                if r < 0.4:
                    os.truncate(p, rnd.randrange(0, 25 * BS))
                elif r < 0.7:
                    with open(p, "r+b") as f:
                        f.seek(rnd.randrange(0, 20 * BS))
                        f.write(os.urandom(rnd.randrange(1, 5000)))
                else:
                    os.setxattr(p, HDR, os.urandom(rnd.choice([0, 1, 56, 72, 100])))
            except OSError as e:
                bad.append(f"vandal: {e!r}")
            counts["vandal"] += 1

    workers = [threading.Thread(target=worker, args=(n, (n, k))) for n in names for k in range(2)]
    others = [threading.Thread(target=control), threading.Thread(target=vandal, args=(1,))]
    for t in others + workers:
        t.start()
    for t in workers:
        t.join()
    done.set()
    for t in others:
        t.join()
    check(not bad, f"race: {bad[:3]}")
    check(counts["rounds"] == rounds * len(workers) and counts["ctl"] > 0 and counts["vandal"] > 0,
          f"race did not run in full: {counts}")
    STATS["ops"] += counts["io"] + counts["ctl"]
    STATS["errors_seen"] += counts["eio"]
    STATS["faults"] += counts["vandal"]
    daemon_alive("after the race")
    note(f"race: {counts}")


def append(p, data):
    with open(p, "ab") as f:
        f.write(data)


def main():
    if not CONFIG or CONFIG == "passthrough":
        fail("needs a crypt CONFIG (null, aes-xts, aes-cbc)")
    tmp = tempfile.mkdtemp(prefix="sc-hostile.")
    try:
        offline(os.path.join(tmp))
        online(tmp)
        race()
    finally:
        for d in ("m2", "again/m2", "m3"):
            p = os.path.join(tmp, d)
            if os.path.ismount(p):
                subprocess.run(["fusermount3", "-u", p])
        shutil.rmtree(tmp, ignore_errors=True)
    for i in range(4):
        check(want_ok(op(read_file, mp(f"good{i}")), f"read good{i}") == content(f"good{i}", S0 + i * 1000),
              f"control file good{i} damaged")
    for i in range(5):
        name = f"new-after-{i}"
        check(read_file(mp(name)) == content(name), f"{name} after the config was restored")
    daemon_alive("at the end")
    os.sync()
    if AES:
        hits = grep_backing(BACKING, MARKER)
        check(not hits, f"plaintext marker in the backing directory: {hits}")
    # A clean unmount (the remount checks the daemon's exit status) flushes
    # LeakSanitizer; then the log must hold no sanitizer or crash line.
    remount()
    for name in ("new-after-0", "new-after-4", "good0"):
        check(read_file(mp(name)).startswith(MARKER), f"{name} after remount")
    bad = sanitizer_lines()
    check(not bad, f"daemon log: {bad[:5]}")
    STATS["log_lines"] = sum(1 for ln in daemon_log() if re.search("error|EIO", ln, re.I))
    summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())
