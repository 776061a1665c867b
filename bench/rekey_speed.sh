#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rekey_speed.sh - stackcrypt rekey against a plain copy of the backing tree
# (issue #32: target >= 0.5x the copy), on an ext4 loop image (not tmpfs).
#
#   bench/rekey_speed.sh BUILD/fs/stackcrypt [FILES] [BIG_MIB] [CIPHER]
#
# One volume (init's default, or --cipher=CIPHER with names in the clear)
# holding FILES 4 KiB files in 10 directories and one BIG_MIB MiB file,
# written through a mount; then, caches dropped before each, the time of
# `cp -a BACKING COPY && sync` and of `stackcrypt rekey BACKING` (which
# syncs the backing once, after its copy).  Prints MB/s (plaintext bytes) and files/s
# of both and their ratio.  Needs root (loop device, mount, drop_caches).
set -eu
BIN=$(realpath "$1")
FILES=${2:-2000}
BIG=${3:-256}
CIPHER=${4:-}
W=$(mktemp -d /var/tmp/sc-rekey-bench.XXXXXX)
LOOP=
cleanup() {
	fusermount3 -u "$W/m" 2>/dev/null || true
	umount "$W/fs" 2>/dev/null || true
	[ -z "$LOOP" ] || losetup -d "$LOOP"
	rm -rf "$W"
}
trap cleanup EXIT
truncate -s 3G "$W/img"
LOOP=$(losetup -f --show "$W/img")
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
mkdir -p "$W/fs" "$W/m"
mount "$LOOP" "$W/fs"
mkdir "$W/fs/b"
(umask 077; printf 'bench pass\n' >"$W/pw")
opts=(--scrypt-n=1024)
[ -z "$CIPHER" ] || opts+=(--cipher="$CIPHER" --plaintext-names)
"$BIN" init "${opts[@]}" --passfile="$W/pw" "$W/fs/b" >/dev/null 2>&1
"$BIN" mount --passfile="$W/pw" "$W/fs/b" "$W/m" >/dev/null 2>&1
for d in $(seq 10); do
	mkdir "$W/m/d$d"
	for f in $(seq $((FILES / 10))); do
		head -c 4096 /dev/urandom >"$W/m/d$d/f$f"
	done
done
head -c $((BIG << 20)) /dev/urandom >"$W/m/big"
fusermount3 -u "$W/m"
bytes=$((FILES * 4096 + (BIG << 20)))
entries=$((FILES + 11))

timed() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}
tcp=$(timed bash -c "cp -a '$W/fs/b' '$W/fs/copy' && sync")
rm -rf "$W/fs/copy"
trk=$(timed "$BIN" rekey --passfile="$W/pw" "$W/fs/b")
"$BIN" fsck --passfile="$W/pw" "$W/fs/b" >/dev/null 2>&1 || { echo "fsck failed after rekey" >&2; exit 1; }
printf 'volume: %s, %d files of 4 KiB + %d MiB, %d entries, %.1f MB\n' \
	"${CIPHER:-default (aes-gcm, names)}" "$FILES" "$BIG" "$entries" "$(echo "$bytes / 1000000" | bc -l)"
for what in cp rk; do
	t=$([ $what = cp ] && echo "$tcp" || echo "$trk")
	printf '%-24s %6.2f s  %7.1f MB/s  %7.0f files/s\n' \
		"$([ $what = cp ] && echo 'cp -a BACKING + sync' || echo 'stackcrypt rekey')" \
		"$t" "$(echo "$bytes / 1000000 / $t" | bc -l)" "$(echo "$entries / $t" | bc -l)"
done
printf 'rekey / copy speed: %.2f\n' "$(echo "$tcp / $trk" | bc -l)"
