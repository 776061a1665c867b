#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gcm_file.py - writes backing files of an aes-gcm volume without a mount.

    gcm_file.py [--flags=N] MASTERKEY_FILE BLOCK_SIZE PATH SIZE SEED [HOLE...]

Writes PATH as the backing file of a plaintext of SIZE bytes (a pattern
drawn from SEED: pattern() below, which the tests recompute to compare)
in the format of docs/format.md section 10, composed again here with
Python's `cryptography` (as tests/crypto/gen_gcm_vectors.py does): the
40-byte header with a random file id and its MAC, then every unit as
random nonce || AES-256-GCM ciphertext || tag, the associated data the
header's first 24 bytes and the unit index.  SIZE 0 writes the header
alone (an empty file).  The whole units listed as HOLE are written as
bs + 32 zero bytes, what a writer that extended the file leaves (their
plaintext reads as zeros, so pattern() is zeroed there too).  --flags sets
the header's flags (docs/format.md 10.2: 0, the default, a file from
before hole tracking; 1 tracks holes and has none; 3 may hold holes); the
units' associated data has the "may hold holes" bit (2) clear.

MASTERKEY_FILE is what `init --save-masterkey` writes (64 hex digits in
groups of 8).  So the fsck tests (tests/cli/t_fsck_gcm.sh) get files of
every shape and damage them byte by byte without depending on the mount;
the mount-level tests (tests/reliability/t_gcm_tamper.py) use files
written through the mount.
"""
import hashlib
import hmac
import os
import random
import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

LABEL_HDR_MAC = b"stackcrypt/v2 gcm-header-mac"
LABEL_FILE_KEY = b"stackcrypt/v2 gcm-file-key"


def hkdf(ikm, salt, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def pattern(size, seed, holes, bs):
    data = bytearray(random.Random(seed).randbytes(size))
    for h in holes:
        data[h * bs:(h + 1) * bs] = bytes(bs)
    return bytes(data)


def main():
    flags = 0
    if len(sys.argv) > 1 and sys.argv[1].startswith("--flags="):
        flags = int(sys.argv.pop(1)[len("--flags="):])
    if len(sys.argv) < 6:
        sys.exit("usage: gcm_file.py [--flags=N] MASTERKEY_FILE BLOCK_SIZE PATH SIZE SEED [HOLE...]")
    with open(sys.argv[1]) as f:
        master = bytes.fromhex(f.read().strip().replace("-", ""))
    bs = int(sys.argv[2])
    path, size, seed = sys.argv[3], int(sys.argv[4]), sys.argv[5]
    holes = [int(h) for h in sys.argv[6:]]
    if len(master) != 32 or bs & (bs - 1) or not 512 <= bs <= 65536:
        sys.exit("gcm_file.py: bad master key or block size")
    if any((h + 1) * bs > size for h in holes):
        sys.exit("gcm_file.py: a hole must be a whole unit inside the file")
    body = b"scgm" + struct.pack("<BBH", 1, bs.bit_length() - 1, flags) + os.urandom(16)
    mac = hmac.new(hkdf(master, None, LABEL_HDR_MAC), body, hashlib.sha256).digest()[:16]
    aad = body[:6] + struct.pack("<H", flags & ~2) + body[8:]
    gcm = AESGCM(hkdf(master, body[8:24], LABEL_FILE_KEY))
    data = pattern(size, seed, holes, bs)
    out = [body + mac]
    for i in range(0, (size + bs - 1) // bs):
        if i in holes:
            out.append(bytes(bs + 32))
            continue
        nonce = os.urandom(16)
        out.append(nonce + gcm.encrypt(nonce, data[i * bs:(i + 1) * bs],
                                       aad + struct.pack("<Q", i)))
    with open(path, "wb") as f:
        f.write(b"".join(out))


if __name__ == "__main__":
    main()
