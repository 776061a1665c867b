#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Where the /usr/include tree phases spend their time over /dev/fuse and
# over FUSE over io_uring (docs/performance.md 15.2).  For each transport
# in turn: a fresh ext4 loop image, an aes-xts volume mounted by BIN (over
# io_uring with -o io_uring), then bench/lib/benchmarks.sh's tree phases
# (untar, ls -lR, cold read of every file, rm -rf), each under `perf stat`
# of the daemon (CPU time, context switches, migrations) and `perf record
# -a` of the kernel's fuse and scheduler tracepoints.  uring_trace.py then
# prints per phase and transport: the requests by opcode, the median
# latency from send to reply per opcode, how many daemon threads served
# them and on which CPUs, how often the caller's CPU changed between two
# of its requests, the daemon's wake-ups on the waker's CPU or another, and
# each CPU's idle time.  The tracing slows every phase: compare counts and
# latencies, not the wall times.
#
#   bash bench/experiments/uring_trace.sh [--rt] [--out=DIR] BIN
# --rt runs the daemon and each phase's command SCHED_FIFO (chrt -f 5): on
# a machine busy with other work, an imitation of idle CPUs.  Root (loop
# devices, mounts, perf -a, the fuse module's enable_uring, which is set
# to Y for the io_uring mount, under the lock the io_uring tests take, and
# put back after).  Meant for a quiet machine.
set -euo pipefail
RT='' OUT='' BIN=''
for a in "$@"; do
	case $a in
	--rt) RT=1 ;;
	--out=*) OUT=${a#*=} ;;
	-*) echo "uring_trace.sh: unknown option $a" >&2; exit 2 ;;
	*) BIN=$a ;;
	esac
done
[ -n "$BIN" ] || { echo "usage: uring_trace.sh [--rt] [--out=DIR] BIN" >&2; exit 2; }
[ -x "$BIN" ] || { echo "uring_trace.sh: $BIN is not an executable" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "uring_trace.sh: needs root (loop devices, perf -a)" >&2; exit 1; }
command -v perf >/dev/null || { echo "uring_trace.sh: perf is not installed" >&2; exit 1; }
PARAM=/sys/module/fuse/parameters/enable_uring
[ -w "$PARAM" ] || { echo "uring_trace.sh: $PARAM is missing: no FUSE over io_uring" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d /tmp/sc-utrace.XXXXXX)}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/sc-utrace-w.XXXXXX)
LOOP='' PID='' PERFS=''
exec 9>/tmp/stackcrypt-enable_uring.lock
flock 9
param_old=$(cat "$PARAM")
run=()
[ -n "$RT" ] && run=(chrt -f 5)

cleanup()
{
	for p in $PERFS; do kill -INT "$p" 2>/dev/null || true; done
	mountpoint -q "$W/m" && { umount "$W/m" 2>/dev/null || umount -l "$W/m"; }
	[ -n "$PID" ] && kill "$PID" 2>/dev/null || true
	mountpoint -q "$W/b" && umount "$W/b"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	echo "$param_old" >"$PARAM"
	rm -rf "$W"
}
trap cleanup EXIT
tar -C /usr -cf "$W/include.tar" include
head -c 32 /dev/urandom >"$W/key"
chmod 600 "$W/key"

# phase TRANSPORT NAME COMMAND...: one traced phase into $OUT.
phase()
{
	local o=$OUT/$1.$2 ps pr
	shift 2
	perf stat -e task-clock,context-switches,cpu-migrations -p "$PID" -o "$o.pstat" &
	ps=$!
	perf record -q -a -o "$o.data" -e fuse:fuse_request_send,fuse:fuse_request_end \
		-e sched:sched_switch,sched:sched_wakeup &
	pr=$!
	PERFS="$ps $pr"
	# perf has no "ready" signal; the events of its first moments are the
	# idle daemon's, so a late start loses nothing of the phase.
	sleep 1
	"${run[@]}" "$@"
	kill -INT $PERFS
	wait $PERFS || true
	PERFS=
}

# transport NAME OPTS: the four phases over one fresh mount.
transport()
{
	local name=$1 opts=$2
	truncate -s 3G "$W/img"
	LOOP=$(losetup -f --show "$W/img")
	mkfs.ext4 -q "$LOOP"
	mkdir -p "$W/b" "$W/m"
	mount "$LOOP" "$W/b"
	mkdir "$W/b/v"
	# names in the clear, as before init encrypted them by default (issue #28)
	# shellcheck disable=SC2046  # an option or nothing
	"$BIN" init --cipher=aes-xts $("$BIN" init --help 2>&1 | grep -q -- --plaintext-names && echo --plaintext-names) --keyfile="$W/key" "$W/b/v" >/dev/null
	"${run[@]}" "$BIN" mount --keyfile="$W/key" ${opts:+-o "$opts"} "$W/b/v" "$W/m" >/dev/null
	mountpoint -q "$W/m" || { echo "uring_trace.sh: the $name mount failed" >&2; exit 1; }
	PID=$(pgrep -f -- "mount --keyfile=$W/key" | head -1)
	[ -n "$PID" ] || { echo "uring_trace.sh: no daemon for $W/m" >&2; exit 1; }
	echo "$PID" >"$OUT/$name.pid"
	mkdir "$W/m/tree"
	phase "$name" untar tar -C "$W/m/tree" -xf "$W/include.tar"
	phase "$name" lsR sh -c 'ls -lR "$1" >/dev/null' sh "$W/m/tree"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	phase "$name" read sh -c 'find "$1" -type f -print0 | xargs -0 -r cat >/dev/null' sh "$W/m/tree"
	phase "$name" rm rm -rf "$W/m/tree"
	umount "$W/m"
	# The daemon ends with its mount; wait for it by PID.
	while kill -0 "$PID" 2>/dev/null; do sleep 0.1; done
	PID=
	umount "$W/b"
	losetup -d "$LOOP"
	LOOP=
}

echo N >"$PARAM"
transport devfuse ""
echo Y >"$PARAM"
transport io_uring io_uring
echo "$param_old" >"$PARAM"
python3 "$here/uring_trace.py" "$OUT"
echo "uring_trace.sh: traces in $OUT"
