#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gcm_journal.py - what a kill -9 of an aes-gcm mount leaves, made offline.

    gcm_journal.py MASTERKEY_FILE BLOCK_SIZE BACKING REL UNIT rewrite|append SAVE [v1]

Composes, from docs/format.md 10.10 alone (Python's `cryptography`, as
gcm_file.py does for the data format), the intent journal BACKING/sc.journal
(version 2, or with v1 an older build's version 1 journal) of a mount that
stopped uncleanly (DIRTY, a random run id; v1: run 1) holding one record for the
file BACKING/REL (written by gcm_file.py), and the torn file that the
record's write left:
  rewrite  unit UNIT (a whole unit inside the file) sealed anew (plaintext
           of 0xa5 bytes) and stored up to the first page boundary inside
           it only: new head, old tail.  The record carries the new unit.
  append   units UNIT and UNIT + 1 appended (UNIT must be the unit after
           the file's last one): the file cut 100 bytes into unit UNIT.
           The record names the units and carries no data.
SAVE gets the bytes the repaired unit must hold afterwards (rewrite: the
new sealed unit; append: nothing, the file must end at UNIT's start).
"""
import hashlib
import hmac
import os
import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

LABEL_FILE_KEY = b"stackcrypt/v2 gcm-file-key"
LABEL_JOURNAL_MAC = b"stackcrypt/v2 journal-mac"
HDR_BLOCK = 4096
REC_SIZE = 96


def hkdf(ikm, salt, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def main():
    if len(sys.argv) not in (8, 9) or sys.argv[8:] not in ([], ["v1"]):
        sys.exit(__doc__.strip().splitlines()[2])
    v1 = sys.argv[8:] == ["v1"]
    with open(sys.argv[1]) as f:
        master = bytes.fromhex(f.read().strip().replace("-", ""))
    bs = int(sys.argv[2])
    backing, rel, unit, mode, save = sys.argv[3], sys.argv[4], int(sys.argv[5]), \
        sys.argv[6], sys.argv[7]
    ulen = bs + 32
    path = os.path.join(backing, rel)
    with open(path, "rb") as f:
        stored = f.read()
    hdr = stored[:40]
    uoff = 40 + unit * ulen
    if mode == "rewrite":
        if uoff + ulen > len(stored):
            sys.exit("gcm_journal.py: unit %d is not a whole unit of %s" % (unit, rel))
        gcm = AESGCM(hkdf(master, hdr[8:24], LABEL_FILE_KEY))
        nonce = os.urandom(16)
        new = nonce + gcm.encrypt(nonce, b"\xa5" * bs, hdr[:24] + struct.pack("<Q", unit))
        ndata, nunits, data = 1, 1, new
        torn = (uoff // 4096 + 1) * 4096 - uoff     # up to the page boundary inside it
        body = stored[:uoff] + new[:torn] + stored[uoff + torn:]
    elif mode == "append":
        if uoff != len(stored):
            sys.exit("gcm_journal.py: unit %d does not start at the end of %s" % (unit, rel))
        ndata, nunits, data, new = 0, 2, b"", b""
        body = stored + os.urandom(100)
    else:
        sys.exit("gcm_journal.py: mode is rewrite or append")
    cap = 4 if bs >= 65536 else 262144 // bs
    slot_size = (REC_SIZE + cap * ulen + 4095) & ~4095
    key = hkdf(master, None, LABEL_JOURNAL_MAC)
    if v1:
        jhdr = b"scjournl" + struct.pack("<IIIIII", 1, 1, bs, 16, slot_size, 0) + \
            struct.pack("<QQ", 1, 0) + bytes(16)
        rec = b"scjr" + struct.pack("<B3xII", 1, ndata, len(data)) + \
            struct.pack("<Q", (1 << 32) | 1) + hdr[8:24] + \
            struct.pack("<QQQ", unit, nunits, len(stored))
    else:
        run = os.urandom(16)
        jhdr = b"scjournl" + struct.pack("<IIIIII", 2, 1, bs, 16, slot_size, 0) + run + \
            struct.pack("<Q", 0) + bytes(8)
        jhdr += hmac.new(key, jhdr, hashlib.sha256).digest()[:16]   # no slot pinned
        rec = b"scjr" + struct.pack("<B3xII", 2, ndata, len(data)) + \
            struct.pack("<Q", 1) + run + hdr[8:24] + \
            struct.pack("<QQQ", unit, nunits, len(stored))
    rec += hmac.new(key, rec, hashlib.sha256).digest()[:16]
    with open(os.path.join(backing, "sc.journal"), "wb") as f:
        f.write(jhdr.ljust(HDR_BLOCK, b"\0") + rec + data)
    with open(path, "wb") as f:
        f.write(body)
    with open(save, "wb") as f:
        f.write(new)


if __name__ == "__main__":
    main()
