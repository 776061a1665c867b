#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What a 4 KiB random write costs below the daemon, per cipher: fio
# randwrite (libaio, direct=1) on a file of the mount, and around it the
# daemon's CPU (utime, stime: /proc/PID/stat) per write and the reads the
# backing loop device served (/sys/block/loopN/stat).  These counts do not
# move with the machine's load, unlike the IOPS printed beside them.
#
#   bash bench/rmw_probe.sh [--cold] [--qd=N] [--seconds=S] [--size=MIB] CIPHER...
#
#   --cold       drop the page cache after the file is laid out, so that
#                the backing pages a write touches are not in memory
#   CIPHER       each is a volume of its own on one ext4 loop image, in the
#                order given (repeat one to see the spread)
#
# SC_BIN names the stackcrypt binary (default: build/fs/stackcrypt).  Root.
# aes-gcm stores a 4 KiB unit in 4128 bytes (docs/format.md 10.3), so a
# unit's pwrite covers parts of two backing pages: with --cold the backing
# filesystem reads both before it can write, which the loop device's read
# count shows; a length-preserving cipher writes whole pages and reads none.
set -euo pipefail

cold=0 qd=16 secs=8 size=512
ciphers=()
for arg in "$@"; do
	case $arg in
	--cold) cold=1 ;;
	--qd=*) qd=${arg#*=} ;;
	--seconds=*) secs=${arg#*=} ;;
	--size=*) size=${arg#*=} ;;
	-h | --help) sed -n '3,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "rmw_probe: unknown option $arg" >&2; exit 2 ;;
	*) ciphers+=("$arg") ;;
	esac
done
[ ${#ciphers[@]} -gt 0 ] || { echo "rmw_probe: name at least one cipher" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "rmw_probe: needs root (loop device, drop_caches)" >&2; exit 2; }
BIN=${SC_BIN:-build/fs/stackcrypt}
[ -x "$BIN" ] || { echo "rmw_probe: no stackcrypt binary at $BIN (set SC_BIN)" >&2; exit 2; }
command -v fio >/dev/null || { echo "rmw_probe: fio is not installed" >&2; exit 2; }

W=$(mktemp -d /tmp/sc-rmw.XXXXXX)
L= pid=
cleanup() {
	[ -n "$pid" ] && { fusermount3 -u "$W/m" 2>/dev/null || true; kill "$pid" 2>/dev/null || true; }
	mountpoint -q "$W/fs" && umount "$W/fs"
	[ -n "$L" ] && losetup -d "$L"
	rm -rf "$W"
}
trap cleanup EXIT
truncate -s 3G "$W/img"
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$W/img"
L=$(losetup -f --show "$W/img")
mkdir "$W/fs" "$W/m"
mount "$L" "$W/fs"
head -c 32 /dev/urandom >"$W/key"
chmod 600 "$W/key"
dev=$(basename "$L")

echo "cipher  iops  writes  daemon_us_per_write(user+sys)  loop_reads  loop_read_KiB  (qd $qd, ${secs}s, ${size} MiB, cold=$cold)"
n=0
for c in "${ciphers[@]}"; do
	n=$((n + 1))
	b=$W/fs/v$n
	mkdir "$b"
	# names in the clear, as before init encrypted them by default (issue #28)
	# shellcheck disable=SC2046  # an option or nothing
	"$BIN" init --cipher="$c" $("$BIN" init --help 2>&1 | grep -q -- --plaintext-names && echo --plaintext-names) --keyfile="$W/key" "$b" >/dev/null 2>&1 ||
		{ echo "rmw_probe: init --cipher=$c failed" >&2; exit 1; }
	"$BIN" mount -f --keyfile="$W/key" "$b" "$W/m" 2>"$W/log.$n" &
	pid=$!
	for _ in $(seq 100); do mountpoint -q "$W/m" && break; sleep 0.1; done
	mountpoint -q "$W/m" || { echo "rmw_probe: $c did not mount" >&2; cat "$W/log.$n" >&2; exit 1; }
	fio --name=layout --filename="$W/m/f" --size="${size}M" --rw=write --bs=1M \
		--ioengine=psync --end_fsync=1 >/dev/null
	sync
	[ $cold = 1 ] && echo 3 >/proc/sys/vm/drop_caches
	read -r r1 _ rs1 _ </sys/block/"$dev"/stat
	read -r u1 s1 < <(awk '{print $14, $15}' /proc/$pid/stat)
	read -r iops ios < <(fio --name=w --filename="$W/m/f" --size="${size}M" --rw=randwrite \
		--bs=4k --ioengine=libaio --iodepth="$qd" --direct=1 --time_based \
		--runtime="$secs" --ramp_time=1 --output-format=json |
		python3 -c 'import json, sys; j = json.load(sys.stdin)["jobs"][0]["write"]; print(int(j["iops"]), j["total_ios"])')
	read -r u2 s2 < <(awk '{print $14, $15}' /proc/$pid/stat)
	read -r r2 _ rs2 _ </sys/block/"$dev"/stat
	tck=$(getconf CLK_TCK)
	awk -v c="$c" -v i="$iops" -v n="$ios" -v u=$((u2 - u1)) -v s=$((s2 - s1)) -v t="$tck" \
		-v r=$((r2 - r1)) -v k=$(((rs2 - rs1) / 2)) 'BEGIN {
		printf "%-7s %6d %7d  %.1f (%.1f+%.1f)  %d  %d\n", c, i, n, (u + s) * 1e6 / t / n,
			u * 1e6 / t / n, s * 1e6 / t / n, r, k }'
	fusermount3 -u "$W/m"
	wait "$pid" || true
	pid=
	if grep -qi error "$W/log.$n"; then
		echo "rmw_probe: the $c daemon logged an error:" >&2
		cat "$W/log.$n" >&2
		exit 1
	fi
done
