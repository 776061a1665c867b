#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# phase_ops.sh - what each phase of the small-file workload asks of each
# layer: a fresh volume made by `BIN init INIT_OPTS...` (a random key file,
# the freshness record in a state dir of its own), mounted with
# `-o stats=all` (an io-stats layer at every boundary), then the phases of
# bench/run.sh's mongo table -- create (+sync), cp -a, read (cold), stat
# (cold), rename, delete -- of N files of sc-smallfiles (seed 42), and
# after each, for every boundary, each operation's calls in that phase
# and their mean latency in microseconds (the layer's own timing of its
# sampled calls, stackcrypt stats --json).  Counts are exact; latencies
# are those of a busy machine if it is one.
#
#   bash bench/experiments/phase_ops.sh [--tree] BIN SMALLFILES N [INIT_OPTS...]
#
# --tree: then the phases of bench/run.sh's tree table (untar of
# /usr/include, ls -lR, read all after a cache drop, rm -rf) on the same
# mount, after the small files'.  The backing directory is made under
# $TMPDIR (default /var/tmp): point it at an ext4 or XFS loop image to
# measure what bench/run.sh measures.
#
# SMALLFILES is build/bench/sc-smallfiles.  Root (the cold phases drop
# the page cache).  Written up in docs/format.md 9.2 (what a mkdir's fsync
# of its nonce file cost).
set -euo pipefail
tree=
[ "${1:-}" = --tree ] && { tree=1; shift; }
[ $# -ge 3 ] || { echo "usage: phase_ops.sh [--tree] BIN SMALLFILES N [INIT_OPTS...]" >&2; exit 2; }
BIN=$(realpath "$1") SF=$(realpath "$2") N=$3
shift 3
[ -x "$BIN" ] || { echo "phase_ops.sh: $BIN is not executable" >&2; exit 2; }
[ -x "$SF" ] || { echo "phase_ops.sh: $SF is not executable (build/bench/sc-smallfiles)" >&2; exit 2; }

T=$(mktemp -d "${TMPDIR:-/var/tmp}/phase_ops.XXXXXX")
pid=
cleanup() {
	fusermount3 -u "$T/m" 2>/dev/null || true
	[ -z "$pid" ] || wait "$pid" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
mkdir "$T/b" "$T/m" "$T/st"
head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$T/key"
chmod 600 "$T/key"
"$BIN" init --keyfile="$T/key" "$@" "$T/b" >/dev/null 2>&1
"$BIN" mount -f -o stats=all --keyfile="$T/key" --state-dir="$T/st" "$T/b" "$T/m" \
	2>"$T/log" &
pid=$!
while ! mountpoint -q "$T/m"; do
	kill -0 "$pid" 2>/dev/null || { echo "phase_ops.sh: mount failed: $(cat "$T/log")" >&2; exit 1; }
	sleep 0.1
done
mkdir "$T/m/a"
"$BIN" stats --json "$T/m" >"$T/s.start"
prev=$T/s.start
phases="create copy read stat rename delete"
if [ -n "$tree" ]; then
	tar -C /usr -cf "$T/tree.tar" include
	mkdir "$T/m/t"
	phases="$phases untar ls-lR read-all rm-rf"
fi
for ph in $phases; do
	case $ph in
	create) "$SF" create "$T/m/a" "$N" 42 >/dev/null && sync ;;
	copy) cp -a --reflink=never "$T/m/a" "$T/m/b" && sync ;;
	read) echo 3 >/proc/sys/vm/drop_caches && "$SF" read "$T/m/b" "$N" 42 >/dev/null ;;
	stat) echo 3 >/proc/sys/vm/drop_caches && "$SF" stat "$T/m/a" "$N" 42 >/dev/null ;;
	rename) "$SF" rename "$T/m/a" "$N" 42 >/dev/null ;;
	delete) "$SF" delete "$T/m/a" "$N" 42 >/dev/null ;;
	untar) tar -C "$T/m/t" -xf "$T/tree.tar" ;;
	ls-lR) ls -lR "$T/m/t" >/dev/null ;;
	read-all) sync && echo 3 >/proc/sys/vm/drop_caches &&
		find "$T/m/t" -type f -print0 | xargs -0 -r cat >/dev/null ;;
	rm-rf) rm -rf "$T/m/t" ;;
	esac
	"$BIN" stats --json "$T/m" >"$T/s.$ph"
	python3 - "$prev" "$T/s.$ph" "$ph" <<'EOF'
import json
import sys

def ops(path):
    """(boundary, op) -> (calls, summed microseconds of the timed ones, timed)"""
    r = {}
    for layer in json.load(open(path))["layers"]:
        for op, v in layer["ops"].items():
            r[(layer["label"], op)] = (v["count"], v["mean_us"] * v["timed"], v["timed"])
    return r

before, after = ops(sys.argv[1]), ops(sys.argv[2])
labels = list(dict.fromkeys(label for label, _ in after))
for label in labels:
    cells = []
    for (l, op), (c, us, timed) in after.items():
        c0, us0, timed0 = before.get((l, op), (0, 0.0, 0))
        if l == label and c > c0:
            mean = (us - us0) / (timed - timed0) if timed > timed0 else 0.0
            cells.append(f"{op}={c - c0}/{mean:.0f}us")
    print(sys.argv[3], label, " ".join(cells))
EOF
	prev=$T/s.$ph
done
