#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""links.py - the symlinks t_links.sh makes through a mount with encrypted
names and bound targets, and the checks on them.

  links.py make MNT     symlinks of 1, 3008 (the longest kept in the backing
                        link), 3009, 3024, 3025 and 4095 bytes, read back
                        at once; a 4096-byte target refused (ENAMETOOLONG)
  links.py move MNT     renames: across directories (short and long), in
                        one directory (owner and mtime kept: root only),
                        RENAME_NOREPLACE, RENAME_EXCHANGE of
                        a long and a short link across directories, a long
                        link over a long one, a file over a long link;
                        link(2) of a symlink (a copy)
  links.py verify MNT [PATH...]
                        every link of the tree after move reads its target
                        (and lstat gives its length), the listings hold
                        exactly the tree and the PATHs (no side file shows)
  links.py long         how many links of the tree after move are long (the
                        backing must hold as many side files)

Targets are a function of their length (no randomness): every run builds
the same tree.  Exits 0 if all holds, 1 with one line per problem.
"""
import ctypes
import errno
import os
import sys

LENS = (1, 3008, 3009, 3024, 3025, 4095)
INLINE_MAX = 3008       # longest target stored in the backing link itself
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2


def target(n, salt=b""):
    """A target of n bytes: path components of 99 bytes, '/' between them."""
    body = (salt + b"abcdefghijklmnopqrstuvwxyz0123456789" * 3)[:99] + b"/"
    return (body * (n // 100 + 1))[:n]


def renameat2(mnt, a, b, flags):
    libc = ctypes.CDLL(None, use_errno=True)
    r = libc.renameat2(-100, os.path.join(mnt, a), -100, os.path.join(mnt, b), flags)
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), a)


# After move: path -> target
AFTER = {
    b"d/m4095": target(4095),           # long, across directories
    b"d/m3009": target(3009),           # exchanged: the long one came here
    b"l3009": target(1),                # ... and the short one went there
    b"l3024b": target(3024),            # long, in one directory
    b"e/m3008": target(3008),           # the longest inline, across directories
    b"d/n3025": target(3025),           # RENAME_NOREPLACE
    b"e/victim": target(4000, b"v"),    # a long link renamed over a long link
    b"e/copy4095": target(4095),        # link(2) of a symlink: a copy
}
DIRS = {b"": {b"d", b"e", b"l3009", b"l3024b", b"f"},
        b"d": {b"m4095", b"m3009", b"n3025"},
        b"e": {b"m3008", b"victim", b"copy4095"}}


def make(mnt):
    bad = []
    for n in LENS:
        p = os.path.join(mnt, b"l%d" % n)
        os.symlink(target(n), p)
        if os.readlink(p) != target(n):
            bad.append("l%d: reads another target" % n)
        if os.lstat(p).st_size != n:
            bad.append("l%d: lstat size %d" % (n, os.lstat(p).st_size))
    try:
        os.symlink(target(4096), os.path.join(mnt, b"toolong"))
        bad.append("a 4096-byte target was accepted")
    except OSError as e:
        if e.errno != errno.ENAMETOOLONG:
            bad.append("4096-byte target: %s, want ENAMETOOLONG" % e.strerror)
    os.mkdir(os.path.join(mnt, b"d"))
    os.mkdir(os.path.join(mnt, b"e"))
    return report("make", bad)


def move(mnt):
    j = lambda p: os.path.join(mnt, p)
    bad = []
    os.rename(j(b"l4095"), j(b"d/m4095"))
    os.rename(j(b"l1"), j(b"d/m3009"))
    os.utime(j(b"l3024"), (1000000000, 1000000000), follow_symlinks=False)
    os.lchown(j(b"l3024"), 7, 8)
    os.rename(j(b"l3024"), j(b"l3024b"))
    st = os.lstat(j(b"l3024b"))
    if (st.st_mtime, st.st_uid, st.st_gid) != (1000000000, 7, 8):
        bad.append("a rebound link lost its mtime or owner: %s %d:%d"
                   % (st.st_mtime, st.st_uid, st.st_gid))
    os.rename(j(b"l3008"), j(b"e/m3008"))
    renameat2(mnt, b"l3025", b"d/n3025", RENAME_NOREPLACE)
    try:
        renameat2(mnt, b"d/n3025", b"d/m4095", RENAME_NOREPLACE)
        bad.append("RENAME_NOREPLACE replaced a link")
    except OSError as e:
        if e.errno != errno.EEXIST:
            bad.append("RENAME_NOREPLACE: %s, want EEXIST" % e.strerror)
    renameat2(mnt, b"l3009", b"d/m3009", RENAME_EXCHANGE)   # long <-> short
    os.symlink(target(4000, b"v"), j(b"e/vsrc"))
    os.symlink(target(3500, b"w"), j(b"e/victim"))
    os.rename(j(b"e/vsrc"), j(b"e/victim"))                 # long over long
    os.symlink(target(3900, b"f"), j(b"f"))
    with open(j(b"file"), "wb") as fh:
        fh.write(b"a regular file")
    os.rename(j(b"file"), j(b"f"))                          # a file over a long link
    os.remove(j(b"f"))
    with open(j(b"f"), "wb") as fh:
        fh.write(b"f")
    os.link(j(b"d/m4095"), j(b"e/copy4095"), follow_symlinks=False)
    if os.readlink(j(b"e/copy4095")) != target(4095):
        bad.append("the link(2) copy reads another target")
    return report("move", bad + check(mnt))


def check(mnt, extra=()):
    bad = []
    dirs = {d: set(names) for d, names in DIRS.items()}
    for p in extra:
        d, _, n = p.rpartition(b"/")
        dirs[d].add(n)
    for p, t in AFTER.items():
        q = os.path.join(mnt, p)
        try:
            if os.readlink(q) != t:
                bad.append("%s: reads another target" % p.decode())
            elif os.lstat(q).st_size != len(t):
                bad.append("%s: lstat size %d, want %d" % (p.decode(), os.lstat(q).st_size,
                                                           len(t)))
        except OSError as e:
            bad.append("%s: %s" % (p.decode(), e.strerror))
    st = os.lstat(os.path.join(mnt, b"l3024b"))
    if (st.st_mtime, st.st_uid, st.st_gid) != (1000000000, 7, 8):
        bad.append("l3024b, rebound: mtime %s owner %d:%d, want 1000000000 7:8"
                   % (st.st_mtime, st.st_uid, st.st_gid))
    for d, want in dirs.items():
        got = set(os.listdir(os.path.join(mnt, d) if d else mnt))
        if got != want:
            bad.append("listing of /%s: %s, want %s" % (d.decode(), sorted(got), sorted(want)))
    return bad


def verify(mnt, extra=()):
    return report("verify", check(mnt, extra))


def long():
    print(sum(len(t) > INLINE_MAX for t in AFTER.values()))
    return 0


def report(what, bad):
    for b in bad:
        print("links %s: %s" % (what, b))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "long":
        sys.exit(long())
    if sys.argv[1] == "verify":
        sys.exit(verify(os.fsencode(sys.argv[2]), [os.fsencode(a) for a in sys.argv[3:]]))
    sys.exit(globals()[sys.argv[1]](os.fsencode(sys.argv[2])))
