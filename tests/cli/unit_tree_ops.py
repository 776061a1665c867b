#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""unit_tree_ops.py - random changes of files in a mount, mirrored in a model.

    unit_tree_ops.py MOUNT MODEL_DIR BLOCK_SIZE

For each of four files (made empty if MODEL_DIR has no model of it yet,
else the mount's file is the model's): sixty changes drawn at random --
a write at a random offset (inside, across the end, or past it, which
leaves holes), a truncate that shrinks or extends, an append, a punched
hole (fallocate PUNCH_HOLE | KEEP_SIZE) -- each made through one open
handle of the file in the mount and in its model (a bytearray), sizes up
to about 120 units so that files cross the 64 units of a unit tree node
(docs/format.md 11.10).  The file is read back whole through the handle
before it closes, and again through a new handle after it: both must be
the model byte for byte (exit 1 naming the file and the first differing
offset).  The models are written to MODEL_DIR for the caller to compare
after a remount.  The draws decide only what is tested, never the
verdict: every comparison is exact.
"""
import ctypes
import os
import random
import sys

FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 1, 2
LIBC = ctypes.CDLL(None, use_errno=True)


def punch(fd, off, length):
    """The hole [off, off + length) in fd, its size kept."""
    r = LIBC.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                       ctypes.c_long(off), ctypes.c_long(length))
    if r != 0:
        raise OSError(ctypes.get_errno(), "fallocate punch")


def change(fd, m, bs, rng):
    """One random change of fd and its model m."""
    size, kind = len(m), rng.randrange(5)
    if kind == 0 or size == 0:         # a write anywhere up to 8 units past the end
        off = rng.randrange(size + 8 * bs + 1)
        data = os.urandom(rng.randrange(1, 3 * bs))
        os.pwrite(fd, data, off)
        if off > size:
            m.extend(b"\0" * (off - size))
        m[off:off + len(data)] = data
    elif kind == 1:                    # a truncate that shrinks or extends
        new = rng.randrange(min(size * 2 + bs, 120 * bs) + 1)
        os.ftruncate(fd, new)
        del m[new:]
        m.extend(b"\0" * (new - len(m)))
    elif kind == 2:                    # an append
        data = os.urandom(rng.randrange(1, 2 * bs))
        os.pwrite(fd, data, size)
        m.extend(data)
    elif kind == 3:                    # a write inside
        off = rng.randrange(size)
        data = os.urandom(rng.randrange(1, min(3 * bs, size - off) + 1))
        os.pwrite(fd, data, off)
        m[off:off + len(data)] = data
    else:                              # a punched hole inside
        off = rng.randrange(size)
        length = rng.randrange(1, size - off + 1)
        punch(fd, off, length)
        m[off:off + length] = b"\0" * length
    if len(m) > 120 * bs:              # keep files near the tree's sizes
        os.ftruncate(fd, 120 * bs)
        del m[120 * bs:]


def same(path, got, want):
    """Exits 1 naming path and the first differing offset when got is not want."""
    if got == want:
        return
    at = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
              min(len(got), len(want)))
    sys.exit(f"{path}: {len(got)} bytes read, model {len(want)}; first difference at {at}")


def main():
    mnt, model_dir, bs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(os.urandom(16))
    for i in range(4):
        path, mpath = os.path.join(mnt, f"f{i}"), os.path.join(model_dir, f"f{i}")
        m = bytearray(open(mpath, "rb").read()) if os.path.exists(mpath) else bytearray()
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        for _ in range(60):
            change(fd, m, bs, rng)
        same(path, os.pread(fd, len(m) + bs, 0), bytes(m))
        os.close(fd)
        with open(path, "rb") as f:
            same(path, f.read(), bytes(m))
        with open(mpath, "wb") as f:
            f.write(m)


if __name__ == "__main__":
    main()
