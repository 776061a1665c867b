#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""t_gcm_tamper.py - every tamper class of an aes-gcm volume, through a mount.

    harness.sh --keep-going aes-gcm ext4 -- t_gcm_tamper.py

docs/format.md 10.5-10.6 and docs/security.md 3.4 as a test.  Files are
written through the mount (units 0-2 whole, a final unit 3 of 100 bytes,
unless said otherwise), the daemon is stopped (fusermount3 -u), one class
of damage is applied to each backing file, and the volume is mounted again
(nothing cached).  Then, for each damaged file:

  header   a byte of the magic, the version, log2_bs, the flags, the file id,
           the MAC: opening and reading give EIO
  nonce, ciphertext, tag      a byte of unit 1's nonce or ciphertext, of
           unit 2's tag
  straddle the last byte of unit 1 and the first of unit 2
  swap     units 1 and 2 exchanged
  foreign  unit 2 replaced by unit 2 of another file (same index)
  headers  two files' headers exchanged: unit 0 of each fails
  cut      the file cut inside the final unit's ciphertext: that unit fails
  cut-tag  the file cut inside the final unit's nonce: stat shows the
           whole units and one byte of the cut unit (docs/format.md 10.7),
           so that a reader reaches it: that unit fails too
  final0   the final partial unit replaced by zeros: it fails (a hole is a
           whole unit only)
  zeroed   unit 1 replaced by bs + 32 zero bytes, in a file that never had
           a hole: it fails (#28 finding 3; format.md 10.6)
  append   bs + 32 zero bytes appended to a file of whole units that never
           had a hole: the file is one unit longer and that unit fails
each reads EIO (never garbage, never zeros) as soon as the read reaches the
damaged unit, while the units before it read back intact (read a page at a
time with readahead off, so no request reaches the damaged unit: with
units smaller than a page, the units sharing its page are not checked);
the daemon logs the file once, naming its path in the mount and the unit (a
bad header: once per open, which finds no file state to remember it in:
at most twice here); `stackcrypt fsck` exits 1 naming the file and the unit; `fsck --repair` quarantines
exactly these files, after which fsck is clean.

A real hole is no damage (format.md 10.6):
  hole     written around unit 1 (a write past the end left it a hole):
           reads as bs zeros, every other byte intact, no log line, fsck
           lists it only as a hole

The harness runs with --keep-going (the damage makes the daemon log on
purpose); this test reads the log itself and fails on any line it did not
expect: every line after the remount is the harness's, the mount's, or one
of the lines above.
"""
import errno
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from mount_lib import (check, fail, fmt, note, op, pattern, read_file, remount, summary,  # noqa: E402
                       unmount, want_ok, write_file, backing_of, sanitizer_lines)

MNT = os.environ["MNT"]
BACKING = os.environ["BACKING"]
KEYFILE = os.environ["KEYFILE"]
SC_BIN = os.environ["SC_BIN"]
LOG = os.environ["DAEMON_LOG"]
BS = int(os.environ.get("SC_BLOCK_SIZE", "4096"))
H = 40				# the in-file header
U = BS + 32			# a whole stored unit
SIZE = 3 * BS + 100		# units 0-2 whole, final unit 3 of 100 bytes


def uoff(i):
    return H + i * U


def flip(path, *offs):
    with open(path, "r+b") as f:
        for o in offs:
            f.seek(o)
            b = f.read(1)
            f.seek(o)
            f.write(bytes([b[0] ^ 0x01]))


def put(path, off, data):
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(data)


def get(path, off, n):
    with open(path, "rb") as f:
        f.seek(off)
        return f.read(n)


def truncate(path, size):
    os.truncate(path, size)


PAGE = os.sysconf("SC_PAGE_SIZE")


def prefix_len(bad):
    """The bytes before unit bad that a reader gets without the kernel
    asking the daemon for unit bad: the whole pages before it (the page
    cache reads pages; with units smaller than a page, the page holding
    unit bad holds units before it too)."""
    return bad * BS // PAGE * PAGE


def read_prefix(path, n):
    """Bytes [0, n) of path (n a multiple of the page size), a page per
    pread with readahead off, so that no request to the daemon reaches
    past byte n."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        return b"".join(os.pread(fd, PAGE, o) for o in range(0, n, PAGE))
    finally:
        os.close(fd)


def read_at(path, off, n):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        return os.pread(fd, n, off)
    finally:
        os.close(fd)


def stat_size(path):
    return os.stat(path).st_size


# name -> (make the damage (backing path, the files' backing paths), first bad
# unit or None for the header, fsck's reason, the plaintext the mount serves
# or None for EIO).  Units before `bad` read intact.
def header_reason(which):
    if which == "magic":
        return "no aes-gcm file header"
    if which == "version":
        return "aes-gcm file header of unknown version"
    return "aes-gcm file header MAC mismatch"


TAG = "fails its authentication tag"
ZEROS = "is all zeros in a file that never had a hole"
CASES = {}
for which, off in [("magic", 0), ("version", 4), ("log2bs", 5), ("flags", 6), ("fileid", 12),
                   ("mac", 30)]:
    CASES["h_" + which] = (lambda p, b, off=off: flip(p, off), None, header_reason(which))
CASES.update({
    "u_nonce": (lambda p, b: flip(p, uoff(1) + 3), 1, TAG),
    "u_ct": (lambda p, b: flip(p, uoff(1) + 16 + BS // 2), 1, TAG),
    "u_tag": (lambda p, b: flip(p, uoff(3) - 1), 2, TAG),
    "u_straddle": (lambda p, b: flip(p, uoff(2) - 1, uoff(2)), 1, TAG),
    "u_swap": (lambda p, b: (lambda u1, u2: (put(p, uoff(1), u2), put(p, uoff(2), u1)))(
        get(p, uoff(1), U), get(p, uoff(2), U)), 1, TAG),
    "u_foreign": (lambda p, b: put(p, uoff(2), get(b["donor"], uoff(2), U)), 2, TAG),
    "s_a": (lambda p, b: put(p, 0, get(b["s_b.orig"], 0, H)), 0, TAG),
    "s_b": (lambda p, b: put(p, 0, get(b["s_a.orig"], 0, H)), 0, TAG),
    "c_ct": (lambda p, b: truncate(p, uoff(3) + 50), 3, TAG),
    "c_tag": (lambda p, b: truncate(p, uoff(3) + 20), 3,
              "the file ends 20 bytes into unit 3, inside its nonce and tag"),
    "z_final": (lambda p, b: put(p, uoff(3), bytes(100 + 32)), 3, TAG),
    "z_zero": (lambda p, b: zero_unit(p, 1), 1, ZEROS),
    "z_append": (lambda p, b: append_zeros(p), 2, ZEROS),
})
HOLES = ["z_hole"]


def zero_unit(path, u):
    """Stored unit u of path overwritten with zeros; it must hold other bytes."""
    if get(path, uoff(u), U) == bytes(U):
        fail(f"{path}: unit {u} is all zeros already")
    put(path, uoff(u), bytes(U))


def append_zeros(path):
    with open(path, "ab") as f:
        f.write(bytes(U))


def content(name):
    size = 2 * BS if name == "z_append" else SIZE
    data = pattern(size, ("gcm-tamper", name, BS))
    if name in HOLES:
        data = data[:BS] + bytes(BS) + data[2 * BS:]
    return data


def write_around_hole(path, data):
    """Unit 0, then units 2.. by a write past the end: unit 1 is a hole."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.pwrite(fd, data[:BS], 0)
        os.pwrite(fd, data[2 * BS:], 2 * BS)
    finally:
        os.close(fd)


def main():
    names = list(CASES) + HOLES + ["donor", "good"]
    for name in names:
        if name in HOLES:
            write_around_hole(os.path.join(MNT, name), content(name))
            continue
        want_ok(op(write_file, os.path.join(MNT, name), content(name)), f"write {name}")
    bp = {name: backing_of(os.path.join(MNT, name)) for name in names}
    for name in names:
        want = H + (len(content(name)) // BS) * U + (len(content(name)) % BS and
                                                     len(content(name)) % BS + 32)
        check(os.stat(bp[name]).st_size == want,
              f"{name}: backing size {os.stat(bp[name]).st_size}, want {want} (format.md 10.3)")
    unmount()

    # the damage, with the daemon stopped; the header swap from copies of both
    for n in ("s_a", "s_b"):
        with open(bp[n], "rb") as f:
            orig = f.read(H)
        with open(bp[n] + ".orig-hdr", "wb") as f:
            f.write(orig)
    b = dict(bp, **{"s_a.orig": bp["s_a"] + ".orig-hdr", "s_b.orig": bp["s_b"] + ".orig-hdr"})
    for name, (damage, _, _) in CASES.items():
        damage(bp[name], b)
    for n in ("s_a", "s_b"):
        os.unlink(bp[n] + ".orig-hdr")

    log_from = os.path.getsize(LOG)
    remount()
    check_reads()
    check_log(log_from)
    unmount()
    check_fsck(bp)
    remount()
    summary(f"classes={len(CASES)}")


def check_reads():
    prefixes = [0]
    for name, (_, bad, _) in CASES.items():
        path = os.path.join(MNT, name)
        data = content(name)
        if name == "c_tag":
            # cut inside the final unit's nonce: its whole units and one byte of the cut one
            size = want_ok(op(stat_size, path), f"stat {name}")
            check(size == 3 * BS + 1, f"{name}: size {size}, want {3 * BS + 1} (the whole "
                                      f"units and one byte of the cut unit)")
        n = prefix_len(bad or 0)
        if n:
            got = want_ok(op(read_prefix, path, n), f"{name}: the {n} bytes before unit {bad}")
            check(got == data[:n], f"{name}: the bytes before unit {bad} do not read back intact")
            prefixes[0] += 1
        res = op(read_file, path)
        check(res == ("err", errno.EIO),
              f"{name}: reading the whole file gave {fmt(res)}, want EIO (unit {bad})")
        # and again, the damaged unit alone: the failure is not cached away into zeros
        res = op(read_at, path, (bad or 0) * BS, 1)
        check(res == ("err", errno.EIO),
              f"{name}: reading unit {bad} again gave {fmt(res)}, want EIO")
    for name in HOLES:
        got = want_ok(op(read_file, os.path.join(MNT, name)), f"read {name}")
        check(got == content(name), f"{name}: a real hole does not read as bs zeros, the rest "
                                    f"intact")
    got = want_ok(op(read_file, os.path.join(MNT, "good")), "read good")
    check(got == content("good"), "good: an undamaged file does not read back")
    note(f"{len(CASES)} damaged files read EIO at their unit ({prefixes[0]} with their units "
         f"before it intact), the real hole reads as zeros")


HARNESS = re.compile(r"^---- harness: ")
MOUNTED = re.compile(r"^stackcrypt: mounted ")
ERRORISH = re.compile(r"error|AddressSanitizer|LeakSanitizer|runtime error|\basan\b", re.I)


def check_log(log_from):
    with open(LOG, errors="replace") as f:
        f.seek(log_from)
        lines = [ln.rstrip("\n") for ln in f if ln.strip()]
    # the daemon names a file by its path in the mount (the canonical mount point)
    by_path = {os.path.join(os.path.realpath(MNT), name): name for name in CASES}
    seen = {}
    for ln in lines:
        if HARNESS.search(ln) or (MOUNTED.search(ln) and not ERRORISH.search(ln)):
            continue
        m = re.search(r"stackcrypt: gcm: (/\S+):", ln)
        name = by_path.get(m.group(1)) if m else None
        if name not in CASES:
            fail(f"unexpected daemon log line: {ln!r}")
        seen.setdefault(name, []).append(ln)
    for name, (_, bad, _) in CASES.items():
        got = seen.get(name, [])
        # A unit's failure is logged once per file (the daemon keeps the
        # file's state); a bad header leaves no state, so each of the two
        # opens above may log it again (as the xattr formats do).
        most = 1 if bad is not None else 2
        check(1 <= len(got) <= most, f"{name}: {len(got)} log lines naming it, "
                                     f"want 1..{most}: {got!r}")
        if bad is not None:
            check(re.search(rf"\bunit {bad}\b", got[0]),
                  f"{name}: the log line does not name unit {bad}: {got[0]!r}")
        else:
            check("header" in got[0], f"{name}: the log line does not name the header: {got[0]!r}")
    check(not sanitizer_lines(), f"sanitizer lines in the daemon log: {sanitizer_lines()!r}")
    note(f"the daemon logged each of the {len(CASES)} files once, with its unit")


def fsck(*args):
    return subprocess.run([SC_BIN, "fsck", "-q", f"--keyfile={KEYFILE}", *args, BACKING],
                          capture_output=True, text=True)


def check_fsck(bp):
    r = fsck("--verbose")
    out = r.stdout
    check(r.returncode == 1, f"fsck exited {r.returncode}, want 1: {out}{r.stderr}")
    check(f"{len(CASES)} problems" in out, f"fsck did not find {len(CASES)} problems: {out}")
    for name, (_, bad, reason) in CASES.items():
        line = [ln for ln in out.splitlines() if ln.startswith(bp[name] + ": ")]
        check(len(line) == 1, f"fsck: {len(line)} lines for {name} ({bp[name]}): {out}")
        check(reason in line[0], f"fsck: {name}: want '{reason}', got {line[0]!r}")
        if bad is not None:
            check(re.search(rf"\bunit {bad}\b", line[0]), f"fsck: {name}: unit {bad} not named: "
                                                         f"{line[0]!r}")
    for name, unit in (("z_hole", 1),):
        want = f"{bp[name]}: unit {unit} is a hole (all zeros: reads as zeros, not an error)"
        lines = [ln for ln in out.splitlines() if ln.startswith(bp[name] + ": ")]
        check(lines == [want], f"fsck: {name} should be listed only as a hole: {lines!r}")
    for name in ("donor", "good"):
        check(bp[name] + ":" not in out, f"fsck reports the clean file {name}: {out}")
    r = fsck("--repair")
    check(r.returncode == 1 and f"{len(CASES)} files quarantined" in r.stdout,
          f"fsck --repair: exit {r.returncode}: {r.stdout}{r.stderr}")
    for name in CASES:
        check(os.path.exists(bp[name] + ".stackcrypt-quarantine-1") and
              not os.path.exists(bp[name]), f"fsck --repair did not quarantine {name}")
    for name in HOLES + ["donor", "good"]:
        check(os.path.exists(bp[name]), f"fsck --repair moved {name}")
    r = fsck()
    check(r.returncode == 0 and "0 problems" in r.stdout,
          f"fsck after --repair: exit {r.returncode}: {r.stdout}{r.stderr}")
    note(f"fsck named the {len(CASES)} files and units; --repair quarantined exactly them")


if __name__ == "__main__":
    main()
