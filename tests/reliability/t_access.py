#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""t_access.py - permission checks of a shared mount, as another user.

    harness.sh CONFIG FSTYPE -- t_access.py            (mount with allow_other)
    SC_MOUNT_OPTS= harness.sh CONFIG tmp -- t_access.py noallow

Root makes the objects; uid/gid 65534 with no supplementary groups (or with
group 100 where said) tries each access in a forked child (setresuid, the
same as `setpriv --reuid=65534 --regid=65534 --clear-groups`).  Absolute
results are asserted (tests/mount/battery compares with a plain directory
instead), plus what only a stacked, encrypted mount can get wrong: the new
file's owner in the *backing* directory, its contents encrypted there, the
header xattr out of reach of an unprivileged owner, permissions surviving a
remount.  `noallow`: without allow_other another user cannot even stat the
mount root (EACCES).
"""
import errno
import os
import stat
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from mount_lib import (backing_of, check, fail, grep_backing, op, pattern, read_file, remount,  # noqa: E402
                     summary, want_err, want_ok, write_file)

MNT = os.environ["MNT"]
BACKING = os.environ["BACKING"]
CONFIG = os.environ["CONFIG"]
CRYPT = CONFIG != "passthrough"
AES = CONFIG.startswith("aes-")
U = 65534
MARKER = b"SC-ACCESS-MARKER-5b1e"


def m(*p):
    return os.path.join(MNT, "acc", *p)


def b(*p):
    """The backing file of m(*p), by inode (names may be encrypted)."""
    return backing_of(m(*p))


def setup():
    os.mkdir(m())
    os.chmod(m(), 0o755)
    write_file(m("secret"), MARKER * 10, 0o600)
    os.chmod(m("secret"), 0o600)
    write_file(m("public"), pattern(5000, 1), 0o644)
    os.chmod(m("public"), 0o644)
    write_file(m("grp"), pattern(300, 2), 0o640)
    os.chown(m("grp"), 0, 100)
    os.chmod(m("grp"), 0o640)
    os.mkdir(m("ro"))
    os.chmod(m("ro"), 0o755)
    os.mkdir(m("tmp"))
    os.chmod(m("tmp"), 0o1777)
    write_file(m("tmp", "rootfile"), b"root's", 0o666)
    os.mkdir(m("private"))
    os.chmod(m("private"), 0o700)
    write_file(m("private", "f"), b"hidden", 0o644)


def mkfifo(p):
    os.mkfifo(p, 0o644)


def chmod(p, mode):
    os.chmod(p, mode)


def chown(p, u, g):
    os.chown(p, u, g)


def utime_explicit(p):
    os.utime(p, (1, 2))


def truncate(p):
    os.truncate(p, 0)


def open_flags(p, flags):
    os.close(os.open(p, flags, 0o644))


def create_write(p, data):
    return write_file(p, data, 0o644)


def setxattr(p, name, value):
    os.setxattr(p, name, value)


def getxattr(p, name):
    return os.getxattr(p, name)


def removexattr(p, name):
    os.removexattr(p, name)


def stat_ids(p):
    st = os.stat(p)
    return (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode))


def as_user():
    def u(fn, *args, groups=()):
        return op(fn, *args, uid=U, groups=groups)

    # Reading and writing other people's files.
    want_err(u(read_file, m("secret")), {errno.EACCES}, "read 0600 root file")
    want_err(u(open_flags, m("secret"), os.O_WRONLY), {errno.EACCES}, "open 0600 root file for write")
    check(want_ok(u(read_file, m("public")), "read 0644 file") == pattern(5000, 1),
          "0644 file: wrong contents for uid 65534")
    want_err(u(open_flags, m("public"), os.O_WRONLY), {errno.EACCES}, "open 0644 root file for write")
    want_err(u(truncate, m("public")), {errno.EACCES}, "truncate 0644 root file")
    want_err(u(read_file, m("grp")), {errno.EACCES}, "read 0640 root:100 file without group 100")
    check(want_ok(u(read_file, m("grp"), groups=(100,)), "read 0640 root:100 file in group 100")
          == pattern(300, 2), "group-readable file: wrong contents")
    # Writing into a directory without permission.
    for what, fn, args in (("create", open_flags, (m("ro", "x"), os.O_CREAT | os.O_WRONLY)),
                           ("mkdir", os.mkdir, (m("ro", "d"),)),
                           ("mkfifo", mkfifo, (m("ro", "p"),)),
                           ("symlink", os.symlink, ("x", m("ro", "l"))),
                           ("rename out of it", os.rename, (m("public"), m("tmp", "p2"))),
                           ("unlink", os.unlink, (m("public"),))):
        want_err(u(fn, *args), {errno.EACCES}, f"{what} in a 0755 root dir")
    # protected_hardlinks may refuse before the directory check does.
    want_err(u(os.link, m("public"), m("ro", "h")), {errno.EACCES, errno.EPERM},
             "link in a 0755 root dir")
    # A 0700 directory.
    want_err(u(os.listdir, m("private")), {errno.EACCES}, "list a 0700 root dir")
    want_err(u(os.stat, m("private", "f")), {errno.EACCES}, "lookup in a 0700 root dir")
    # Metadata of other people's files.
    want_err(u(chmod, m("public"), 0o666), {errno.EPERM}, "chmod by a non-owner")
    want_err(u(chown, m("public"), U, U), {errno.EPERM}, "chown by a non-owner")
    want_err(u(utime_explicit, m("public")), {errno.EPERM}, "explicit utimes by a non-owner")
    want_err(u(setxattr, m("public"), "user.x", b"1"), {errno.EPERM, errno.EACCES},
             "setxattr on a root 0644 file")
    # The sticky directory.
    want_err(u(os.unlink, m("tmp", "rootfile")), {errno.EPERM, errno.EACCES},
             "unlink root's file in a 1777 dir")
    want_err(u(os.rename, m("tmp", "rootfile"), m("tmp", "r2")), {errno.EPERM, errno.EACCES},
             "rename root's file in a 1777 dir")
    # What the user may do: create in the 1777 dir, owned by the user on both sides.
    data = MARKER * 300 + pattern(777, 3)
    check(want_ok(u(create_write, m("tmp", "mine"), data), "create in a 1777 dir") == len(data),
          "short write")
    want_ok(u(os.mkdir, m("tmp", "mydir")), "mkdir in a 1777 dir")
    ids = want_ok(u(stat_ids, m("tmp", "mine")), "stat own file")
    check(ids[:2] == (U, U), f"new file owned by {ids[:2]} in the mount, want {U}:{U}")
    bst = os.lstat(b("tmp", "mine"))
    check((bst.st_uid, bst.st_gid) == (U, U),
          f"new file owned by {bst.st_uid}:{bst.st_gid} in the backing dir, want {U}:{U}")
    bst = os.lstat(b("tmp", "mydir"))
    check((bst.st_uid, bst.st_gid) == (U, U), "new dir's backing owner")
    check(os.stat(b("tmp", "mine")).st_size == len(data), "backing size != plaintext size")
    check(read_file(m("tmp", "mine")) == data, "root reads the user's file wrongly")
    want_ok(u(chmod, m("tmp", "mine"), 0o600), "chmod own file")
    check(stat.S_IMODE(os.lstat(b("tmp", "mine")).st_mode) == 0o600, "chmod not on the backing file")
    if CRYPT:
        # The header is the crypt layer's, not the file owner's: the owner
        # reads none, and the name set from above is stored escaped
        # (docs/format.md, "Extended attribute names"), never the header.
        want_err(u(getxattr, m("tmp", "mine"), "user.stackcrypt"), {errno.ENODATA},
                 "owner reads the header xattr")
        h0 = os.getxattr(b("tmp", "mine"), "user.stackcrypt")
        want_ok(u(setxattr, m("tmp", "mine"), "user.stackcrypt", b"\0" * 72),
                "owner sets the header name (escaped)")
        check(os.getxattr(b("tmp", "mine"), "user.stackcrypt!") == b"\0" * 72,
              "the owner's user.stackcrypt is not stored as user.stackcrypt!")
        want_ok(u(removexattr, m("tmp", "mine"), "user.stackcrypt"), "owner removes it")
        h = os.getxattr(b("tmp", "mine"), "user.stackcrypt")
        check(h == h0, "the owner changed the file's header through the mount")
        check(len(h) == {1: 72, 2: 56}.get(h[0]),
              "the user's file has no header of a known version in the backing dir")
        want_err(u(os.stat, os.path.join(MNT, ".stackcrypt.conf")), {errno.ENOENT},
                 "the config seen by another user")
    want_ok(u(setxattr, m("tmp", "mine"), "user.own", b"v"), "owner sets a user xattr")
    if AES:
        hits = grep_backing(BACKING, MARKER)
        check(not hits, f"plaintext marker in the backing dir: {hits}")
    # It all holds after a remount (it lives in the backing dir, not the daemon).
    remount()
    want_err(u(read_file, m("secret")), {errno.EACCES}, "read 0600 root file after remount")
    check(want_ok(u(read_file, m("tmp", "mine")), "read own file after remount") == data,
          "own file contents after remount")
    ids = want_ok(u(stat_ids, m("tmp", "mine")), "stat own file after remount")
    check(ids == (U, U, 0o600), f"own file after remount: {ids}")
    want_err(op(read_file, m("tmp", "mine"), uid=1000), {errno.EACCES},
             "a third user reads the 0600 file of uid 65534")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "noallow":
        want_err(op(os.stat, MNT, uid=U), {errno.EACCES}, "stat of a mount without allow_other")
        want_ok(op(os.stat, MNT), "stat of the mount as root")
        summary("mode=noallow")
        return 0
    if len(sys.argv) > 1:
        fail(f"usage: t_access.py [noallow], not {sys.argv[1:]}")
    setup()
    as_user()
    summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())
