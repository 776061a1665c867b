#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""t_attacks.py - what a writer of the backing directory can do unnoticed.

    harness.sh CONFIG FSTYPE -- t_attacks.py       (CONFIG: aes-xts or aes-cbc)

The claims of docs/security.md section 3 ("what a writer of the backing
directory can do"), each performed on the backing directory with the
daemon stopped (fusermount3 -u), then checked through a fresh mount (so
nothing is cached).  The length-preserving formats give confidentiality,
not integrity: every attack below must succeed *silently* -- the read
returns the attacker's result without an error, the daemon logs nothing
(the harness runs without --keep-going, so any error line in the daemon's
log fails the test), and `stackcrypt fsck` reports 0 problems.

  zero        units of a file overwritten with zeros (a whole unit in the
              middle, the final unit of >= 16 bytes): they read back as
              zeros, the other units intact
  tiny        a file shorter than 16 bytes is P XOR a keystream: with the
              plaintext known, the attacker XORs the stored bytes with
              P XOR P' and the file reads P', any P' of the same length
  flip        one ciphertext bit flipped in a whole unit: aes-xts garbles
              the 16-byte block holding it and nothing else; aes-cbc
              garbles that block and flips the same bit of the next
              16-byte plaintext block (chosen bit flips, paid for with one
              garbled block)
  swap        the headers of two files exchanged: both read as garbage of
              the right size, neither as the other's contents
  rollback    a whole file (data and header) put back from an older copy
              of the backing file: it reads as the older version
  replay      one unit's ciphertext put back from an older copy: that unit
              reads as its older plaintext, the others as the newer
  leak        two versions of a file (the second written in place through
              the mount): in the backing copies, aes-xts shows exactly which
              16-byte blocks are equal, aes-cbc which 16-byte-block prefix
              of each unit is equal; writing the first version back makes
              the backing file identical to its first copy
  copy        a backing file copied with its header (cp -a inside BACKING):
              the copy reads as the original, and the two share their keys,
              so the same bytes written at the same place of both give the
              same ciphertext (fsck reports such pairs: done after its run)
"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from mount_lib import (STATS, check, fail, note, op, pattern, pwrite_file, read_file, summary,  # noqa: E402
                     unmount, want_ok, write_file)
# The volume's settings and its paths are t_hostile's: the same harness, the
# same attacker (unmount() is mount_lib's).
from t_hostile import BACKING, BS, CONFIG, HDR, KEYFILE, SC_BIN, bp, mp  # noqa: E402

TINY_OLD, TINY_NEW = b"PAY BOB $100.00", b"PAY EVE $999.00"
FLIP_OFF = 100			# in block [96, 112) of unit 0
Z_SIZE = 4 * BS + 100		# final unit of 100 bytes: encrypted alone
EQ_SIZE = 3 * BS		# whole units only: no ciphertext stealing


def backing(name):
    """(data, header) of a backing file."""
    with open(bp(name), "rb") as f:
        return f.read(), os.getxattr(bp(name), HDR)


def put_backing(name, data, hdr):
    with open(bp(name), "r+b") as f:
        f.truncate(0)
        f.write(data)
    os.setxattr(bp(name), HDR, hdr)


def patch_backing(name, off, data):
    with open(bp(name), "r+b") as f:
        f.seek(off)
        f.write(data)


def pwrite_sync(path, data, off):
    return pwrite_file(path, data, off, sync=True)


def xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def remount_after_attack():
    r = subprocess.run([os.environ["SC_REMOUNT"]])
    check(r.returncode == 0, "mount after the attacks failed")


def eq_v2(v1):
    """v1 changed in place: unit 0 in blocks 3 (all 16 bytes) and 10 (one
    byte), unit 1 in block 0 (one byte), unit 2 not at all."""
    v2 = bytearray(v1)
    v2[3 * 16:4 * 16] = bytes(b ^ 0xff for b in v1[3 * 16:4 * 16])
    v2[10 * 16 + 7] ^= 0x40
    v2[BS + 5] ^= 0x01
    return bytes(v2)


def blocks_equal(a, b):
    return [a[k:k + 16] == b[k:k + 16] for k in range(0, len(a), 16)]


def expected_ciphertext_equality(plain_eq):
    """Which 16-byte ciphertext blocks of the two versions are equal, given
    which plaintext blocks are: XTS encrypts each block of a unit alone
    under the unit's tweak; CBC chains inside a unit (IV from the unit
    index), so a block's ciphertext is equal iff every block of the unit
    up to it is."""
    if CONFIG == "aes-xts":
        return list(plain_eq)
    per_unit = BS // 16
    out = []
    for k, e in enumerate(plain_eq):
        out.append(e and (k % per_unit == 0 or out[k - 1]))
    return out


def fsck_clean(what):
    r = subprocess.run([SC_BIN, "fsck", "-q", f"--keyfile={KEYFILE}", BACKING],
                       capture_output=True, text=True)
    check(r.returncode == 0 and "0 problems" in r.stdout,
          f"fsck {what}: exit {r.returncode}, want 0 and '0 problems' "
          f"(stdout {r.stdout.strip()!r}, stderr {r.stderr.strip()!r})")
    note(f"fsck {what}: {r.stdout.strip().splitlines()[-1]}")


def main():
    if CONFIG not in ("aes-xts", "aes-cbc"):
        fail("needs CONFIG aes-xts or aes-cbc")
    z = pattern(Z_SIZE, "z")
    flip = pattern(2 * BS, "flip")
    sw = {n: pattern(3 * BS + 100, n) for n in ("sw-a", "sw-b")}
    rb1, rb2 = pattern(2 * BS + 50, "rb1"), pattern(3 * BS + 7, "rb2")
    eq1 = pattern(EQ_SIZE, "eq1")
    eq2 = eq_v2(eq1)
    cp = pattern(2 * BS, "cp")

    # ---- version 1 of everything, through the mount ----
    for name, data in (("z", z), ("tiny", TINY_OLD), ("flip", flip), ("sw-a", sw["sw-a"]),
                       ("sw-b", sw["sw-b"]), ("rb", rb1), ("eq", eq1), ("cp", cp)):
        want_ok(op(write_file, mp(name), data), f"write {name}")
        STATS["bytes"] += len(data)
    unmount()
    rb_old = backing("rb")
    eq_old = backing("eq")[0]
    remount_after_attack()

    # ---- version 2 of rb (rewritten) and eq (changed in place) ----
    want_ok(op(write_file, mp("rb"), rb2), "write rb, version 2")
    for k in range(0, EQ_SIZE, 16):
        if eq2[k:k + 16] != eq1[k:k + 16]:
            want_ok(op(pwrite_sync, mp("eq"), eq2[k:k + 16], k), f"change eq at {k}")
    unmount()

    # ---- the attacks, with no daemon running ----
    eq_new = backing("eq")[0]
    want_eq = expected_ciphertext_equality(blocks_equal(eq1, eq2))
    got_eq = blocks_equal(eq_old, eq_new)
    wrong = [k for k in range(len(got_eq)) if got_eq[k] != want_eq[k]]
    check(not wrong, f"leak: {len(wrong)} 16-byte blocks (first: {wrong[:8]}) are "
                     f"{'equal' if got_eq[wrong[0]] else 'different'} in the two backing "
                     f"copies, want the opposite" if wrong else "")
    note(f"leak: {sum(got_eq)} of {len(got_eq)} 16-byte blocks equal in the backing copies "
         f"of two versions differing in {len(got_eq) - sum(blocks_equal(eq1, eq2))} blocks")
    patch_backing("eq", BS, eq_old[BS:2 * BS])				# replay unit 1
    patch_backing("z", BS, bytes(BS))					# zero unit 1
    patch_backing("z", 4 * BS, bytes(100))				# and the final unit
    tiny_c = backing("tiny")[0]
    patch_backing("tiny", 0, xor(tiny_c, xor(TINY_OLD, TINY_NEW)))	# chosen plaintext
    c = backing("flip")[0]
    patch_backing("flip", FLIP_OFF, bytes([c[FLIP_OFF] ^ 0x01]))		# flip one bit
    ha, hb = backing("sw-a")[1], backing("sw-b")[1]
    os.setxattr(bp("sw-a"), HDR, hb)
    os.setxattr(bp("sw-b"), HDR, ha)
    put_backing("rb", *rb_old)						# roll back
    STATS["faults"] += 8
    fsck_clean("after the attacks")
    # cp -a inside BACKING: after fsck, which reports files sharing a nonce
    r = subprocess.run(["cp", "-a", bp("cp"), bp("cp-copy")])
    check(r.returncode == 0, "cp -a in the backing directory failed")
    remount_after_attack()

    # ---- what the mount shows ----
    got = want_ok(op(read_file, mp("z")), "read z")
    want = z[:BS] + bytes(BS) + z[2 * BS:4 * BS] + bytes(100)
    check(got == want, "zero: the zeroed units do not read as zeros, or the others changed")
    got = want_ok(op(read_file, mp("tiny")), "read tiny")
    check(got == TINY_NEW, f"tiny: read {got!r}, want the attacker's {TINY_NEW!r}")
    got = want_ok(op(read_file, mp("flip")), "read flip")
    check(len(got) == len(flip), f"flip: {len(got)} bytes")
    blk = FLIP_OFF // 16 * 16
    check(got[blk:blk + 16] != flip[blk:blk + 16], "flip: the flipped block is intact")
    diff = {i for i in range(len(got)) if got[i] != flip[i]}
    outside = diff - set(range(blk, blk + 16))
    if CONFIG == "aes-xts":
        check(not outside, f"flip: bytes outside the block changed: {sorted(outside)[:8]}")
    else:
        nxt = FLIP_OFF + 16
        check(outside == {nxt} and got[nxt] ^ flip[nxt] == 0x01,
              f"flip: outside the block changed {sorted(outside)[:8]}, want exactly bit 0 "
              f"of byte {nxt}")
    for name, other in (("sw-a", "sw-b"), ("sw-b", "sw-a")):
        got = want_ok(op(read_file, mp(name)), f"read {name}")
        check(len(got) == len(sw[name]), f"swap: {name} reads {len(got)} bytes")
        check(got != sw[name] and got != sw[other], f"swap: {name} is not garbage")
    got = want_ok(op(read_file, mp("rb")), "read rb")
    check(got == rb1, "rollback: rb does not read as its older version")
    got = want_ok(op(read_file, mp("eq")), "read eq")
    check(got == eq2[:BS] + eq1[BS:2 * BS] + eq2[2 * BS:], "replay: eq is not new, old, new")
    check(want_ok(op(read_file, mp("cp-copy")), "read cp-copy") == cp,
          "copy: a backing file copied with its header does not read as the original")
    same = pattern(BS, "same")
    for name in ("cp", "cp-copy"):
        want_ok(op(pwrite_sync, mp(name), same, BS), f"write the same unit into {name}")
    check(backing("cp")[0][BS:2 * BS] == backing("cp-copy")[0][BS:2 * BS],
          "copy: the same unit written into a file and its copy gave different ciphertext")
    # Reverts show: eq written back to version 1 in place is its first backing copy.
    want_ok(op(pwrite_sync, mp("eq"), eq1, 0), "write eq version 1 back")
    check(backing("eq")[0] == eq_old, "leak: eq written back does not give its old ciphertext")
    summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())
