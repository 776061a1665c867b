#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# reverse_speed.sh - `stackcrypt mount --reverse` against `gocryptfs
# -reverse` (issue #33's benchmark), on a loop-device image of each file
# system named.
#
#   bench/reverse_speed.sh BUILD/fs/stackcrypt [TREE] [FS,...] [ROUNDS]
#
# TREE (default /usr/include) is copied into a fresh ext4 (FS: ext4, xfs or
# both, default ext4) image file in /var/tmp; each system gets a config
# outside the tree.  Each round runs, for each system in turn (the order
# alternates between rounds):
#   read cold   a fresh mount, caches dropped, `tar -cf - -C VIEW . | wc -c`
#   read warm   the same again, on the same mount
#   rsync 1     a fresh mount, caches dropped, `rsync -aH VIEW/ DEST/` into
#               an empty DEST on the same file system
# then XORs one byte of one plaintext file, and for each system:
#   rsync 2     a fresh mount, caches dropped, `rsync -aH --itemize-changes
#               VIEW/ DEST/` again (the count of files sent is printed: it
#               must be 1 for both)
# Prints per row the median wall time of each system over ROUNDS (default
# 3), the daemon's CPU time (utime + stime from /proc) and the ratio
# gocryptfs / stackcrypt of the wall times (> 1: stackcrypt is faster).
# Needs root (loop device, mount, drop_caches), rsync and gocryptfs
# (scripts/deps.sh bench installs them).
set -eu
BIN=$(realpath "$1")
TREE=${2:-/usr/include}
FSLIST=${3:-ext4}
ROUNDS=${4:-3}
for t in rsync gocryptfs tar bc; do
	command -v $t >/dev/null || { echo "reverse_speed.sh: $t is missing (bash scripts/deps.sh bench)" >&2; exit 1; }
done
# shellcheck source=lib/reverse.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/reverse.sh"
rv_setup sc-reverse-bench
SYSTEMS=(stackcrypt gocryptfs)

# The pid of the FUSE daemon serving mountpoint $1 (its argv names it).
daemon_pid() {
	local p
	for p in /proc/[0-9]*; do
		tr '\0' '\n' 2>/dev/null <"$p/cmdline" | grep -qxF "$1" && { echo "${p#/proc/}"; return; }
	done
	echo "reverse_speed.sh: no daemon for $1" >&2
	return 1
}

# CPU seconds (user + system) of pid $1 so far.
cpu_of() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}

mount_view() {
	rv_mount "$1"
	PID=$(daemon_pid "$W/m_$1")
}

# timed SYS ROW CMD...: runs CMD (stdout to $W/out) with caches as they
# are; records wall and daemon CPU seconds in $W/rows.
timed() {
	local sys=$1 row=$2 t0 t1 c0 c1
	shift 2
	c0=$(cpu_of "$PID")
	t0=$(date +%s.%N)
	"$@" >"$W/out"
	t1=$(date +%s.%N)
	c1=$(cpu_of "$PID")
	printf '%s\t%s\t%s\t%s\n' "$sys" "$row" "$(echo "$t1 - $t0" | bc -l)" \
		"$(echo "$c1 - $c0" | bc -l)" >>"$W/rows"
}

# median SYS ROW COLUMN: the median of that column (3 wall, 4 CPU) of $W/rows.
median() {
	awk -F'\t' -v s="$1" -v r="$2" -v c="$3" '$1 == s && $2 == r { print $c }' "$W/rows" |
		sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

read_view() { tar -cf - -C "$W/m_$1" . | wc -c; }

bench_fs() {
	local fs=$1 r sys order victim sent
	rv_fs "$fs" 4G
	rm -f "$W/rows"
	# the file changed between the rsyncs: the largest one, a byte in its middle
	victim=$(find "$W/fs/plain" -type f -printf '%s %p\n' | sort -n | tail -n1 | cut -d' ' -f2-)
	for r in $(seq "$ROUNDS"); do
		order=("${SYSTEMS[@]}")
		((r % 2)) || order=("${SYSTEMS[1]}" "${SYSTEMS[0]}")
		for sys in "${order[@]}"; do
			mount_view "$sys"
			rv_drop
			timed "$sys" "read cold" read_view "$sys"
			bytes_read[$sys]=$(cat "$W/out")
			timed "$sys" "read warm" read_view "$sys"
			rv_umount "$sys"
			rm -rf "$W/fs/dst_$sys"
			mount_view "$sys"
			rv_drop
			timed "$sys" "rsync 1" rsync -aH "$W/m_$sys/" "$W/fs/dst_$sys/"
			rv_umount "$sys"
		done
		python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x5a]))' \
			"$victim" "$(($(stat -c %s "$victim") / 2))"
		for sys in "${order[@]}"; do
			mount_view "$sys"
			rv_drop
			timed "$sys" "rsync 2" rsync -aH --itemize-changes "$W/m_$sys/" "$W/fs/dst_$sys/"
			sent=$(grep -c '^>f' "$W/out" || true)
			echo "$fs round $r $sys: rsync 2 sent $sent file(s)"
			rv_umount "$sys"
		done
	done
	echo
	echo "## $fs: $(find "$W/fs/plain" | wc -l) entries, $(du -sb "$W/fs/plain" | cut -f1) bytes of $TREE; view read: stackcrypt ${bytes_read[stackcrypt]} B, gocryptfs ${bytes_read[gocryptfs]} B (tar); median of $ROUNDS rounds"
	echo
	echo "| $fs | stackcrypt wall | gocryptfs wall | gocryptfs / stackcrypt | stackcrypt daemon CPU | gocryptfs daemon CPU |"
	echo "|---|---|---|---|---|---|"
	for row in "read cold" "read warm" "rsync 1" "rsync 2"; do
		printf '| %s |' "$row"
		local sw gw sc gc
		sw=$(median stackcrypt "$row" 3) gw=$(median gocryptfs "$row" 3)
		sc=$(median stackcrypt "$row" 4) gc=$(median gocryptfs "$row" 4)
		printf ' %.2f s | %.2f s | %.2f | %.2f s | %.2f s |\n' "$sw" "$gw" "$(echo "$gw / $sw" | bc -l)" "$sc" "$gc"
	done
	echo
	echo "every run (system, row, wall s, daemon CPU s):"
	cat "$W/rows"
	rv_fs_gone
}

declare -A bytes_read
for fs in ${FSLIST//,/ }; do
	bench_fs "$fs"
done
