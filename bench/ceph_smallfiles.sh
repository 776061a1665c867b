#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ceph_smallfiles.sh - small files on CephFS two ways: stackcrypt over a
# ceph-fuse mount of a directory ("fuse": two FUSE hops) and stackcrypt on
# the same kind of directory by cephfs:// URL ("url": the cephfs
# translator, one hop).  The default volume (a bare `init`: aes-gcm,
# names encrypted), a key file.
#
#   bash bench/ceph_smallfiles.sh [N [ROUNDS]]      (root; defaults 1000, 3)
#
# Each round runs both ways, in alternating order (fuse first in odd
# rounds), each on a fresh directory and volume: `sc-smallfiles create`
# (N files of the mongo-style tree, mean 8 KiB, in 256 directories), then
# the stackcrypt mount and the ceph-fuse mount are both unmounted and the
# kernel's caches dropped, so the read starts with no Ceph client cache
# either way, then `sc-smallfiles read` (every byte checked).  Prints one
# line per phase: way, round, phase, seconds.  The cluster is
# scripts/ceph.sh's (started if none runs, stopped after if this started
# it); nothing is left mounted.
set -uo pipefail
N=${1:-1000}
ROUNDS=${2:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
SC=${SC_BIN:-$top/build/fs/stackcrypt}
SF=${SC_SMALLFILES:-$top/build/bench/sc-smallfiles}
CS=$top/scripts/ceph.sh
W=$(mktemp -d /tmp/sc-cephbench.XXXXXX)
CW=$W/ceph
FUSE=$W/fuse
MNT=$W/mnt
SUB=sc-bench-$$
export CEPH_CONF=${SC_CEPH_DIR:-/var/tmp/stackcrypt-ceph}/ceph.conf
URL=cephfs://admin@127.0.0.1:${SC_CEPH_PORT:-3301}/scfs/$SUB
die() { echo "ceph_smallfiles: $*" >&2; exit 1; }
cleanup() {
	mountpoint -q "$MNT" && fusermount3 -u "$MNT"
	wait
	"$CS" -w "$CW" down
	rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$FUSE" "$MNT"
head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$W/key"
"$CS" -w "$CW" up >/dev/null || die "scripts/ceph.sh up failed"
"$CS" -w "$CW" mount "scfs/$SUB" "$FUSE" || die "ceph-fuse mount failed"

# mount_sc SRC: the stackcrypt daemon in the foreground, up when MNT is a mount
mount_sc() {
	"$SC" mount -f --keyfile="$W/key" "$1" "$MNT" >>"$W/daemon.log" 2>&1 &
	while ! mountpoint -q "$MNT"; do
		kill -0 $! 2>/dev/null || die "mount of $1 failed: $(tail -2 "$W/daemon.log")"
		sleep 0.1
	done
}
umount_sc() {
	fusermount3 -u "$MNT" || die "unmount failed"
	wait
}
# phase WAY ROUND NAME CMD...: one timed line
phase() {
	local way=$1 round=$2 name=$3 t0 t1
	shift 3
	t0=$(date +%s.%N)
	"$@" >/dev/null || die "$way $name failed"
	t1=$(date +%s.%N)
	printf '%s round %d %s %.2f s\n' "$way" "$round" "$name" "$(echo "$t1 - $t0" | bc)"
}
run_way() {
	local way=$1 round=$2 dir=v-$1-$2 src
	mkdir "$FUSE/$dir" || die "mkdir"
	src=$FUSE/$dir
	[ "$way" = url ] && src=$URL/$dir
	"$SC" init --keyfile="$W/key" "$src" >/dev/null 2>&1 || die "init $src failed"
	mount_sc "$src"
	mkdir "$MNT/t" || die "mkdir in the mount failed"
	phase "$way" "$round" create "$SF" create "$MNT/t" "$N" 1
	umount_sc
	"$CS" -w "$CW" umount "$FUSE" || die "ceph-fuse umount failed"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	"$CS" -w "$CW" mount "scfs/$SUB" "$FUSE" || die "ceph-fuse mount failed"
	mount_sc "$src"
	phase "$way" "$round" read "$SF" read "$MNT/t" "$N" 1
	umount_sc
}
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then order="fuse url"; else order="url fuse"; fi
	for way in $order; do
		run_way "$way" "$r"
	done
done
