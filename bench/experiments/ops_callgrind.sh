#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Instructions the daemon spends per phase (docs/benchmarks.md, BA1):
# a fresh ext4 loop image, a volume made by `BIN init INITOPTS... --keyfile`,
# then for each phase one mount under `valgrind --tool=callgrind` in the
# foreground, the phase, the unmount, and the daemon's total.  Phases:
#   files: sc-smallfiles create, stat, rename, delete of FILES files (seed 42)
#   dd:    dd 5 000 x 4 KiB conv=fdatasync into one file; then a dd read of it
# Instructions, not seconds: the same whatever else the machine is doing;
# compare two builds with the same INITOPTS meaning (an older build may lack
# --plaintext-names).
#
#   bash bench/experiments/ops_callgrind.sh files|dd BIN SMALLFILES FILES [INITOPTS...]
# (FILES counts in mode files only; SMALLFILES is build/bench/sc-smallfiles)
# Root (loop device, mount).  Everything is made in a temp dir and removed.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: ops_callgrind.sh files|dd BIN SMALLFILES FILES [INITOPTS...]" >&2; exit 2; }
MODE=$1 BIN=$(realpath "$2") SF=$(realpath "$3") FILES=$4
shift 4
case $MODE in files) phases=(create stat rename delete) ;; dd) phases=(write read) ;;
*) echo "ops_callgrind.sh: mode is files or dd, not '$MODE'" >&2; exit 2 ;; esac
command -v valgrind >/dev/null || { echo "ops_callgrind.sh: valgrind is not installed" >&2; exit 2; }
W=$(mktemp -d /tmp/sc-cgo.XXXXXX)
VP=
cleanup()
{
	mountpoint -q "$W/m" && fusermount3 -u "$W/m"
	[ -n "$VP" ] && wait "$VP" 2>/dev/null
	mountpoint -q "$W/fs" && umount "$W/fs"
	rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/fs" "$W/m"
truncate -s 1G "$W/img"
mkfs.ext4 -q -F "$W/img"
mount -o loop "$W/img" "$W/fs"
mkdir "$W/fs/b"
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$W/key")
"$BIN" init "$@" --keyfile="$W/key" "$W/fs/b" >"$W/init.log" 2>&1 || { cat "$W/init.log" >&2; exit 1; }
for phase in "${phases[@]}"; do
	valgrind --tool=callgrind --callgrind-out-file="$W/cg.$phase" \
		"$BIN" mount -f --keyfile="$W/key" "$W/fs/b" "$W/m" >"$W/vg.log" 2>&1 &
	VP=$!
	# The daemon under valgrind takes seconds to mount; wait for it, or for its end.
	until mountpoint -q "$W/m"; do
		kill -0 "$VP" 2>/dev/null || { cat "$W/vg.log" >&2; echo "ops_callgrind.sh: the daemon exited before mounting" >&2; exit 1; }
		sleep 0.1
	done
	case $phase in
	write) dd if=/dev/zero of="$W/m/f" bs=4K count=5000 conv=fdatasync status=none ;;
	read) dd if="$W/m/f" of=/dev/null bs=4K status=none ;;
	*) "$SF" "$phase" "$W/m" "$FILES" 42 >/dev/null ;;
	esac
	fusermount3 -u "$W/m"
	wait "$VP"
	VP=
	echo "$phase $(sed -n 's/^summary: //p' "$W/cg.$phase")"
done
