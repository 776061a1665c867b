#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gen_gcm_vectors.py - the known-answer vectors of stackcrypt's
authenticated format (docs/format.md, section 10, "The authenticated format
(aes-gcm)"), computed by an implementation independent of crypto/fhdr.c and
crypto/gcm.c: Python's `cryptography` package (its AESGCM, HKDF and HMAC).

Not run by CI: the outputs are pasted as constants into
tests/crypto/test_gcm_kat.c and into docs/format.md.  Run it from the source
root with

    python3 tests/crypto/gen_gcm_vectors.py            # C constants
    python3 tests/crypto/gen_gcm_vectors.py --markdown # the docs block

and diff against the constants when the format is in question.  Before
printing it checks that its AESGCM round-trips and refuses a flipped tag,
and prints one bare AES-256-GCM encryption under a 128-bit IV
(V_GCM16_CHECK), which test_gcm_kat.c recomputes with OpenSSL's EVP
interface: the non-96-bit IV path (IV hashed with GHASH into the first
counter block) is the one most implementations get wrong.

What is independent here is the format's composition -- header bytes,
labels, HKDF salts, associated data, unit layout, offsets -- written again
from docs/format.md; the primitives underneath (`cryptography` binds its
own copy of OpenSSL) are not.

The example file (block size 512): unit 0 a hole (never written), unit 1 a
whole unit of the bytes i*7+1 mod 256, unit 2 the final 13 bytes
"hello, world\\n".  Nonces are fixed here (random in real use).
"""
import hashlib
import hmac
import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

MASTER = bytes(range(32))                      # 000102...1f
FILE_ID = bytes(range(0xb0, 0xc0))             # b0b1...bf (random in real use)
BS = 512
LOG2_BS = 9
MAGIC = b"scgm"
VERSION = 1
FLAGS = 0
NONCE1 = bytes(range(0x10, 0x20))              # unit 1's nonce
NONCE2 = bytes(range(0x20, 0x30))              # unit 2's nonce
UNIT1 = bytes((i * 7 + 1) % 256 for i in range(BS))
UNIT2 = b"hello, world\n"

LABEL_HDR_MAC = b"stackcrypt/v2 gcm-header-mac"
LABEL_FILE_KEY = b"stackcrypt/v2 gcm-file-key"


def hkdf(ikm, salt, info, length):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def header():
    body = MAGIC + struct.pack("<BBH", VERSION, LOG2_BS, FLAGS) + FILE_ID
    assert len(body) == 24
    mac_key = hkdf(MASTER, None, LABEL_HDR_MAC, 32)
    mac = hmac.new(mac_key, body, hashlib.sha256).digest()[:16]
    return mac_key, body, body + mac


def seal(key, body, index, nonce, pt):
    aad = body + struct.pack("<Q", index)
    ct_tag = AESGCM(key).encrypt(nonce, pt, aad)
    return nonce + ct_tag


def selfcheck():
    # All-zero key and plaintext block, IV 000102..0f (test_gcm_kat.c
    # recomputes it with EVP).
    out = AESGCM(bytes(32)).encrypt(bytes(range(16)), bytes(16), b"")
    assert len(out) == 32
    # Round trip and a tag failure on a flipped bit.
    k = bytes(range(32))
    c = AESGCM(k).encrypt(bytes(16), b"x", b"a")
    assert AESGCM(k).decrypt(bytes(16), c, b"a") == b"x"
    try:
        AESGCM(k).decrypt(bytes(16), c[:-1] + bytes([c[-1] ^ 1]), b"a")
        raise SystemExit("tag check did not fail")
    except Exception as e:  # InvalidTag
        assert type(e).__name__ == "InvalidTag"
    return out


def vectors():
    mac_key, body, hdr = header()
    file_key = hkdf(MASTER, FILE_ID, LABEL_FILE_KEY, 32)
    hole = bytes(BS + 32)
    u1 = seal(file_key, body, 1, NONCE1, UNIT1)
    u2 = seal(file_key, body, 2, NONCE2, UNIT2)
    stored = hdr + hole + u1 + u2
    return {
        "master": MASTER, "file_id": FILE_ID, "mac_key": mac_key,
        "file_key": file_key, "header": hdr, "aad1": body + struct.pack("<Q", 1),
        "unit1": u1, "unit2": u2, "stored": stored,
    }


def main():
    gcm_check = selfcheck()
    v = vectors()
    h = lambda b: b.hex()
    if "--markdown" in sys.argv:
        print("master key      " + h(v["master"]))
        print("file id         " + h(v["file_id"]))
        print("header MAC key  " + h(v["mac_key"]))
        print("file key        " + h(v["file_key"]))
        print("header (40 B)   " + h(v["header"]))
        print("AAD of unit 1   " + h(v["aad1"]))
        print("unit 0          (hole: %d zero bytes at stored offset 40)" % (BS + 32))
        print("unit 1 at %d:" % (40 + BS + 32))
        print("  nonce         " + h(v["unit1"][:16]))
        print("  ct[0..31]     " + h(v["unit1"][16:48]))
        print("  tag           " + h(v["unit1"][-16:]))
        print("  SHA-256 of the %d stored bytes" % len(v["unit1"]))
        print("                " + hashlib.sha256(v["unit1"]).hexdigest())
        print("unit 2 at %d (%d B):" % (40 + 2 * (BS + 32), len(v["unit2"])))
        print("  " + h(v["unit2"]))
        print("whole backing file: %d bytes, SHA-256" % len(v["stored"]))
        print("                " + hashlib.sha256(v["stored"]).hexdigest())
        print("GCM, 128-bit IV check: key 00*32, IV 000102..0f, pt 00*16 ->")
        print("  " + h(gcm_check))
        return
    for name in ["master", "file_id", "mac_key", "file_key", "header", "aad1", "unit1",
                 "unit2"]:
        print('#define V_%s "%s"' % (name.upper(), h(v[name])))
    print('#define V_STORED_SHA256 "%s"' % hashlib.sha256(v["stored"]).hexdigest())
    print('#define V_STORED_LEN %d' % len(v["stored"]))
    print('#define V_GCM16_CHECK "%s"' % h(gcm_check))


if __name__ == "__main__":
    main()
