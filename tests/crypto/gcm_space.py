#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gcm_space.py - space overhead of the authenticated format's layout and
of the alternatives docs/format.md section 10.3 compares, over the regular
files of real directory trees.  Not run by CI; run it by hand:

    python3 tests/crypto/gcm_space.py /usr/include /usr/share/doc

For each layout: stored bytes / plaintext bytes - 1, and the same in
allocated 4 KiB blocks (what `du` would show on a 4 KiB-block filesystem;
the header of the xattr formats is left out, it usually lives in the inode).
  stackcrypt aes-gcm: 40-byte header, units of 4096 + 32
  gocryptfs:          18-byte header, units of 4096 + 32
  aligned (b):        4096-byte header block, stored units of 4096 holding 4064
  aes-xts:            stored = plaintext (no integrity)
"""
import os
import sys

BS = 4096


def units(size, plain_unit):
    full, rem = divmod(size, plain_unit)
    return full, rem


def gcm(size, hdr):
    if size == 0:
        return hdr
    full, rem = units(size, BS)
    return hdr + full * (BS + 32) + (rem + 32 if rem else 0)


def aligned(size):
    if size == 0:
        return BS
    full, rem = units(size, BS - 32)
    return BS + full * BS + (rem + 32 if rem else 0)


def blocks(n):
    return (n + BS - 1) // BS * BS


def main():
    layouts = {
        "stackcrypt aes-gcm (a)": lambda s: gcm(s, 40),
        "gocryptfs": lambda s: gcm(s, 18),
        "aligned units (b)": aligned,
        "aes-xts": lambda s: s,
    }
    plain = plain_blocks = files = 0
    stored = {k: 0 for k in layouts}
    stored_blocks = {k: 0 for k in layouts}
    for top in sys.argv[1:]:
        for d, _, names in os.walk(top):
            for n in names:
                p = os.path.join(d, n)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                s = os.path.getsize(p)
                files += 1
                plain += s
                plain_blocks += blocks(s)
                for k, f in layouts.items():
                    stored[k] += f(s)
                    stored_blocks[k] += blocks(f(s))
    print("%d files, %d bytes (mean %.0f)" % (files, plain, plain / max(files, 1)))
    print("%-24s %12s %12s" % ("layout", "bytes", "4K blocks"))
    for k in layouts:
        print("%-24s %+11.2f%% %+11.2f%%" % (k, 100.0 * (stored[k] / plain - 1),
                                           100.0 * (stored_blocks[k] / plain_blocks - 1)))
    big = 1 << 30
    print("one 1 GiB file: aes-gcm %+.3f%%, aligned %+.3f%%" %
          (100.0 * (gcm(big, 40) / big - 1), 100.0 * (aligned(big) / big - 1)))


if __name__ == "__main__":
    main()
