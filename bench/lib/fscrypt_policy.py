#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Make an empty directory an fscrypt-encrypted one, for the benchmark's
`fscrypt` system (the kernel's own encryption, issue #35's reference).

    fscrypt_policy.py FSROOT DIR

FSROOT is the mount point of a filesystem made with encryption enabled
(ext4: mkfs.ext4 -O encrypt), DIR an empty directory on it.  A fresh
64-byte raw key from the kernel's CSPRNG is added to that filesystem
(FS_IOC_ADD_ENCRYPTION_KEY: it lives in the filesystem's own keyring until
the key is removed or the filesystem is unmounted, which the benchmark
does after every run) and a version 2 policy set on DIR with the fscrypt
tool's defaults: AES-256-XTS contents, AES-256-CTS names, names padded to
32 bytes.  Everything made in DIR afterwards is encrypted.

The ioctls are called directly rather than through the Debian `fscrypt`
tool, which wants a global /etc/fscrypt.conf and a metadata directory on
each filesystem: a run must leave nothing on the machine.  Needs root
(adding a key to a filesystem).  Exit status 0, or 1 with one line on
stderr.
"""
import fcntl
import os
import struct
import sys


def _ioc(direction, nr, size):
    # asm-generic/ioctl.h: dir (2 bits: 1 write, 2 read) | size (14) | type | nr
    return (direction << 30) | (size << 16) | (ord('f') << 8) | nr


# linux/fscrypt.h
KEY_SPEC_TYPE_IDENTIFIER = 2
MODE_AES_256_XTS = 1
MODE_AES_256_CTS = 4
POLICY_FLAGS_PAD_32 = 0x03
ADD_KEY_ARG = struct.Struct('<II32sII32s')          # key_spec, raw_size, key_id, reserved
POLICY_V2 = struct.Struct('<BBBBB3s16s')            # version .. master_key_identifier
FS_IOC_ADD_ENCRYPTION_KEY = _ioc(3, 23, ADD_KEY_ARG.size)
# The set-policy ioctl's number carries the size of the version 1 policy
# (12 bytes) whatever version it is given: the kernel reads the version byte.
FS_IOC_SET_ENCRYPTION_POLICY = _ioc(2, 19, 12)

assert ADD_KEY_ARG.size == 80 and POLICY_V2.size == 24


def dir_ioctl(path, request, arg):
    """ioctl on the directory PATH; OSError on failure."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, request, arg)
    finally:
        os.close(fd)


def main():
    if len(sys.argv) != 3:
        print('usage: fscrypt_policy.py FSROOT DIR', file=sys.stderr)
        return 1
    root, target = sys.argv[1], sys.argv[2]
    raw = os.urandom(64)
    arg = bytearray(ADD_KEY_ARG.pack(KEY_SPEC_TYPE_IDENTIFIER, 0, b'', len(raw), 0, b'') + raw)
    raw = None
    try:
        dir_ioctl(root, FS_IOC_ADD_ENCRYPTION_KEY, arg)
    except OSError as e:
        print(f'fscrypt_policy: adding a key to {root}: {e.strerror}'
              ' (a filesystem without encryption enabled? ext4 needs mkfs -O encrypt)', file=sys.stderr)
        return 1
    identifier = bytes(arg[8:24])       # the kernel fills key_spec.u.identifier
    arg[:] = bytes(len(arg))
    policy = POLICY_V2.pack(2, MODE_AES_256_XTS, MODE_AES_256_CTS, POLICY_FLAGS_PAD_32, 0, b'', identifier)
    try:
        dir_ioctl(target, FS_IOC_SET_ENCRYPTION_POLICY, policy)
    except OSError as e:
        print(f'fscrypt_policy: setting the policy on {target}: {e.strerror}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
