#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""rename_test.py - RENAME_NOREPLACE through a mount over GlusterFS.

Run by tests/gluster/harness.sh.  GlusterFS's FUSE client refuses
RENAME_NOREPLACE (EINVAL); the posix layer falls back to link+unlink for
files and symlinks and to a check that the new name is free for directories
(fs/xlators/posix/posix.c).  Checked in the mount: each kind moves, keeps
its content, and leaves no old name; a taken new name gives EEXIST and both
objects stay as they were; RENAME_EXCHANGE gives the backing's answer
(EINVAL).  The mount battery compares with GlusterFS itself (REF), which
has no RENAME_NOREPLACE, so its rename_flags check cannot run there.
"""
import ctypes
import errno
import os
import sys

MNT = os.environ["MNT"]
libc = ctypes.CDLL(None, use_errno=True)
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
AT_FDCWD = -100
bad = 0


def rename2(a, b, flags):
    r = libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags)
    return 0 if r == 0 else ctypes.get_errno()


def check(label, ok):
    global bad
    print("%s %s" % ("ok  " if ok else "FAIL", label))
    bad += not ok


def main():
    d = os.path.join(MNT, "rn")
    os.mkdir(d)
    p = lambda n: os.path.join(d, n)
    with open(p("f"), "w") as f:
        f.write("file data")
    os.symlink("target", p("l"))
    os.mkdir(p("dir"))
    with open(p("dir/inner"), "w") as f:
        f.write("inner")
    os.mkdir(p("sub"))

    check("file moves", rename2(p("f"), p("sub/g"), RENAME_NOREPLACE) == 0)
    check("file content kept", open(p("sub/g")).read() == "file data")
    check("file old name gone", not os.path.lexists(p("f")))
    check("file has one link", os.stat(p("sub/g")).st_nlink == 1)
    check("symlink moves", rename2(p("l"), p("l2"), RENAME_NOREPLACE) == 0)
    check("symlink target kept", os.readlink(p("l2")) == "target")
    check("dir moves", rename2(p("dir"), p("sub/dir2"), RENAME_NOREPLACE) == 0)
    check("dir content kept", open(p("sub/dir2/inner")).read() == "inner")
    check("dir old name gone", not os.path.lexists(p("dir")))

    with open(p("a"), "w") as f:
        f.write("A")
    with open(p("b"), "w") as f:
        f.write("B")
    check("file onto file: EEXIST", rename2(p("a"), p("b"), RENAME_NOREPLACE) == errno.EEXIST)
    check("both files unchanged", open(p("a")).read() == "A" and open(p("b")).read() == "B")
    os.mkdir(p("d1"))
    os.mkdir(p("d2"))
    check("dir onto empty dir: EEXIST", rename2(p("d1"), p("d2"), RENAME_NOREPLACE) == errno.EEXIST)
    check("dir onto file: EEXIST", rename2(p("d1"), p("a"), RENAME_NOREPLACE) == errno.EEXIST)
    check("both dirs still there", os.path.isdir(p("d1")) and os.path.isdir(p("d2")))
    check("missing source: ENOENT", rename2(p("nope"), p("x"), RENAME_NOREPLACE) == errno.ENOENT)
    check("dir into itself: EINVAL", rename2(p("d1"), p("d1/in"), RENAME_NOREPLACE) == errno.EINVAL)
    check("nothing made inside", not os.path.lexists(p("d1/in")))
    check("exchange: EINVAL as GlusterFS", rename2(p("a"), p("b"), RENAME_EXCHANGE) == errno.EINVAL)
    check("listing", sorted(os.listdir(d)) == ["a", "b", "d1", "d2", "l2", "sub"])
    print("%d failed" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
