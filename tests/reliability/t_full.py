#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""t_full.py - the backing filesystem runs full, through the mount.

    SC_IMG_SIZE=64M harness.sh CONFIG ext4 -- t_full.py

On the harness's small loop image (an image larger than 64 MiB is first
filled to 48 MiB free with a ballast file beside the backing directory,
unless SC_REL_FULL=1), for each cycle (1; 3 with SC_REL_FULL=1):
 1. fills the filesystem through the mount with "keep" files of odd sizes,
    each written, fsynced and closed, their SHA-256 recorded, until less
    than 4 MiB is free;
 2. appends 65537-byte chunks to one file until a write fails: that error
    must be ENOSPC (never EIO), and the bytes the writes reported form the
    "reported prefix";
 3. while full: writing a new file, fallocate and a large xattr fail with
    ENOSPC or succeed -- never EIO -- and an in-place overwrite of a kept
    file either succeeds (and reads back) or fails with ENOSPC leaving each
    4 KiB unit old or new; the daemon answers;
 4. every kept file reads back intact, and the appended file's reported
    prefix too, before and after a remount (a clean unmount: the harness
    checks the daemon's exit status), so the data came from the disk;
 5. deletes half the kept files, syncs: writing (a fresh 4 MiB file,
    fsynced) works again and reads back; the rest stay intact.
The harness runs without --keep-going: the daemon must log no error line.
"""
import errno
import hashlib
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from mount_lib import (FULL, STATS, check, daemon_alive, errno_of, fmt, note, op, pattern,  # noqa: E402
                     read_file, remount, summary, want_ok, write_file)

MNT = os.environ["MNT"]
NOT_EIO = {errno.ENOSPC}
CHUNK = 65537
WRITEBACK = "writeback" in os.environ.get("SC_MOUNT_OPTS", "").split(",")


def free_bytes():
    st = os.statvfs(MNT)
    return st.f_bavail * st.f_frsize


def sha(b):
    return hashlib.sha256(b).hexdigest()


def append_until_full(path, seed):
    """Appends chunks until a write fails.  Returns (reported bytes, errno of
    the failure, errno of a final fsync).  With the writeback cache a
    write(2) only fills the page cache (FUSE reserves no space), so the
    failure shows at fsync: there every chunk is fsynced and only fsynced
    bytes count as reported."""
    data = pattern(CHUNK * 8, seed)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    done = 0
    try:
        while True:
            off = done % (CHUNK * 7)
            try:
                n = os.write(fd, data[off:off + CHUNK])
                if WRITEBACK:
                    os.fsync(fd)
            except OSError as e:
                err = e.errno
                break
            done += n
        fsync_err = errno_of(os.fsync, fd)
    finally:
        os.close(fd)
    return done, err, fsync_err


def appended_data(n, seed):
    data = pattern(CHUNK * 8, seed)
    out = bytearray()
    while len(out) < n:
        off = len(out) % (CHUNK * 7)
        out += data[off:off + CHUNK]
    return bytes(out[:n])


def overwrite(path, data):
    fd = os.open(path, os.O_WRONLY)
    try:
        n = os.pwrite(fd, data, 0)
        os.fsync(fd)
        return n
    finally:
        os.close(fd)


def falloc(path, n):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.posix_fallocate(fd, 0, n)
    finally:
        os.close(fd)


def set_big_xattr(path):
    os.setxattr(path, "user.big", b"x" * 3000)


def verify(kept, app, what):
    for name, digest in kept.items():
        got = want_ok(op(read_file, os.path.join(MNT, name)), f"{what}: read {name}")
        check(sha(got) == digest, f"{what}: {name} changed (size {len(got)})")
        STATS["bytes"] += len(got)
    path, reported, seed = app
    got = want_ok(op(read_file, path), f"{what}: read the appended file")
    # write(2) reports what it stored (a short count, then ENOSPC): the
    # size is exactly that, except with the writeback cache, where bytes
    # written but not fsynced may or may not have reached the disk.
    check(len(got) == reported or WRITEBACK and len(got) > reported,
          f"{what}: appended file has {len(got)} bytes, {reported} were reported written")
    check(got[:reported] == appended_data(reported, seed),
          f"{what}: the reported prefix ({reported} bytes) of the appended file differs")
    STATS["bytes"] += len(got)


def cycle(c):
    d = f"c{c}"
    os.mkdir(os.path.join(MNT, d))
    kept = {}
    i = 0
    # 1. fill with completed, fsynced files
    while free_bytes() > 4 << 20:
        name = f"{d}/keep{i}"
        n = (2 << 20) + i * 4097 + 13
        data = pattern(n, (c, i))
        res = op(write_file, os.path.join(MNT, name), data)
        if res[0] == "err":
            check(res[1] in NOT_EIO, f"filling: write {name}: {fmt(res)}, want ENOSPC")
            break
        kept[name] = sha(data)
        STATS["bytes"] += n
        i += 1
    note(f"cycle {c}: {len(kept)} files kept, {free_bytes()} bytes free")
    # 2. append until the disk is full
    app_path = os.path.join(MNT, d, "append")
    reported, err, fsync_err = want_ok(op(append_until_full, app_path, c), "append")
    check(err == errno.ENOSPC, f"append: the failing write gave {os.strerror(err)}, want ENOSPC")
    check(fsync_err in (0, errno.ENOSPC), f"append: fsync after ENOSPC gave {os.strerror(fsync_err)}")
    STATS["bytes"] += reported
    STATS["faults"] += 1
    note(f"cycle {c}: append stopped with ENOSPC after {reported} bytes")
    app = (app_path, reported, c)
    # 3. operations on a full disk
    res = op(write_file, os.path.join(MNT, d, "new"), pattern(1 << 20, "new"))
    check(res[0] == "err" and res[1] in NOT_EIO, f"write a new 1 MiB file when full: {fmt(res)}, want ENOSPC")
    res = op(falloc, os.path.join(MNT, d, "falloc"), 8 << 20)
    check(res[0] == "err" and res[1] in NOT_EIO, f"fallocate 8 MiB when full: {fmt(res)}, want ENOSPC")
    res = op(set_big_xattr, os.path.join(MNT, d))
    check(res[0] == "ok" or res[1] in NOT_EIO, f"3000-byte xattr when full: {fmt(res)}")
    res = op(os.mkdir, os.path.join(MNT, d, "dir-when-full"))
    check(res[0] == "ok" or res[1] in NOT_EIO, f"mkdir when full: {fmt(res)}")
    if kept:
        victim = sorted(kept)[0]
        old = read_file(os.path.join(MNT, victim))
        new = pattern(len(old), ("over", c))
        res = op(overwrite, os.path.join(MNT, victim), new)
        check(res[0] == "ok" or res[1] in NOT_EIO, f"in-place overwrite when full: {fmt(res)}")
        got = read_file(os.path.join(MNT, victim))
        check(len(got) == len(old), "in-place overwrite changed the size")
        if res[0] == "ok":
            check(got == new, "in-place overwrite reported success but reads back wrong")
        else:
            for u in range(0, len(old), 4096):
                check(got[u:u + 4096] in (old[u:u + 4096], new[u:u + 4096]),
                      f"failed overwrite left unit {u // 4096} neither old nor new")
        kept[victim] = sha(got)
    daemon_alive("when full")
    # 4. everything completed is intact, from the disk too
    verify(kept, app, "when full")
    remount()
    verify(kept, app, "after remount")
    # 5. free space, write again
    for name in sorted(kept)[::2]:
        os.unlink(os.path.join(MNT, name))
        del kept[name]
    os.sync()
    data = pattern(4 << 20, ("again", c))
    want_ok(op(write_file, os.path.join(MNT, d, "again"), data), "write 4 MiB after freeing space")
    check(read_file(os.path.join(MNT, d, "again")) == data, "the file written after freeing differs")
    STATS["bytes"] += len(data)
    verify(kept, app, "after freeing")
    # leave room for the next cycle
    for name in list(kept):
        os.unlink(os.path.join(MNT, name))
    for name in ("again", "append"):
        os.unlink(os.path.join(MNT, d, name))
    os.sync()


def ballast():
    """Short form on a big image (XFS cannot be smaller than 300 MB): fill
    all but 48 MiB with one preallocated file in REF (a plain directory on
    the same filesystem), so the mount fills only the rest."""
    free = free_bytes()
    if FULL or free <= 64 << 20:
        return
    fd = os.open(os.path.join(os.environ["REF"], "ballast"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.posix_fallocate(fd, 0, free - (48 << 20))
    finally:
        os.close(fd)
    note(f"ballast: {free - (48 << 20)} bytes preallocated beside the backing dir")


def main():
    cycles = 3 if FULL else 1
    ballast()
    for c in range(cycles):
        cycle(c)
    summary(f"cycles={cycles} image_free_after={free_bytes()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
