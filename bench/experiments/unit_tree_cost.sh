#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# unit_tree_cost.sh - what the unit tree (init --unit-tree, docs/format.md
# 11.10) costs on the dd and fio rows, two volume kinds taking turns.
#
#   [PAIRS=5] [MIB=128] bash bench/experiments/unit_tree_cost.sh \
#       'BIN_A [INIT_OPTS...]' 'BIN_B [INIT_OPTS...]'
#
# Each round makes a fresh volume with A's binary and init options (a
# random key file, the freshness record in the round's own state dir),
# mounts it and times, each on a fresh mount (the kernel's page cache of
# the mount dropped with it; the backing's stays warm):
#   w4k  dd bs=4K of MIB MiB of zeros into a new file, conv=fdatasync
#   r4k  dd bs=4K of it to /dev/null
#   w1m  dd bs=1M of MIB MiB into another new file, conv=fdatasync
#   r1m  dd bs=1M of it to /dev/null
#   fw   fio 4 KiB randwrite, direct, 1 job, 5 s, over the 1M file (IOPS)
#   one  dd of one 4 KiB block from the middle of it, direct, the first
#        read after a mount: where a tree volume reads the file's tags
#   fr   fio 4 KiB randread, direct, 1 job, 5 s, over it, right after (IOPS)
# then the same with B.  A first read of a file after a mount (r4k, r1m,
# one) is where a tree volume checks the file's leaves: that cost is in
# those figures.  PAIRS rounds (default 5), MIB MiB files (default 128),
# both from the environment.
# Prints each round's figures (seconds for dd, IOPS for fio; A's, then
# B's) on standard error, and the medians and the medians of the pairs'
# ratios B/A (time ratios for dd, IOPS ratios for fio) with their range
# (pair_stats.py).  Root not needed.
set -euo pipefail

pairs=${PAIRS:-5}
mib=${MIB:-128}
[ $# -eq 2 ] || { echo "usage: [PAIRS=N] [MIB=N] unit_tree_cost.sh 'BIN_A [OPTS]' 'BIN_B [OPTS]'" >&2; exit 2; }

# an interrupted run leaves no mount behind
trap 'for m in "${TMPDIR:-/var/tmp}"/unit_tree_cost.*/m; do fusermount3 -u "$m" 2>/dev/null || true; done' EXIT

# secs CMD...: the wall seconds CMD takes
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l | xargs printf '%.3f'
}

# iops RW FILE: fio's IOPS for 4 KiB RW (randwrite, randread) over FILE
iops() {
	fio --name=u --filename="$2" --rw="$1" --bs=4k --direct=1 --ioengine=psync \
		--numjobs=1 --time_based --runtime=5 --size="${mib}M" --output-format=terse \
		--terse-version=3 2>/dev/null |
		awk -F';' -v rw="$1" '{ print (rw == "randread" ? $8 : $49) }'
}

# remount SPEC D: the volume in D unmounted (if it is) and mounted again
remount() {
	local spec=($1) d=$2 i
	fusermount3 -u "$d/m" 2>/dev/null || true
	# the daemon holds the volume's lock until it has exited: the mount waits for it
	for i in $(seq 100); do
		XDG_STATE_HOME="$d/state" "${spec[0]}" mount --keyfile="$d/key" "$d/v" "$d/m" \
			>/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# one SPEC: prints the six figures of one fresh volume, then removes it
one() {
	local spec=($1) d
	d=$(mktemp -d "${TMPDIR:-/var/tmp}/unit_tree_cost.XXXXXX")
	mkdir -p "$d/v" "$d/m"
	(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$d/key")
	"${spec[0]}" init --keyfile="$d/key" "${spec[@]:1}" "$d/v" >/dev/null 2>&1
	remount "$1" "$d"
	echo -n "$(secs dd if=/dev/zero of="$d/m/a" bs=4K count=$((mib * 256)) conv=fdatasync) "
	remount "$1" "$d"
	echo -n "$(secs dd if="$d/m/a" of=/dev/null bs=4K) "
	echo -n "$(secs dd if=/dev/zero of="$d/m/b" bs=1M count="$mib" conv=fdatasync) "
	remount "$1" "$d"
	echo -n "$(secs dd if="$d/m/b" of=/dev/null bs=1M) "
	remount "$1" "$d"
	echo -n "$(iops randwrite "$d/m/b") "
	remount "$1" "$d"
	echo -n "$(secs dd if="$d/m/b" of=/dev/null bs=4K count=1 skip=$((mib * 128)) iflag=direct) "
	iops randread "$d/m/b"
	fusermount3 -u "$d/m"
	rm -rf "$d"
}

# each round's figures to standard error as they come, the summary to standard output
for ((i = 0; i < pairs; i++)); do
	echo "$(one "$1") $(one "$2")"
done | tee /dev/stderr | python3 "$(dirname "$0")/pair_stats.py" "dd 4K write (s)" \
	"dd 4K read (s)" "dd 1M write (s)" "dd 1M read (s)" "fio 4K randwrite (IOPS)" \
	"first 4K read after a mount (s)" "fio 4K randread (IOPS)"
