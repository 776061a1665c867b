#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a byte-range lock around each write costs on a backing directory.

The measurement behind the one-writer-per-volume rule (docs/usage.md, "Over
GlusterFS"; docs/benchmarks.md): two stackcrypt clients of one GlusterFS
volume could instead share it by locking, around every read-modify-write
of a data unit, the unit's range of the backing file (and the header at
creation), and by trusting no cached size.  This times, in one run and
interleaved, 4 KiB pwrites at random unit-aligned offsets of a file in DIR
with and without an OFD write lock taken (F_OFD_SETLKW) and dropped around
each, and prints the median time per write of each and their ratio.

    python3 bench/lock_cost.py [--writes N] [--rounds R] DIR
"""
import argparse
import fcntl
import os
import random
import statistics
import struct
import sys
import time

F_OFD_SETLKW = 38


def lock(fd, typ, start, length):
    fcntl.fcntl(fd, F_OFD_SETLKW, struct.pack('hhqqi4x', typ, os.SEEK_SET, start, length, 0))


def run(fd, nunits, writes, locked, buf):
    offs = [random.randrange(nunits) * 4096 for _ in range(writes)]
    t0 = time.perf_counter()
    for off in offs:
        if locked:
            lock(fd, fcntl.F_WRLCK, off, 4096)
        os.pwrite(fd, buf, off)
        if locked:
            lock(fd, fcntl.F_UNLCK, off, 4096)
    return (time.perf_counter() - t0) / writes * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--writes', type=int, default=2000)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--size-mib', type=int, default=64)
    ap.add_argument('dir')
    a = ap.parse_args()
    if not os.path.isdir(a.dir):
        sys.exit(f'lock_cost.py: {a.dir}: not a directory')
    path = os.path.join(a.dir, 'lock_cost.dat')
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        buf = os.urandom(4096)
        for off in range(0, a.size_mib << 20, 1 << 20):
            os.pwrite(fd, os.urandom(1 << 20), off)
        os.fsync(fd)
        nunits = (a.size_mib << 20) // 4096
        plain, locked = [], []
        for _ in range(a.rounds):
            plain.append(run(fd, nunits, a.writes, False, buf))
            locked.append(run(fd, nunits, a.writes, True, buf))
        p, l = statistics.median(plain), statistics.median(locked)
        print(f'{a.dir}: 4 KiB pwrite {p:.1f} us, with a range lock around it '
              f'{l:.1f} us: x{l / p:.2f} ({a.rounds} rounds of {a.writes}, medians)')
    finally:
        os.close(fd)
        os.unlink(path)


if __name__ == '__main__':
    main()
