#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fuse_rounds.sh - the FUSE requests each phase of the tree and small-file
# workloads makes of a system, as the kernel sees them: for each opcode,
# how many requests and their mean round trip (the kernel's
# fuse_request_send to fuse_request_end: queueing, the daemon's work and
# the reply), beside the phase's wall time.  Where a peer is faster on a
# metadata row this says whether it gets fewer requests or answers them
# sooner.
#
#   bash bench/experiments/fuse_rounds.sh [-n FILES] [-t] DIR SYSTEM...
#
# -t: no tracing, each phase's wall time alone (tracing every request
# slows a phase by about a second and evens the systems out).
#
# SYSTEM is `stackcrypt=BIN[:INIT_OPT,...]` (a fresh volume made by
# `BIN init` with a random key file and those options), `securefs` (lite
# format 4, as bench/run.sh makes it) or `gocryptfs`.  Each system gets a
# fresh backing directory under DIR (a file system of its own: an ext4 or
# XFS loop image, as bench/run.sh's); its phases run one after another:
# the tree's untar, ls -lR, read all (cold), rm -rf (bench/lib/benchmarks.sh),
# then FILES small files (default 2000; sc-smallfiles from build-rel or
# build) created, stat'ed cold, renamed and deleted.  Root (perf's
# tracepoints, cache drops).  Only this mount's requests are counted (its
# connection number), whatever other FUSE mounts the machine serves.
# Counts are exact; round trips are those of a busy machine if it is one.  Written up in docs/performance.md 19.
set -euo pipefail

files=2000
trace=1
while getopts "n:t" o; do
	case $o in
	n) files=$OPTARG ;;
	t) trace= ;;
	*) echo "usage: fuse_rounds.sh [-n FILES] [-t] DIR SYSTEM..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: fuse_rounds.sh [-n FILES] [-t] DIR SYSTEM..." >&2; exit 2; }
dir=$(realpath "$1")
shift
here=$(cd "$(dirname "$0")/../.." && pwd)
sf=
for b in build-rel build; do
	[ -x "$here/$b/bench/sc-smallfiles" ] && { sf=$here/$b/bench/sc-smallfiles; break; }
done
[ -n "$sf" ] || { echo "fuse_rounds.sh: no sc-smallfiles (build-rel/bench or build/bench)" >&2; exit 2; }
command -v perf >/dev/null || { echo "fuse_rounds.sh: perf is not installed (linux-perf)" >&2; exit 2; }

work=$(mktemp -d "$dir/fuse_rounds.XXXXXX")
mnt=
pid=
cleanup() {
	[ -z "$mnt" ] || fusermount3 -u "$mnt" 2>/dev/null || fusermount -u "$mnt" 2>/dev/null || true
	[ -z "$pid" ] || wait "$pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
tar -C /usr -cf "$work/tree.tar" include
head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$work/key"
chmod 600 "$work/key"
printf 'fuse_rounds\n' >"$work/pass"

start() {	# SYSTEM BACKING MOUNT
	local sys=$1 b=$2 m=$3 bin opts
	case $sys in
	stackcrypt=*)
		bin=${sys#stackcrypt=}
		opts=
		[[ $bin == *:* ]] && { opts=${bin#*:}; bin=${bin%%:*}; }
		# shellcheck disable=SC2086
		"$bin" init --keyfile="$work/key" ${opts//,/ } "$b" >/dev/null 2>&1
		mkdir -p "$work/st"
		"$bin" mount -f --keyfile="$work/key" --state-dir="$work/st" "$b" "$m" 2>"$work/log" &
		pid=$! ;;
	securefs)
		securefs create --format 4 --keyfile "$work/key" \
			--pbkdf pkcs5-pbkdf2-hmac-sha256 --rounds 1 "$b" >/dev/null
		securefs mount -b --keyfile "$work/key" "$b" "$m" >/dev/null 2>&1 ;;
	gocryptfs)
		gocryptfs -init -q -passfile "$work/pass" -scryptn 10 "$b"
		gocryptfs -q -passfile "$work/pass" "$b" "$m" ;;
	*) echo "fuse_rounds.sh: unknown system $sys" >&2; exit 2 ;;
	esac
	local i
	for i in $(seq 100); do
		mountpoint -q "$m" && return 0
		sleep 0.1
	done
	echo "fuse_rounds.sh: $sys did not mount" >&2
	exit 1
}

# PHASE CMD...: the command under perf, then its table
phase() {
	local ph=$1 t0 t1
	shift
	if [ -z "$trace" ]; then
		t0=$(date +%s.%N)
		"$@" >/dev/null
		t1=$(date +%s.%N)
		printf '  %-8s %7.3f s\n' "$ph" "$(echo "$t1 - $t0" | bc)"
		return
	fi
	t0=$(date +%s.%N)
	perf record -q -o "$work/perf.data" -e fuse:fuse_request_send -e fuse:fuse_request_end -a \
		-- "$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	perf script -i "$work/perf.data" -F time,event,trace 2>/dev/null | python3 -c '
import re, sys
ph, secs, conn = sys.argv[1], float(sys.argv[2]), sys.argv[3]
sent, stats = {}, {}
for line in sys.stdin:
    if not re.search(r"connection " + conn + r" ", line):
        continue    # another FUSE mount of the machine
    t = float(line.split(":", 1)[0])
    m = re.search(r"req (\d+) opcode \d+ \(FUSE_(\w+)\)", line)
    if m:
        sent[m.group(1)] = (m.group(2), t)
        continue
    m = re.search(r"req (\d+) len", line)
    if m and m.group(1) in sent:
        op, t0 = sent.pop(m.group(1))
        n, s = stats.get(op, (0, 0.0))
        stats[op] = (n + 1, s + t - t0)
total = sum(n for n, _ in stats.values())
cells = " ".join(f"{op.lower()}={n}/{1e6 * s / n:.0f}us"
                 for op, (n, s) in sorted(stats.items(), key=lambda kv: -kv[1][0]))
print(f"  {ph:8} {secs:7.3f} s  {total:6} requests  {cells}")
' "$ph" "$(echo "$t1 - $t0" | bc)" "$conn"
}

n=0
for sys in "$@"; do
	n=$((n + 1))
	b=$work/b$n m=$work/m$n
	mkdir "$b" "$m"
	start "$sys" "$b" "$m"
	mnt=$m
	# the kernel's number for this FUSE connection: the mount's minor (major 0)
	conn=$(mountpoint -d "$m" | cut -d: -f2)
	echo "$sys"
	mkdir "$m/t" "$m/a"
	phase untar tar -C "$m/t" -xf "$work/tree.tar"
	sync
	phase ls-lR sh -c 'ls -lR "$1" >/dev/null' sh "$m/t"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	phase read sh -c 'find "$1" -type f -print0 | xargs -0 -r cat >/dev/null' sh "$m/t"
	phase rm-rf rm -rf "$m/t"
	phase create sh -c '"$1" create "$2" "$3" 42 >/dev/null && sync' sh "$sf" "$m/a" "$files"
	echo 3 >/proc/sys/vm/drop_caches
	phase stat "$sf" stat "$m/a" "$files" 42
	phase rename "$sf" rename "$m/a" "$files" 42
	phase delete "$sf" delete "$m/a" "$files" 42
	fusermount3 -u "$m" 2>/dev/null || fusermount -u "$m"
	mnt=
	[ -z "$pid" ] || wait "$pid" || true
	pid=
	if [ -s "$work/log" ] && grep -qv '^stackcrypt: mounted' "$work/log"; then
		echo "  daemon log:"; sed 's/^/    /' "$work/log"
	fi
	rm -f "$work/log"
done
