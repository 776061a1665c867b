#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bigdir_list.sh - how long `ls -f` or `ls -l` of one big directory takes
# through a mount, several builds and the backing directory itself taking
# turns (issue #35; written up in docs/performance.md 18).
#
#   bash bench/experiments/bigdir_list.sh [-n REPS] lsf|lsl cold|warm \
#       BACKING MOUNTPOINT PASSFILE DIR SYSTEM...
#
# BACKING is a volume holding the directory DIR (a path inside the mount,
# e.g. "big": made beforehand, e.g. with `sc-smallfiles bigdir-create
# MNT/big 1000000 42`).  A SYSTEM is a stackcrypt binary, or "raw": the
# backing directory of DIR itself (found by the inode the mount reports).
# In each of REPS rounds (default 3) every SYSTEM in turn: a fresh mount
# (-q, the password from PASSFILE), `sync; echo 3 >
# /proc/sys/vm/drop_caches` when "cold", then `ls -f DIR | wc -l` (the
# count is printed) or `ls -l DIR > /dev/null`, timed alone, then the
# unmount, waited for.  "warm" drops nothing: the backing's blocks and
# inodes stay cached, the mount's caches start empty, so the FUSE layer's
# share shows.  Prints one line per listing: round, system, seconds,
# count, and the daemon's CPU (utime + stime ticks from /proc/PID/stat,
# mount included).  Needs root (drop_caches).
set -uo pipefail

reps=3
while getopts "n:" o; do
	case $o in
	n) reps=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 7 ] || {
	echo "usage: bigdir_list.sh [-n REPS] lsf|lsl cold|warm BACKING MNT PASSFILE DIR SYSTEM..." >&2
	exit 2
}
mode=$1 temp=$2 backing=$3 mnt=$4 pw=$5 rel=$6
shift 6

# mount_with BIN: mounts BACKING on MNT with BIN; the daemon's PID in $pid.
mount_with() {
	"$1" mount -q --passfile="$pw" "$backing" "$mnt" || exit 1
	pid=$(pgrep -nf "^$1 mount .*$mnt\$")
}

# unmount: unmounts MNT and waits for the daemon $pid to exit.
unmount() {
	fusermount3 -u "$mnt"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
}

# The backing directory of DIR, for "raw": by the inode the mount reports.
raw_dir=
for sys; do
	[ "$sys" = raw ] && continue
	mount_with "$sys"
	raw_dir=$(find "$backing" -xdev -maxdepth 3 -inum "$(stat -c %i "$mnt/$rel")" -print -quit)
	unmount
	break
done

# one SYSTEM ROUND: one listing, one output line.
one() {
	local sys=$1 round=$2 d t0 t1 n=- cpu=-
	pid=
	if [ "$sys" = raw ]; then
		d=$raw_dir
	else
		mount_with "$sys"
		d=$mnt/$rel
	fi
	[ "$temp" = cold ] && { sync; echo 3 >/proc/sys/vm/drop_caches; }
	t0=$(date +%s.%N)
	# shellcheck disable=SC2012  # ls is what is measured
	case $mode in
	lsf) n=$(ls -f "$d" | wc -l) ;;
	lsl) ls -l "$d" >/dev/null ;;
	esac
	t1=$(date +%s.%N)
	if [ -n "$pid" ]; then
		cpu=$(awk '{print $14 + $15}' "/proc/$pid/stat")
		unmount
	fi
	echo "$round $(basename "$sys") $mode $temp $(echo "$t1 - $t0" | bc) s n=$n cpu=$cpu"
}

for r in $(seq 1 "$reps"); do
	for sys in "$@"; do
		one "$sys" "$r"
	done
done
