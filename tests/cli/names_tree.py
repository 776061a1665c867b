#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""names_tree.py - the tree t_names.sh writes through a mount with encrypted
names, and the checks on it (run by tests/cli/t_names.sh).

  names_tree.py make MNT      write the tree into the mount
  names_tree.py verify MNT    the mount holds exactly the tree: every entry,
                              its type, contents or target, symlink sizes
  names_tree.py scan BACKING  no backing name equals a plaintext name of the
                              tree, no backing symlink target equals a
                              plaintext target (whole names and targets)
  names_tree.py limits MNT    a 256-byte name and a 4096-byte target are
                              refused with ENAMETOOLONG; statfs says 255

The tree is the same on every run (no randomness), so each mode rebuilds it
from this file.  Paths are bytes: names hold every byte but '/' and NUL.
Exits 0 if all holds, 1 with one line per problem.
"""
import errno
import hashlib
import os
import stat
import sys

LENGTHS = (1, 16, 143, 144, 175, 176, 255)
FILLER = b"abcdefghijklmnopqrstuvwxyz0123456789-_.ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def name_of(prefix, length):
    """A name of exactly length bytes, starting with prefix."""
    return (prefix + FILLER * 8)[:length]


def contents(seed):
    """Deterministic file contents of a size that depends on seed."""
    out, h = b"", seed
    size = (len(seed) * 37) % 9000 + 1
    while len(out) < size:
        h = hashlib.sha256(h).digest()
        out += h
    return out[:size]


def tree():
    """{relative path (bytes): ('f', data) | ('d', None) | ('l', target)}"""
    t = {}
    for n in LENGTHS:
        f = name_of(b"f", n)
        t[f] = ("f", contents(f))
        d = name_of(b"d", n)
        t[d] = ("d", None)
        # a long and a short name inside every directory, and one level more
        t[d + b"/" + name_of(b"g", 255)] = ("f", contents(d + b"g"))
        t[d + b"/s"] = ("f", contents(d + b"s"))
        t[d + b"/" + name_of(b"e", n)] = ("d", None)
        t[d + b"/" + name_of(b"e", n) + b"/" + name_of(b"h", 176)] = ("l", b"../" + f)
        l = name_of(b"l", n)
        t[l] = ("l", name_of(b"target-", n))
    # every byte but '/' and NUL: one name each (three of it, so '.' makes
    # "..."), and one name holding all 254 of them
    every = bytes(b for b in range(1, 256) if b != ord("/"))
    t[b"bytes"] = ("d", None)
    for b in every:
        t[b"bytes/" + bytes([b]) * 3] = ("f", bytes([b]))
    t[b"bytes/" + every] = ("f", every)
    # symlink targets: the longest (PATH_MAX - 1, kept in a side file), the
    # longest kept in the backing link itself, the shortest in a side file,
    # every byte (with '/'), absolute, dangling
    t[b"links"] = ("d", None)
    t[b"links/max"] = ("l", name_of(b"t", 255) * 15 + b"/" + b"x" * (4095 - 255 * 15 - 1))
    t[b"links/inline"] = ("l", b"i" * 3008)
    t[b"links/side"] = ("l", b"s" * 3009)
    t[b"links/every"] = ("l", bytes(range(1, 256)))
    t[b"links/abs"] = ("l", b"/etc/hostname")
    t[b"links/dangling"] = ("l", b"no such file")
    t[b"empty"] = ("f", b"")
    return t


def make(mnt):
    t = tree()
    for p in sorted(t, key=lambda p: p.count(b"/")):
        kind, v = t[p]
        path = os.path.join(mnt, p)
        if kind == "d":
            os.mkdir(path, 0o755)
        elif kind == "l":
            os.symlink(v, path)
        else:
            with open(path, "wb") as f:
                f.write(v)
    # a hard link under a long name and its target under a short one
    os.link(os.path.join(mnt, name_of(b"f", 16)), os.path.join(mnt, name_of(b"hl", 200)))
    return 0


def expected():
    t = tree()
    t[name_of(b"hl", 200)] = t[name_of(b"f", 16)]
    return t


def verify(mnt):
    want, got, bad = expected(), {}, []
    for top, dirs, files in os.walk(mnt):
        for n in dirs + files:
            path = os.path.join(top, n)
            rel = os.path.relpath(path, mnt)
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode):
                got[rel] = ("d", None)
            elif stat.S_ISLNK(st.st_mode):
                target = os.readlink(path)
                got[rel] = ("l", target)
                if st.st_size != len(target):
                    bad.append("%r: lstat size %d, target %d bytes" % (rel, st.st_size, len(target)))
            else:
                with open(path, "rb") as f:
                    got[rel] = ("f", f.read())
                if st.st_size != len(got[rel][1]):
                    bad.append("%r: size %d, read %d bytes" % (rel, st.st_size, len(got[rel][1])))
    for p in sorted(set(want) | set(got)):
        if p not in got:
            bad.append("missing: %r" % p)
        elif p not in want:
            bad.append("unexpected: %r" % p)
        elif got[p] != want[p]:
            bad.append("differs: %r (%s)" % (p, want[p][0]))
    # readdir names the entries exactly (no duplicates, nothing hidden)
    for d in [b""] + [p for p in want if want[p][0] == "d"]:
        listed = sorted(os.listdir(os.path.join(mnt, d)))
        wanted = sorted(os.path.basename(p) for p in want
                        if os.path.dirname(p) == d.rstrip(b"/"))
        if listed != wanted:
            bad.append("readdir %r: %d names, want %d" % (d, len(listed), len(wanted)))
    for b in bad[:20]:
        print("names_tree verify:", b)
    if len(want) < 300:
        bad.append("tree too small")
    print("names_tree verify: %d entries, %d problems" % (len(got), len(bad)))
    return 1 if bad else 0


def scan(backing):
    t = expected()
    plain = set(os.path.basename(p) for p in t)
    targets = set(v for k, v in t.values() if k == "l")
    bad, seen = [], 0
    for top, dirs, files in os.walk(backing):
        for n in dirs + files:
            seen += 1
            path = os.path.join(top, n)
            if n in plain:
                bad.append("plaintext name in BACKING: %r" % os.path.relpath(path, backing))
            if os.path.islink(path) and os.readlink(path) in targets:
                bad.append("plaintext target in BACKING: %r" % os.path.relpath(path, backing))
    if seen < len(t):
        bad.append("BACKING has %d entries, fewer than the %d of the tree" % (seen, len(t)))
    for b in bad[:20]:
        print("names_tree scan:", b)
    print("names_tree scan: %d backing entries, %d plaintext names, %d problems"
          % (seen, len(plain), len(bad)))
    return 1 if bad else 0


def limits(mnt):
    bad = []
    for what, fn in (("256-byte name", lambda: open(os.path.join(mnt, b"n" * 256), "wb")),
                     ("4096-byte target", lambda: os.symlink(b"t" * 4096, os.path.join(mnt, b"toolong")))):
        try:
            fn()
            bad.append("%s accepted" % what)
        except OSError as e:
            if e.errno != errno.ENAMETOOLONG:
                bad.append("%s: %s, want ENAMETOOLONG" % (what, e.strerror))
    if os.statvfs(mnt).f_namemax != 255:
        bad.append("statfs namemax %d, want 255" % os.statvfs(mnt).f_namemax)
    for b in bad:
        print("names_tree limits:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "verify", "scan", "limits"):
        sys.exit(__doc__)
    sys.exit(globals()[sys.argv[1]](os.fsencode(sys.argv[2])))
