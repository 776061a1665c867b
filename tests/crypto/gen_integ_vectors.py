#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gen_integ_vectors.py - the known-answer vectors of integrity volumes
(docs/format.md section 11: version 2 file headers, place tags, binding
records, version 3 directory records, listing digests, the unit tree, the
dirty table and the freshness record), composed again from the document
with nothing but Python's `hmac` and `hashlib` (HKDF written out from
RFC 5869), independently of crypto/integ.c.

Not run by CI: the outputs are pasted as constants into
tests/crypto/test_integ.c and into docs/format.md 11.13.  From the source
root:

    python3 tests/crypto/gen_integ_vectors.py            # C constants
    python3 tests/crypto/gen_integ_vectors.py --markdown # the docs block

Before printing it checks its HKDF against RFC 5869's test case 1 and its
base64url against RFC 4648's examples.
"""
import base64
import hashlib
import hmac
import struct
import sys

MASTER = bytes(range(32))                      # 000102...1f
FILE_ID = bytes(range(0xb0, 0xc0))             # b0b1...bf
DIR_NONCE = bytes(range(0xa0, 0xb0))           # a0a1...af: the entry's directory
RUN = bytes(range(0xe0, 0xf0))                 # a run id (10.10)
UUID = bytes(range(0xf0, 0x100))               # the volume uuid
CLIENT = bytes([0x55] * 16)                    # a client id
BS_LOG2 = 12                                   # unit size 4096
# The encodings of the 1- and 15-byte names in directory a0..af (format.md 9.10).
E1 = b"Y6G2dzFufoD2yW2ILP8RRG1Nno8o03BCj1YC6VQzScM"
E15 = b"J19YO8MuVaO4VsAO3tMfL2ubou-i9UhAl3uqsvaVmgI"

LABELS = {
    "k_h": b"stackcrypt/v4 integ-header-mac",
    "k_e": b"stackcrypt/v4 entry-tag",
    "k_r": b"stackcrypt/v4 dirrec-tag",
    "k_d": b"stackcrypt/v4 dir-digest",
    "k_u": b"stackcrypt/v4 unit-tree",
    "k_j": b"stackcrypt/v4 dirty-mac",
    "k_s": b"stackcrypt/v4 state-mac",
}
LABEL_FILE_KEY = b"stackcrypt/v4 integ-file-key"

F_TRACKS, F_HOLES, F_LINKED, F_INTERNAL, F_TREE = 0x1, 0x2, 0x4, 0x8, 0x10


def hkdf(ikm, salt, info, length):
    """RFC 5869, SHA-256: extract then expand."""
    prk = hmac.new(salt if salt else bytes(32), ikm, hashlib.sha256).digest()
    out, t, i = b"", b"", 1
    while len(out) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        out += t
        i += 1
    return out[:length]


def mac16(key, msg):
    return hmac.new(key, msg, hashlib.sha256).digest()[:16]


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=")


def selfcheck():
    # RFC 5869 A.1
    okm = hkdf(bytes([0x0b] * 22), bytes(range(13)), bytes(range(0xf0, 0xfa)), 42)
    assert okm.hex() == ("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
                         "34007208d5b887185865"), "HKDF"
    # RFC 4648 section 10 (unpadded) and the url-safe alphabet
    assert b64u(b"fooba") == b"Zm9vYmE" and b64u(b"\xfb\xff") == b"-_8"


KEYS = {name: hkdf(MASTER, None, label, 32) for name, label in LABELS.items()}


def place_tag(file_id, n, e):
    return mac16(KEYS["k_e"], b"\x05" + file_id + n + e)


def header(flags, gen, size, root, tag):
    body = (b"scgm" + struct.pack("<BBH", 2, BS_LOG2, flags) + FILE_ID +
            struct.pack("<QQ", gen, size) + root + tag)
    assert len(body) == 72
    return body + mac16(KEYS["k_h"], b"\x21" + body)


def aad(hdr, idx):
    return hdr[0:6] + b"\x00\x00" + hdr[8:24] + struct.pack("<Q", idx)


def bindrec(file_id, gen, n, e):
    tag = mac16(KEYS["k_e"], b"\x06" + file_id + struct.pack("<Q", gen) + n + e)
    p = b"\x01" + file_id + struct.pack("<Q", gen) + tag
    assert len(p) == 41
    enc = b64u(p)
    assert len(enc) == 55
    return enc


def elem(n, name):
    return mac16(KEYS["k_d"], b"\x07" + n + name)


def xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def leaf(i):
    return bytes((16 * i + k) & 0xff for k in range(16))


def node(level, index, children):
    assert 1 <= len(children) <= 64
    return mac16(KEYS["k_u"], b"\x11" + FILE_ID + bytes([level]) + struct.pack("<Q", index) +
                 b"".join(children))


def tree_root(n):
    """The root of a file of n units whose leaves are leaf(i)."""
    if n == 0:
        return mac16(KEYS["k_u"], b"\x12" + FILE_ID + struct.pack("<Q", 0))
    level, nodes = 1, [leaf(i) for i in range(n)]
    while True:
        nodes = [node(level, j, nodes[64 * j:64 * j + 64]) for j in range((len(nodes) + 63) // 64)]
        if len(nodes) == 1:
            break
        level += 1
    return mac16(KEYS["k_u"], b"\x12" + FILE_ID + struct.pack("<Q", n) + nodes[0])


def vectors():
    v = dict(KEYS)
    v["file_key"] = hkdf(MASTER, FILE_ID, LABEL_FILE_KEY, 32)
    v["tag_e1"] = place_tag(FILE_ID, DIR_NONCE, E1)
    v["root2"] = tree_root(2)
    v["root0"] = tree_root(0)
    v["root65"] = tree_root(65)
    v["node1_0_of2"] = node(1, 0, [leaf(0), leaf(1)])
    # A bound file of 5000 bytes (2 units), gen 3, on a tree volume.
    v["hdr_bound"] = header(F_TRACKS | F_TREE, 3, 5000, v["root2"], v["tag_e1"])
    # A hard-linked empty file, gen 4.
    v["hdr_linked"] = header(F_TRACKS | F_LINKED | F_TREE, 4, 0, v["root0"], bytes(16))
    v["aad1"] = aad(v["hdr_bound"], 1)
    v["bind_g3"] = bindrec(FILE_ID, 3, DIR_NONCE, E1)
    v["bind_g0"] = bindrec(FILE_ID, 0, DIR_NONCE, E1)
    v["elem_e1"] = elem(DIR_NONCE, E1)
    v["elem_e15"] = elem(DIR_NONCE, E15)
    digest = xor(v["elem_e1"], v["elem_e15"])
    v["digest"] = digest
    # The listing record of a0..af (11.7), gen 5: E15 added to {E1}, still pending.
    v["dlist"] = (b"scdl" + bytes([1, 1, len(E15), 0]) + DIR_NONCE +
                  struct.pack("<QQ", 5, 2) + digest + struct.pack("<Q", 1) + v["elem_e1"] +
                  E15 + bytes(256 - len(E15)))
    assert len(v["dlist"]) == 336
    entry = b"scjd" + b"\x01\x00\x00\x00" + RUN + FILE_ID + struct.pack("<Q", 3)
    assert len(entry) == 48
    v["dirty_entry"] = entry + mac16(KEYS["k_j"], b"\x08" + entry)
    # A create at (a0..af, E1), killed before its header: kind 3, the place's create tag.
    v["create_e1"] = mac16(KEYS["k_j"], b"\x0b" + DIR_NONCE + E1)
    centry = b"scjd" + b"\x03\x00\x00\x00" + RUN + v["create_e1"] + struct.pack("<Q", 0)
    v["dirty_create"] = centry + mac16(KEYS["k_j"], b"\x08" + centry)
    # A rename of file b0..bf at gen 3 to (a0..af, E15): kind 4, its rename tag.
    v["rename_e15"] = mac16(KEYS["k_j"], b"\x0c" + FILE_ID + DIR_NONCE + E15)
    sh = b"scstate1" + struct.pack("<II", 1, 0) + UUID + CLIENT
    assert len(sh) == 48
    v["state_hdr"] = sh + mac16(KEYS["k_s"], b"\x09" + sh)
    seg = (b"scsg" + struct.pack("<IQ", 1, 1) + RUN +
           b"\x01" + bytes(7) + FILE_ID + struct.pack("<Q", 3))
    assert len(seg) == 64
    v["state_seg"] = seg + mac16(KEYS["k_s"], b"\x0a" + v["state_hdr"][48:64] + seg)
    return v


ORDER = ["k_h", "k_e", "k_r", "k_d", "k_u", "k_j", "k_s", "file_key", "tag_e1",
         "node1_0_of2", "root2", "root0", "root65", "hdr_bound", "hdr_linked", "aad1",
         "bind_g3", "bind_g0", "elem_e1", "elem_e15", "digest", "dlist", "dirty_entry", "create_e1", "dirty_create", "rename_e15", "state_hdr",
         "state_seg"]

DOC = {
    "k_h": "K_h (integ-header-mac)", "k_e": "K_e (entry-tag)", "k_r": "K_r (dirrec-tag)",
    "k_d": "K_d (dir-digest)", "k_u": "K_u (unit-tree)", "k_j": "K_j (dirty-mac)",
    "k_s": "K_s (state-mac)", "file_key": "file key (integ-file-key, salt = file id)",
    "tag_e1": "place tag of the file at (a0..af, E1)",
    "node1_0_of2": "node(1, 0) of a 2-unit file, leaf(i) = bytes 16i .. 16i+15",
    "root2": "root, 2 units", "root0": "root, 0 units",
    "root65": "root, 65 units (two level-1 nodes, one level-2 node)",
    "hdr_bound": "header: TRACKS|TREE, gen 3, size 5000, root of 2 units, bound at (a0..af, E1)",
    "hdr_linked": "header: TRACKS|LINKED|TREE, gen 4, size 0, root of 0 units",
    "aad1": "AAD of unit 1 of that bound file",
    "bind_g3": "binding record of the file at (a0..af, E1), g = 3 (a rename's)",
    "bind_g0": "binding record, g = 0 (a hard link's)",
    "elem_e1": "elem(E1) in a0..af", "elem_e15": "elem(E15) in a0..af",
    "digest": "digest of {E1, E15}",
    "dlist": "listing record of a0..af: gen 5, {E1, E15} after E15 was added (pending), {E1} before",
    "dirty_entry": "dirty table entry: file b0..bf, run e0..ef, gen 3",
    "create_e1": "create tag of (a0..af, E1)",
    "dirty_create": "dirty table entry: a create at (a0..af, E1), run e0..ef",
    "rename_e15": "rename tag of file b0..bf going to (a0..af, E15)",
    "state_hdr": "freshness record header: uuid f0..ff, client 55..55, flags 0",
    "state_seg": "its first segment: seq 1, run e0..ef, file b0..bf at gen 3",
}


def main():
    selfcheck()
    v = vectors()

    def show(x):
        return x.decode() if isinstance(x, bytes) and x.isascii() and len(x) == 55 else x.hex()
    if "--markdown" in sys.argv:
        print("```")
        for k in ORDER:
            print(DOC[k])
            print("  " + show(v[k]))
        print("```")
        return
    for k in ORDER:
        print('#define V_%s "%s"' % (k.upper(), show(v[k])))


if __name__ == "__main__":
    main()
