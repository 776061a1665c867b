#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What a cold read of a reverse view asks of the disk: for `stackcrypt
# mount --reverse` and `gocryptfs -reverse` of one copy of TREE on an XFS
# (or ext4) loop image, caches dropped, `tar -cf - -C VIEW . | wc -c`, and
# the loop device's counters (/sys/block/loopN/stat) around it: read
# requests, MiB read, milliseconds the device spent reading.  Two rounds,
# the systems alternating.  It asks whether a slower cold row of
# bench/reverse_speed.sh comes from more or other disk reads, or from the
# machine's load (docs/benchmarks.md, reverse mode).
#
#   bash bench/experiments/reverse_cold_io.sh STACKCRYPT [TREE] [xfs|ext4]
# Root (loop device, mount, drop_caches); gocryptfs installed.
set -euo pipefail
BIN=$(realpath "$1")
TREE=${2:-/usr/include}
FS=${3:-xfs}
# shellcheck source=../lib/reverse.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/reverse.sh"
rv_setup sc-reverse-io
rv_fs "$FS" 2G
dev=$(basename "$LOOP")
for r in 1 2; do
	for sys in stackcrypt gocryptfs; do
		m=$W/m_$sys
		rv_mount "$sys"
		rv_drop
		read -ra a <"/sys/block/$dev/stat"
		t0=$(date +%s.%N)
		tar -cf - -C "$m" . | wc -c >/dev/null
		t1=$(date +%s.%N)
		read -ra b <"/sys/block/$dev/stat"
		printf '%s round %d: %.2f s, %d read requests, %d MiB, %d ms reading\n' "$sys" "$r" \
			"$(echo "$t1 - $t0" | bc -l)" $((b[0] - a[0])) $(((b[2] - a[2]) / 2048)) $((b[3] - a[3]))
		rv_umount "$sys"
	done
done
