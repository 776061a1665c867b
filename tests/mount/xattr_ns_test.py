#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# xattr_ns_test.py - the mount serves the user.* and trusted.* xattr
# namespaces only (fs/fuse/xattr_ns.c).  Run under harness.sh on a stack
# whose backing names are the plaintext names (no --encrypt-names):
#
#   harness.sh aes-xts ext4 -- xattr_ns_test.py
#
# Checks, through the mount:
#   - set, get and remove of security.x, system.posix_acl_access (a valid
#     ACL), system.posix_acl_default on a directory, XFS's names of the
#     ACLs (trusted.SGI_ACL_FILE) and an unknown prefix fail with
#     EOPNOTSUPP; user.u and trusted.t are set, read back and
#     listed;
#   - names stored on the BACKING file directly (security.test, a
#     system.posix_acl_access ACL, on XFS listed below as
#     trusted.SGI_ACL_FILE) are neither listed nor readable, and stay on
#     the backing file;
#   - listxattr's size query equals the length of the list it returns, also
#     for a list longer than the daemon's on-stack buffer (2048 bytes);
#   - `ls -l` exits 0 and shows no ACL '+';
#   - the user.* values read back after a remount.
# SC_BACKING_ACL=0 says the backing has no POSIX ACLs (a GlusterFS volume's
# FUSE view without -o acl): the ACLs are then not set on the backing.
# Exits 0 if all hold, 1 with a FAIL line per broken property otherwise.

import ctypes
import errno
import os
import struct
import subprocess
import sys

failed = False


def fail(msg):
    global failed
    print("FAIL xattr_ns/" + msg, file=sys.stderr)
    failed = True


for var in ("MNT", "BACKING", "SC_REMOUNT"):
    if not os.environ.get(var):
        sys.exit("xattr_ns: $%s is not set; run me under harness.sh" % var)
MNT, BACKING, REMOUNT = os.environ["MNT"], os.environ["BACKING"], os.environ["SC_REMOUNT"]
BACKING_ACL = os.environ.get("SC_BACKING_ACL", "1") != "0"

# A POSIX ACL as the kernel takes it (linux/posix_acl_xattr.h): version 2,
# then (tag, perm, id) entries sorted by tag.  user::rw- user:65534:r--
# group::r-- mask::r-- other::---
ACL = struct.pack("<I", 2) + b"".join(
    struct.pack("<HHI", tag, perm, uid) for tag, perm, uid in
    ((0x01, 6, 0xFFFFFFFF), (0x02, 4, 65534), (0x04, 4, 0xFFFFFFFF),
     (0x10, 4, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)))

libc = ctypes.CDLL(None, use_errno=True)
libc.listxattr.restype = ctypes.c_ssize_t
libc.listxattr.argtypes = (ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)


def list_raw(path):
    """(size query, the list's bytes) by listxattr(2) itself."""
    want = libc.listxattr(path.encode(), None, 0)
    if want < 0:
        raise OSError(ctypes.get_errno(), "listxattr size query")
    buf = ctypes.create_string_buffer(max(want, 1))
    got = libc.listxattr(path.encode(), buf, want)
    if got < 0:
        raise OSError(ctypes.get_errno(), "listxattr")
    return want, buf.raw[:got]


def expect_enotsup(what, call):
    try:
        call()
    except OSError as e:
        if e.errno != errno.EOPNOTSUPP:
            fail("%s: %s, want EOPNOTSUPP" % (what, errno.errorcode.get(e.errno, e.errno)))
        return
    fail("%s: succeeded, want EOPNOTSUPP" % what)


f, d = os.path.join(MNT, "f"), os.path.join(MNT, "d")
with open(f, "w") as fp:
    fp.write("data\n")
os.mkdir(d)

# Unserved namespaces through the mount.
for name, value in (("security.x", b"x"), ("system.posix_acl_access", ACL),
                    ("trusted.SGI_ACL_FILE", ACL), ("foo.bar", b"x")):
    expect_enotsup("set " + name, lambda: os.setxattr(f, name, value))
    expect_enotsup("get " + name, lambda: os.getxattr(f, name))
    expect_enotsup("remove " + name, lambda: os.removexattr(f, name))
expect_enotsup("set dir system.posix_acl_default",
               lambda: os.setxattr(d, "system.posix_acl_default", ACL))

# Served ones.
os.setxattr(f, "user.u", b"uval")
os.setxattr(f, "trusted.t", b"tval")
long_names = ["user.long%02d.%s" % (i, "n" * 80) for i in range(26)]
for name in long_names:
    os.setxattr(f, name, b"v")
for name, want in (("user.u", b"uval"), ("trusted.t", b"tval")):
    got = os.getxattr(f, name)
    if got != want:
        fail("get %s: %r, want %r" % (name, got, want))

# Names stored below the mount, on the backing file.
bf, bd = os.path.join(BACKING, "f"), os.path.join(BACKING, "d")
below_names = ["security.test"]
os.setxattr(bf, "security.test", b"below")
if BACKING_ACL:
    below_names.append("system.posix_acl_access")
    os.setxattr(bf, "system.posix_acl_access", ACL)
    os.setxattr(bd, "system.posix_acl_default", ACL)
for name in below_names:
    expect_enotsup("get backing-set " + name, lambda: os.getxattr(f, name))

want_names = sorted(["user.u", "trusted.t"] + long_names)
for path, want in ((f, want_names), (d, [])):
    size, raw = list_raw(path)
    names = sorted(n.decode() for n in raw.split(b"\0")[:-1])
    if names != want:
        fail("list %s: %s, want %s" % (os.path.basename(path), names, want))
    if size != len(raw):
        fail("list %s: size query %d, list %d bytes" % (os.path.basename(path), size, len(raw)))
if len(b"".join(n.encode() + b"\0" for n in want_names)) <= 2048:
    fail("the list of f does not exceed the daemon's 2048-byte stack buffer")
for name in below_names:
    if name not in os.listxattr(bf):
        fail("backing %s gone from the backing file" % name)

ls = subprocess.run(["ls", "-ld", f, d], capture_output=True, text=True)
if ls.returncode != 0:
    fail("ls -l exit %d: %s" % (ls.returncode, ls.stderr.strip()))
for line in ls.stdout.splitlines():
    if line.split()[0].endswith("+"):
        fail("ls -l shows an ACL: " + line)

subprocess.run([REMOUNT], check=True)
for name, want in [("user.u", b"uval")] + [(n, b"v") for n in long_names[:2]]:
    got = os.getxattr(f, name)
    if got != want:
        fail("after remount, get %s: %r, want %r" % (name, got, want))

sys.exit(1 if failed else 0)
