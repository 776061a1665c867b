#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rekey_speed.sh - stackcrypt rekey against a plain copy of the backing tree
# (issue #32: target >= 0.5x the copy), on an ext4 loop image (not tmpfs).
#
#   bench/rekey_speed.sh BUILD/fs/stackcrypt [FILES] [BIG_MIB] [CIPHER] [ROUNDS]
#   REKEY_VS=OTHER/fs/stackcrypt bench/rekey_speed.sh ...
#
# One volume (init's default, or --cipher=CIPHER with names in the clear)
# holding FILES 4 KiB files in 10 directories and one BIG_MIB MiB file,
# written through a mount; then, caches dropped before each, the time of
# `cp -a BACKING COPY && sync` and of `stackcrypt rekey BACKING` (which
# syncs the backing once, after its copy), in turn, ROUNDS times (default
# 1; a rekey of a rekeyed volume is the same work).  With REKEY_VS, each
# round also times that build's rekey (another branch's, to compare two
# builds in one run).  Prints MB/s (plaintext bytes) and files/s of each
# run, each round's ratio, and the median ratio.  Needs root (loop device,
# mount, drop_caches).
set -eu
BIN=$(realpath "$1")
FILES=${2:-2000}
BIG=${3:-256}
CIPHER=${4:-}
ROUNDS=${5:-1}
VS=${REKEY_VS:+$(realpath "$REKEY_VS")}
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
row() {	# WHAT SECONDS
	printf '%-24s %6.2f s  %7.1f MB/s  %7.0f files/s\n' "$1" "$2" \
		"$(echo "$bytes / 1000000 / $2" | bc -l)" "$(echo "$entries / $2" | bc -l)"
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

printf 'volume: %s, %d files of 4 KiB + %d MiB, %d entries, %.1f MB, %d round(s)\n' \
	"${CIPHER:-default (aes-gcm, names)}" "$FILES" "$BIG" "$entries" \
	"$(echo "$bytes / 1000000" | bc -l)" "$ROUNDS"
: >"$W/ratios"
: >"$W/ratios_vs"
# rekey_run BIN: seconds of one rekey by BIN, fsck checked after it
rekey_run() {
	local t
	t=$(timed "$1" rekey --passfile="$W/pw" "$W/fs/b")
	"$BIN" fsck --passfile="$W/pw" "$W/fs/b" >/dev/null 2>&1 ||
		{ echo "fsck failed after the rekey of $1" >&2; exit 1; }
	echo "$t"
}
for round in $(seq "$ROUNDS"); do
	tcp=$(timed bash -c "cp -a '$W/fs/b' '$W/fs/copy' && sync")
	rm -rf "$W/fs/copy"
	# with REKEY_VS, the two builds take turns at going first
	[ -z "$VS" ] || [ $((round % 2)) = 1 ] || tvs=$(rekey_run "$VS")
	trk=$(rekey_run "$BIN")
	[ -z "$VS" ] || [ $((round % 2)) = 0 ] || tvs=$(rekey_run "$VS")
	echo "round $round:"
	row 'cp -a BACKING + sync' "$tcp"
	row 'stackcrypt rekey' "$trk"
	echo "$tcp / $trk" | bc -l >>"$W/ratios"
	if [ -n "$VS" ]; then
		row 'REKEY_VS rekey' "$tvs"
		echo "$tcp / $tvs" | bc -l >>"$W/ratios_vs"
		printf 'rekey / copy speed: %.2f, REKEY_VS: %.2f\n' "$(echo "$tcp / $trk" | bc -l)" \
			"$(echo "$tcp / $tvs" | bc -l)"
	else
		printf 'rekey / copy speed: %.2f\n' "$(echo "$tcp / $trk" | bc -l)"
	fi
done
printf 'median rekey / copy speed over %d round(s): %.2f\n' "$ROUNDS" "$(median <"$W/ratios")"
[ -z "$VS" ] ||
	printf 'median REKEY_VS rekey / copy speed: %.2f\n' "$(median <"$W/ratios_vs")"
