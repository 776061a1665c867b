#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# header_test.sh - per-file header versions through a real mount.  Run under
# harness.sh (a crypt CONFIG) with SC_HDR_VERSION=1 or 2, the version the
# volume writes (1 needs SC_INIT_OPTS=--header-version=1):
#
#   SC_HDR_VERSION=2 harness.sh aes-xts ext4 -- header_test.sh
#
# Checks:
#   - `stackcrypt info` names the volume's header version;
#   - files of 0, 5, 4096 and 10000 bytes made through the mount, and a
#     tiny file rewritten (a tiny-IV rekey stores the header again), carry a
#     header of that version and its size (72 or 56 bytes);
#   - on ext4 (256-byte inodes, the mkfs default for these images): an empty
#     backing file takes no block with a version 2 header (it fits in the
#     inode) and one 4 KiB xattr block with version 1 -- the write
#     amplification of small-file creates (docs/format.md section 2);
#   - everything reads back after a remount.
# Exits 0 if all hold, 1 with a FAIL line per broken property otherwise.

set -u
. "$(dirname "$0")/test_lib.sh"
sc_test_init header MNT BACKING SC_REMOUNT SC_HDR_VERSION SC_BIN FSTYPE SC_HARNESS_STATE
want_len=$([ "$SC_HDR_VERSION" = 1 ] && echo 72 || echo 56)

if [ "$SC_HDR_VERSION" = 1 ]; then
	"$SC_BIN" info "$BACKING" | grep -q "new files get version 1 headers" ||
		fail "info does not say version 1 headers"
else
	"$SC_BIN" info "$BACKING" | grep -q "new files get version 2 headers" ||
		fail "info does not say version 2 headers"
fi

: >"$MNT/empty" || fail "create empty"
printf 'tiny!' >"$MNT/tiny" || fail "create tiny"
head -c 4096 /dev/urandom >"$MNT/unit" || fail "create unit"
head -c 10000 /dev/urandom >"$MNT/big" || fail "create big"
printf 'again' >"$MNT/rekeyed" && printf 'other' >"$MNT/rekeyed" || fail "rewrite tiny"
for f in unit big; do cp "$MNT/$f" "$SC_HARNESS_STATE/$f.want"; done
sync

# the header of each backing file: "<version byte> <length>"
hdr_of() {
	python3 -c 'import os, sys; h = os.getxattr(sys.argv[1], "user.stackcrypt"); print(h[0], len(h))' "$1"
}
for f in empty tiny unit big rekeyed; do
	got=$(hdr_of "$BACKING/$f") || { fail "$f: no header"; continue; }
	[ "$got" = "$SC_HDR_VERSION $want_len" ] ||
		fail "$f: header is (version length) '$got', want '$SC_HDR_VERSION $want_len'"
done

if [ "$FSTYPE" = ext4 ]; then
	blocks=$(stat -c %b "$BACKING/empty")
	echo "header: version $SC_HDR_VERSION, an empty backing file holds $blocks 512-byte blocks"
	if [ "$SC_HDR_VERSION" = 2 ]; then
		[ "$blocks" = 0 ] || fail "empty file: $blocks blocks: the header left the inode"
	else
		[ "$blocks" -gt 0 ] || fail "empty file: version 1 header but no xattr block"
	fi
fi

"$SC_REMOUNT" || { fail "remount"; exit 1; }
[ "$(cat "$MNT/tiny")" = "tiny!" ] || fail "tiny after remount"
[ "$(cat "$MNT/rekeyed")" = "other" ] || fail "rekeyed tiny file after remount"
[ ! -s "$MNT/empty" ] || fail "empty file not empty after remount"
for f in unit big; do
	cmp -s "$MNT/$f" "$SC_HARNESS_STATE/$f.want" || fail "$f after remount"
done
exit "$failed"
