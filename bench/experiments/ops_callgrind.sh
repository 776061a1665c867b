#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Instructions the daemon spends per phase (docs/performance.md 14.2,
# docs/benchmarks.md BA1): a fresh ext4 loop image, a volume made by
# `BIN init INITOPTS... --keyfile` (INITOPTS `passthrough`: no volume, the
# passthrough stack), then for each phase one mount under
# `valgrind --tool=callgrind` in the foreground, the phase, the unmount,
# and the daemon's total.  Modes:
#   create: sc-smallfiles create of FILES files (seed 42), with the
#           inclusive counts of the create op, sc_fkey_new and
#           sc_hkdf_sha256 (build BIN -Dbuildtype=debugoptimized so the
#           functions keep their names)
#   files:  sc-smallfiles create, stat, rename, delete of FILES files
#   dd:     dd 5 000 x 4 KiB conv=fdatasync into one file; then a dd read
#           of it (FILES is not used)
#   fio:    fio's layout of one 64 MiB file, then FILES random 4 KiB writes,
#           then FILES random 4 KiB reads (one job, psync, seed 42: the
#           same offsets for both builds)
# Instructions, not seconds: the same whatever else the machine is doing;
# compare two builds with INITOPTS that mean the same to both (an older
# build may lack --plaintext-names).
#
#   bash bench/experiments/ops_callgrind.sh create|files|dd|fio BIN SMALLFILES FILES [INITOPTS...]
# SMALLFILES is build/bench/sc-smallfiles.  Root (loop device, mount).
# Everything is made in a temp dir and removed; with SC_CG_OUT=DIR set,
# each phase's callgrind file is kept there as DIR/cg.PHASE (for
# callgrind_annotate).
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: ops_callgrind.sh create|files|dd|fio BIN SMALLFILES FILES [INITOPTS...]" >&2; exit 2; }
MODE=$1 BIN=$(realpath "$2") SF=$(realpath "$3") FILES=$4
shift 4
case $MODE in
create) phases=(create) ;;
files) phases=(create stat rename delete) ;;
dd) phases=(write read) ;;
fio) phases=(layout randwrite randread) ;;
*) echo "ops_callgrind.sh: mode is create, files, dd or fio, not '$MODE'" >&2; exit 2 ;;
esac
[ -x "$BIN" ] || { echo "ops_callgrind.sh: $2 is not executable" >&2; exit 2; }
[ -x "$SF" ] || { echo "ops_callgrind.sh: $3 is not executable (build/bench/sc-smallfiles)" >&2; exit 2; }
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
if [ "${1:-}" = passthrough ]; then
	opts=(--stack=passthrough)
else
	(umask 077 && head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$W/key")
	"$BIN" init "$@" --keyfile="$W/key" "$W/fs/b" >"$W/init.log" 2>&1 ||
		{ cat "$W/init.log" >&2; exit 1; }
	opts=(--keyfile="$W/key")
fi
for phase in "${phases[@]}"; do
	valgrind --tool=callgrind --callgrind-out-file="$W/cg.$phase" \
		"$BIN" mount -f "${opts[@]}" "$W/fs/b" "$W/m" >"$W/vg.log" 2>&1 &
	VP=$!
	# The daemon under valgrind takes seconds to mount; wait for it, or for its end.
	until mountpoint -q "$W/m"; do
		kill -0 "$VP" 2>/dev/null || { cat "$W/vg.log" >&2; echo "ops_callgrind.sh: the daemon exited before mounting" >&2; exit 1; }
		sleep 0.1
	done
	case $phase in
	write) dd if=/dev/zero of="$W/m/f" bs=4K count=5000 conv=fdatasync status=none ;;
	read) dd if="$W/m/f" of=/dev/null bs=4K status=none ;;
	layout) fio --name=layout --filename="$W/m/fio" --rw=write --bs=128k --size=64M \
		--ioengine=psync --output=/dev/null ;;
	randwrite|randread)
		fio --name="$phase" --filename="$W/m/fio" --rw="$phase" --bs=4k --size=64M \
			--number_ios="$FILES" --ioengine=psync --randrepeat=0 --randseed=42 \
			--output=/dev/null ;;
	*) "$SF" "$phase" "$W/m" "$FILES" 42 >/dev/null ;;
	esac
	fusermount3 -u "$W/m"
	wait "$VP"
	VP=
	echo "$phase $(sed -n 's/^summary: //p' "$W/cg.$phase")"
	[ -z "${SC_CG_OUT:-}" ] || cp "$W/cg.$phase" "$SC_CG_OUT/"
done
if [ "$MODE" = create ]; then
	# the create op of whichever layer is on top: the data engine's, or the posix layer's
	callgrind_annotate --inclusive=yes "$W/cg.create" 2>/dev/null |
		awk '$3 ~ /:(sc_data_op_create|op_create|sc_fkey_new|sc_hkdf_sha256)$/ && $4 ~ /^\[/ { sub(/.*\//, "", $3); print "  " $1, $3 }'
fi
