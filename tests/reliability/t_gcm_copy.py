#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""t_gcm_copy.py - copies of an aes-gcm backing tree without xattrs work.

    harness.sh aes-gcm ext4 -- t_gcm_copy.py     (SC_INIT_OPTS=--encrypt-names too)

Issue 17: an aes-gcm volume keeps each file's header inside the file, and
with encrypted names each directory's nonce in a file too: nothing it needs
is in an extended attribute (a directory's nonce file has a copy in one,
docs/format.md 9.2, which only stands in for a file a crash lost), so a
copy made by a tool that drops xattrs is a working copy.  A tree is made through the mount: files of 0,
1, bs-1, bs, bs+1 bytes and of several units, a sparse file (a hole of
whole units, written past, then extended by truncate), symlinks (relative,
absolute, dangling, to a directory), nested and empty directories.  Then,
with the daemon stopped, the backing directory is copied twice, with
`cp -r` and with `tar c | tar x`, neither given any xattr option; the
copies must hold no user.* xattr (so nothing of the volume can be in one),
`stackcrypt fsck` must find each clean, and each copy, mounted by a daemon
of our own (foreground, stopped by PID whatever happens), must show the
same tree: the same entries, every file's bytes and every symlink's target
identical to the source's.  The daemons' logs must have no line at all
besides the mount's own.
"""
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from mount_lib import (URING_OPTS, check, fail, note, op, pattern, remount, summary, unmount,  # noqa: E402
                       want_ok, write_file)

MNT = os.environ["MNT"]
BACKING = os.environ["BACKING"]
KEYFILE = os.environ["KEYFILE"]
SC_BIN = os.environ["SC_BIN"]
BS = int(os.environ.get("SC_BLOCK_SIZE", "4096"))
SCRATCH = os.path.dirname(BACKING)	# the harness's test filesystem


def make_tree(root):
    """The tree, written through the mount at root."""
    for d in ("d1", "d1/d2", "d1/d2/d3", "empty"):
        os.mkdir(os.path.join(root, d))
    for n in (0, 1, BS - 1, BS, BS + 1, 5 * BS + 123):
        write_file(os.path.join(root, f"f{n}"), pattern(n, ("copy", n)))
    write_file(os.path.join(root, "d1/d2/d3/deep"), pattern(3 * BS + 7, "deep"))
    write_file(os.path.join(root, "d1/mid"), pattern(BS * 2, "mid"))
    # sparse: data in units 0 and 4, units 1-3 never written, extended by truncate
    fd = os.open(os.path.join(root, "sparse"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, pattern(100, "s0"), 0)
        os.pwrite(fd, pattern(BS, "s4"), 4 * BS)
        os.ftruncate(fd, 9 * BS + 11)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.symlink("f1", os.path.join(root, "rel-link"))
    os.symlink("../../f4096", os.path.join(root, "d1/d2/up-link"))
    os.symlink("/nonexistent/target", os.path.join(root, "dangling"))
    os.symlink("d1/d2", os.path.join(root, "dir-link"))
    return True


def snapshot(root):
    """{relative path: ("dir",) | ("link", target) | ("file", size, sha256)}"""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir",)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", st.st_size, hashlib.sha256(f.read()).hexdigest())
    return out


def user_xattrs(root):
    """Every user.* xattr below root (root included), as (path, name)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for p in [dirpath] + [os.path.join(dirpath, n) for n in dirnames + filenames]:
            for x in os.listxattr(p, follow_symlinks=False):
                if x.startswith("user."):
                    found.append((p, x))
    return found


def mounted(mnt):
    mnt = os.path.realpath(mnt)
    with open("/proc/self/mountinfo") as f:
        return any(ln.split()[4] == mnt for ln in f)


def check_copy(copy, want, what):
    """Mounts copy with a daemon of our own, compares it with want, unmounts."""
    mnt = copy + ".mnt"
    log = copy + ".log"
    os.mkdir(mnt)
    with open(log, "w") as lf:
        daemon = subprocess.Popen([SC_BIN, "mount", "-f", *URING_OPTS, f"--keyfile={KEYFILE}", copy, mnt],
                                  stdin=subprocess.DEVNULL, stdout=lf, stderr=lf)
    try:
        # no deadline: the mount comes up, or the daemon exits (meson's
        # timeout bounds a hang)
        while not mounted(mnt) and daemon.poll() is None:
            time.sleep(0.05)
        if not mounted(mnt):
            with open(log) as f:
                fail(f"{what}: the copy did not mount (daemon exit {daemon.returncode}): {f.read()}")
        got = want_ok(op(snapshot, mnt), f"{what}: read the mounted copy")
        missing = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        check(not missing and not extra,
              f"{what}: entries missing {missing[:5]}, extra {extra[:5]}")
        diff = sorted(k for k in want if got.get(k) != want[k])
        check(not diff, f"{what}: differs from the source in {diff[:5]}: "
                        f"{[(got.get(k), want[k]) for k in diff[:2]]}")
        r = subprocess.run(["fusermount3", "-u", mnt])
        check(r.returncode == 0, f"{what}: fusermount3 -u failed")
        rc = daemon.wait()
        check(rc == 0, f"{what}: the daemon exited {rc}")
    finally:
        if daemon.poll() is None:
            if mounted(mnt):
                subprocess.run(["fusermount3", "-uz", mnt])
            daemon.kill()
            daemon.wait()
    with open(log, errors="replace") as f:
        lines = [ln.rstrip() for ln in f if ln.strip()]
    bad = [ln for ln in lines if not re.match(r"^stackcrypt: mounted ", ln)]
    check(not bad, f"{what}: the daemon logged {bad[:5]}")
    note(f"{what}: {len(want)} entries identical through a mount of the copy")


def main():
    want_ok(op(make_tree, MNT), "make the tree")
    want = want_ok(op(snapshot, MNT), "read the tree")
    check(sum(v[0] == "file" for v in want.values()) == 9 and
          sum(v[0] == "link" for v in want.values()) == 4, f"the tree is not complete: {want}")
    unmount()
    # the source needs no xattr: all it holds are the copies of directories'
    # nonce records (format.md 9.2), which stand in only for a nonce file a
    # crash lost; the copies below drop them and must work
    extra = [(p, x) for p, x in user_xattrs(BACKING)
             if not (x == "user.stackcrypt.names" and os.path.isdir(p) and
                     os.path.isfile(os.path.join(p, "sc.nonce")))]
    check(not extra, f"user.* xattrs in the backing tree: {extra[:5]}")
    copies = {"cp -r": os.path.join(SCRATCH, "copy-cp"),
              "tar": os.path.join(SCRATCH, "copy-tar")}
    r = subprocess.run(["cp", "-r", BACKING, copies["cp -r"]], capture_output=True, text=True)
    check(r.returncode == 0, f"cp -r: {r.stderr}")
    os.mkdir(copies["tar"])
    tar_c = subprocess.Popen(["tar", "-c", "-C", BACKING, "."], stdout=subprocess.PIPE)
    r = subprocess.run(["tar", "-x", "-C", copies["tar"]], stdin=tar_c.stdout,
                       capture_output=True, text=True)
    tar_c.stdout.close()
    check(tar_c.wait() == 0 and r.returncode == 0, f"tar c | tar x: {r.stderr}")
    for what, copy in copies.items():
        check(not user_xattrs(copy), f"{what}: the copy has user.* xattrs: {user_xattrs(copy)[:5]}")
        r = subprocess.run([SC_BIN, "fsck", "-q", f"--keyfile={KEYFILE}", copy],
                           capture_output=True, text=True)
        check(r.returncode == 0 and "0 problems" in r.stdout,
              f"{what}: fsck of the copy: exit {r.returncode}: {r.stdout}{r.stderr}")
        check_copy(copy, want, what)
    for copy in copies.values():
        shutil.rmtree(copy)
        shutil.rmtree(copy + ".mnt")
    remount()
    got = want_ok(op(snapshot, MNT), "read the source again")
    check(got == want, "the source changed")
    summary(f"entries={len(want)} copies={len(copies)}")


if __name__ == "__main__":
    main()
