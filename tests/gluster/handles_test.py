#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""handles_test.py - files stay reachable when GlusterFS drops its inodes.

Run by tests/gluster/harness.sh with -o max_path_fds=0,attr_timeout=0: were
the posix layer to trade a file's O_PATH fd for a file handle (its budget is
0), the handle would go stale (ESTALE) once the GlusterFS FUSE client's inode
leaves the kernel's cache, and the file would read as missing.  Each file is
held by an O_PATH fd on the mount (so the stackcrypt inode stays cached and
keeps whatever the posix layer gave it), the kernel's dentry and inode
caches are dropped (the GlusterFS inodes that nothing holds go), and then
every file is stat'ed, opened and read through the mount.
"""
import os
import sys

MNT = os.environ["MNT"]
N = 20


def main():
    d = os.path.join(MNT, "handles")
    os.mkdir(d)
    want = {}
    for i in range(N):
        p = os.path.join(d, "f%d" % i)
        data = (b"%d:" % i) * (100 + i)
        with open(p, "wb") as f:
            f.write(data)
        want[p] = data
    held = [os.open(p, os.O_PATH) for p in want]
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("2\n")
    bad = 0
    for fd, (p, data) in zip(held, want.items()):
        try:
            st = os.fstat(fd)
            with open(p, "rb") as f:
                got = f.read()
        except OSError as e:
            print("FAIL %s: %s" % (p, e))
            bad += 1
            continue
        if st.st_size != len(data) or got != data:
            print("FAIL %s: size %d, %d bytes read, want %d" % (p, st.st_size, len(got), len(data)))
            bad += 1
    for fd in held:
        os.close(fd)
    print("%d of %d files reachable after the caches were dropped" % (N - bad, N))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
