#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A big directory on the default volume (aes-gcm, encrypted names, nonce
# files), issue #35: tests/tools/sc_bigdir.c makes 3 000 entries in the
# mount and in a plain directory beside it (names of 1 to 160 bytes and
# one in 333 of 161 to 255, stored under the long form with a side file)
# and compares them: every name listed exactly once with its type across
# many readdir replies, seekdir to 300 saved offsets (half of them in a
# stream opened anew: a listing restarted from an offset), lstat, renames,
# listings while another process creates and removes entries, and the
# backing directory empty after the removal.  The listing path it checks
# is the one a 1 000 000-entry directory takes (docs/performance.md 18),
# at a size CI runs in seconds.
. "$(dirname "$0")/lib.sh"

: "${SC_BIGDIR:?SC_BIGDIR must point at tests/tools/sc_bigdir}"
[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }
mkdir -p "$T/m"

new_volume "$T/v" --cipher=aes-gcm --encrypt-names || finish
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
mkdir "$T/ref"
check "sc_bigdir: mount and plain directory agree" \
	"$SC_BIGDIR" -n 3000 -b "$T/v" "$T/m/bigdir" "$T/ref/bigdir"
sc_umount "$T/m"
check "daemon logged only the mounted line: $(cat "$T/daemon.log")" \
	test "$(grep -vc '^stackcrypt: mounted ' "$T/daemon.log")" = 0
finish
