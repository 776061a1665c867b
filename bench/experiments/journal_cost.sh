#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Where the aes-gcm crash journal's time goes (docs/benchmarks.md, "The
# journal's cost, attributed").  Builds COMMIT twice in release mode, as it
# is and with journal_cost.patch (an instrumented build, never shipped: the
# environment variable SC_EXP_JOURNAL switches one part of the journal's
# per-write work off: "off" no journal, "nowrite" no record stored,
# "nomac" no record MAC, "nomap" records written with pwrite(2) instead of
# copied into the mapping of sc.journal), then runs fio 4 KiB random writes with
# libaio, direct=1, at one iodepth on a fresh filesystem image per run,
# systems interleaved, and prints IOPS and the daemon's CPU time per write
# (utime+stime from /proc over fio's I/Os) for each run and their medians.
#
#   bash bench/experiments/journal_cost.sh [--fs=xfs|ext4] [--depth=16]
#        [--reps=3] [--size=512] [--runtime=5] [COMMIT]
# Root (loop devices, mounts).  Quiet machine: nothing else running.
set -euo pipefail
FS=xfs DEPTH=16 REPS=3 SIZE=512 RUNTIME=5 COMMIT=HEAD
for a in "$@"; do
	case $a in
	--fs=*) FS=${a#*=} ;; --depth=*) DEPTH=${a#*=} ;; --reps=*) REPS=${a#*=} ;;
	--size=*) SIZE=${a#*=} ;; --runtime=*) RUNTIME=${a#*=} ;;
	-*) echo "journal_cost.sh: unknown option $a" >&2; exit 2 ;;
	*) COMMIT=$a ;;
	esac
done
case $FS in xfs|ext4) ;; *) echo "journal_cost.sh: --fs is xfs or ext4" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "journal_cost.sh: needs root (loop devices)" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
W=$(mktemp -d /tmp/sc-jcost.XXXXXX)
IMG=$W/img FSMNT=$W/fs VIEW=$W/view KEY=$W/key PID=

cleanup()
{
	[ -n "$PID" ] && kill "$PID" 2>/dev/null || true
	mountpoint -q "$VIEW" && fusermount3 -u "$VIEW" 2>/dev/null || true
	mountpoint -q "$FSMNT" && umount "$FSMNT" 2>/dev/null || true
	for t in plain exp; do
		git -C "$repo" worktree remove --force "$W/$t" 2>/dev/null || true
	done
	rm -rf "$W"
}
trap cleanup EXIT

for t in plain exp; do
	git -C "$repo" worktree add -q --detach "$W/$t" "$COMMIT"
	[ $t = exp ] && git -C "$W/$t" apply "$here/journal_cost.patch"
	meson setup "$W/$t/build" "$W/$t" --buildtype=release -Dtests=false >/dev/null
	ninja -C "$W/$t/build" >/dev/null
done
mkdir -p "$FSMNT" "$VIEW"
head -c 32 /dev/urandom >"$KEY"
chmod 600 "$KEY"

# one run: TAG BIN CIPHER EXPVALUE -> "TAG IOPS CPU_US"
one()
{
	local tag=$1 bin=$2 cipher=$3 exp=$4 c0 c1 json=$W/fio.json
	truncate -s 0 "$IMG"
	truncate -s 4G "$IMG"
	if [ "$FS" = xfs ]; then mkfs.xfs -q -f "$IMG"; else mkfs.ext4 -q -F "$IMG"; fi
	mount -o loop "$IMG" "$FSMNT"
	mkdir "$FSMNT/b"
	# names in the clear, as before init encrypted them by default (issue #28)
	# shellcheck disable=SC2046  # an option or nothing
	"$bin" init --cipher="$cipher" $("$bin" init --help 2>&1 | grep -q -- --plaintext-names && echo --plaintext-names) --keyfile="$KEY" "$FSMNT/b" >/dev/null 2>&1
	SC_EXP_JOURNAL=$exp "$bin" mount -f --keyfile="$KEY" "$FSMNT/b" "$VIEW" >"$W/daemon.log" 2>&1 &
	PID=$!
	until mountpoint -q "$VIEW"; do
		kill -0 "$PID" 2>/dev/null || { cat "$W/daemon.log" >&2; exit 1; }
		sleep 0.1
	done
	fio --name=layout --filename="$VIEW/f" --size="${SIZE}M" --rw=write --bs=1M \
		--ioengine=psync --end_fsync=1 >/dev/null
	c0=$(awk '{print $14 + $15}' /proc/$PID/stat)
	fio --name=w --filename="$VIEW/f" --size="${SIZE}M" --rw=randwrite --bs=4k \
		--ioengine=libaio --iodepth="$DEPTH" --direct=1 --numjobs=1 --time_based \
		--runtime="$RUNTIME" --output-format=json --output="$json" >/dev/null
	c1=$(awk '{print $14 + $15}' /proc/$PID/stat)
	fusermount3 -u "$VIEW"
	wait "$PID" || true
	PID=
	umount "$FSMNT"
	python3 - "$tag" "$json" "$c0" "$c1" "$(getconf CLK_TCK)" <<'PY'
import json, sys
tag, path, c0, c1, hz = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
w = json.load(open(path))['jobs'][0]['write']
print('%s %.0f %.1f' % (tag, w['iops'], (c1 - c0) / hz * 1e6 / w['total_ios']))
PY
}

echo "# $(date -u +%FT%TZ) $FS randwrite 4k qd$DEPTH, ${SIZE} MiB, ${RUNTIME}s, $REPS reps, commit $(git -C "$repo" rev-parse --short "$COMMIT"), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# system iops cpu_us_per_write"
for r in $(seq "$REPS"); do
	one aes-xts "$W/plain/build/fs/stackcrypt" aes-xts ""
	one aes-gcm "$W/plain/build/fs/stackcrypt" aes-gcm ""
	for e in off nowrite nomac nomap; do
		one "aes-gcm/$e" "$W/exp/build/fs/stackcrypt" aes-gcm "$e"
	done
done | tee "$W/runs"
echo "# medians"
python3 - "$W/runs" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    t, i, c = line.split()
    rows.setdefault(t, []).append((float(i), float(c)))
x = statistics.median(i for i, _ in rows['aes-xts'])
for t, v in rows.items():
    i = statistics.median(a for a, _ in v)
    c = statistics.median(b for _, b in v)
    print('%-16s iops %8.0f  x aes-xts %.2f  cpu/write %5.1f us' % (t, i, i / x, c))
PY
