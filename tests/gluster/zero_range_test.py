#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""zero_range_test.py - FALLOC_FL_ZERO_RANGE zeroes through a mount over GlusterFS.

Run by tests/gluster/harness.sh and tests/ceph/harness.sh (CephFS's
ceph-fuse refuses ZERO_RANGE with EOPNOTSUPP).  GlusterFS's FUSE client answers
fallocate(FALLOC_FL_ZERO_RANGE) with success and leaves the data as it was
(checked here on the volume itself, REF, so a GlusterFS that mends it shows);
the posix layer punches a hole and allocates instead (fs/xlators/posix/
posix.c).  In the mount each case must read back as zeros exactly over the
range, the bytes around it unchanged, and the size as fallocate(2) defines
it: kept with KEEP_SIZE, extended to the range's end without.
"""
import ctypes
import os
import sys

MNT, REF = os.environ["MNT"], os.environ["REF"]
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
KEEP_SIZE, ZERO_RANGE = 0x01, 0x10
bad = 0


def check(label, ok, detail=""):
    global bad
    print("%s %s%s" % ("ok  " if ok else "FAIL", label, "" if ok else ": " + detail))
    bad += not ok


def zero_case(root, name, size, off, length, mode):
    """Returns (result, data, errno) after zeroing [off, off+length) of a
    file of size bytes of 0xa5."""
    p = os.path.join(root, name)
    with open(p, "wb") as f:
        f.write(b"\xa5" * size)
    fd = os.open(p, os.O_RDWR)
    try:
        r = libc.fallocate(fd, mode, off, length)
        err = ctypes.get_errno() if r else 0
    finally:
        os.close(fd)
    with open(p, "rb") as f:
        return r, f.read(), err


def main():
    cases = [  # name, size, offset, length, mode
        ("inside-keep", 65536, 4096, 8192, ZERO_RANGE | KEEP_SIZE),
        ("inside", 65536, 5000, 3000, ZERO_RANGE),
        ("unaligned-keep", 20000, 100, 9000, ZERO_RANGE | KEEP_SIZE),
        ("past-eof", 10000, 8192, 16384, ZERO_RANGE),
        ("past-eof-keep", 10000, 8192, 16384, ZERO_RANGE | KEEP_SIZE),
    ]
    ref_kept = 0
    for name, size, off, length, mode in cases:
        r, data, err = zero_case(MNT, name, size, off, length, mode)
        end = off + length
        want_size = size if mode & KEEP_SIZE else max(size, end)
        want = bytearray(b"\xa5" * size + b"\0" * (want_size - size))
        want[off:min(end, want_size)] = b"\0" * (min(end, want_size) - off)
        check("%s: fallocate" % name, r == 0, os.strerror(err))
        check("%s: size" % name, len(data) == want_size, "%d, want %d" % (len(data), want_size))
        diff = next((i for i in range(min(len(data), len(want))) if data[i] != want[i]), None)
        check("%s: zeros over the range only" % name, diff is None,
              "first difference at %s" % diff)
        _, rdata, _ = zero_case(REF, name, size, off, length, mode)
        ref_kept += rdata[off] == 0xa5
    # The gap itself, so that this test says when the backing mends it.
    print("the backing file system itself (REF) left the range unzeroed in %d of %d cases"
          % (ref_kept, len(cases)))
    print("%d failed" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
