#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What reaches a GlusterFS brick per phase, in counts, for one stackcrypt
# system (docs/performance.md, section 17):
#
#   bench/gluster_counts.sh [-b STACKCRYPT] [-n FILES] [-s] VOLUME FUSEMNT SYSTEM WORKLOAD
#
#   VOLUME    a started volume of this host (scripts/gluster.sh up single VOLUME)
#   FUSEMNT   where VOLUME is FUSE-mounted (scripts/gluster.sh mount VOLUME DIR)
#   SYSTEM    raw            the FUSE mount itself
#             aes-xts        stackcrypt aes-xts over the FUSE mount (two FUSE hops)
#             passthrough    stackcrypt passthrough over the FUSE mount
#             aes-xts-gfapi  stackcrypt aes-xts on the gluster translator
#             passthrough-gfapi  the same, passthrough
#   WORKLOAD  dd     a 100 MB dd bs=4k write, then a cold dd bs=4k read
#             small  build/bench/sc-smallfiles' phases as bench_mongo runs them
#                    (create+sync, cp -a, cold read, cold stat, rename, delete)
#             tree   a copy of the tree TREE (default /usr/include/node), then
#                    cold ls -lR, cold read of every file, rm -rf
#   -b        the stackcrypt binary (default build/fs/stackcrypt)
#   -n        files of the small workload (default 2000, seed 42)
#   -s        mount with -o stats=all and print the io-stats counts per
#             phase and layer boundary as well
#
# Per phase: its wall time and the daemon's CPU time (both move with the
# machine's load), then the brick's FOP counts from `gluster volume
# profile VOLUME info` (cleared before the phase; FORGET and RELEASE left
# out), which do not.  Turns profiling on for VOLUME.  Everything is made in
# a fresh directory of the volume and removed afterwards; the stackcrypt
# mount is unmounted on any exit.  Runs as root (drop_caches).  Exit 0, 1 on
# a failed step (one line on stderr), 2 on a bad command line.
set -uo pipefail

prog=bench/gluster_counts.sh
die() { echo "$prog: $*" >&2; exit 1; }
usage() { echo "usage: $prog [-b STACKCRYPT] [-n FILES] [-s] VOLUME FUSEMNT SYSTEM dd|small|tree" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
SC=$here/build/fs/stackcrypt
SF=$here/build/bench/sc-smallfiles
N=2000
STATS=
while getopts b:n:s o; do
	case $o in
	b) SC=$OPTARG ;;
	n) N=$OPTARG ;;
	s) STATS=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 4 ] || usage
VOL=$1 FM=$2 SYS=$3 WL=$4
case $WL in dd|small|tree) ;; *) usage ;; esac
TREE=${TREE:-/usr/include/node}
[ "$WL" != tree ] || [ -d "$TREE" ] || die "no tree at $TREE (TREE=DIR)"
case $SYS in raw|aes-xts|passthrough|aes-xts-gfapi|passthrough-gfapi) ;; *) usage ;; esac
[[ $N =~ ^[1-9][0-9]*$ ]] || usage
mountpoint -q "$FM" || die "$FM is not a mount point"
[ -x "$SC" ] || die "no stackcrypt binary at $SC"
[ "$WL" = dd ] || [ -x "$SF" ] || die "no $SF (ninja -C build)"
gluster volume profile "$VOL" start >/dev/null 2>&1	# "already started" is fine
gluster volume profile "$VOL" info >/dev/null || die "cannot profile volume $VOL"

scratch=$(mktemp -d /tmp/gluster-counts.XXXXXX) || die "mktemp failed"
sub=counts-$SYS-$WL-$$
M=$scratch/m
mounted=
cleanup() {
	[ -n "$mounted" ] && { fusermount3 -u "$M" 2>/dev/null || umount "$M"; }
	rm -rf "${FM:?}/$sub" "$scratch"
}
trap cleanup EXIT
mkdir "$M" "$FM/$sub" || die "cannot make $FM/$sub"
head -c 32 /dev/urandom >"$scratch/key" && chmod 600 "$scratch/key"

opts=()
[ -n "$STATS" ] && opts=(-o stats=all)
url=gluster://127.0.0.1/$VOL/$sub
case $SYS in
raw) M=$FM/$sub ;;
passthrough) "$SC" mount --stack=passthrough "${opts[@]}" "$FM/$sub" "$M" ;;
passthrough-gfapi) "$SC" mount --stack=passthrough "${opts[@]}" "$url" "$M" ;;
aes-xts|aes-xts-gfapi)
	b=$FM/$sub
	[ "$SYS" = aes-xts-gfapi ] && b=$url
	"$SC" init --cipher=aes-xts --keyfile="$scratch/key" "$b" >/dev/null &&
		"$SC" mount --keyfile="$scratch/key" "${opts[@]}" "$b" "$M" ;;
esac 2>"$scratch/mount.err" || die "mount failed: $(tail -1 "$scratch/mount.err")"
[ "$SYS" = raw ] || mounted=1
pid=
if [ -n "$mounted" ]; then
	pid=$(pgrep -f -n "stackcrypt mount.* $M\$") || die "no daemon for $M"
fi

cpu_ms() { [ -n "$pid" ] && awk '{print ($14 + $15) * 10}' "/proc/$pid/stat" || echo 0; }
brick_counts() {
	gluster volume profile "$VOL" info | awk '
		/Cumulative/ { f = 1 } /Duration/ { f = 0 }
		f && / ns / && $NF != "FORGET" && $NF != "RELEASE" && $NF != "RELEASEDIR" {
			printf " %s=%s", $NF, $(NF - 1) }
		END { print "" }'
}
phase() {	# NAME COMMAND...
	local name=$1 t0 t1 c0 c1
	shift
	gluster volume profile "$VOL" info clear >/dev/null || die "profile clear failed"
	[ -n "$STATS" ] && { "$SC" stats --json "$M" >"$scratch/s0.json" || die "stats failed"; }
	c0=$(cpu_ms)
	t0=$(date +%s.%N)
	"$@" || die "$name failed"
	t1=$(date +%s.%N)
	c1=$(cpu_ms)
	printf '%s %s %s: %.3f s, daemon CPU %d ms (both loaded-machine figures)\n' \
		"$SYS" "$WL" "$name" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" $((c1 - c0))
	echo "  brick:$(brick_counts)"
	if [ -n "$STATS" ]; then
		"$SC" stats --json "$M" >"$scratch/s1.json" || die "stats failed"
		python3 - "$scratch/s0.json" "$scratch/s1.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for la, lb in zip(a["layers"], b["layers"]):
    d = {k: v["count"] - la["ops"][k]["count"] for k, v in lb["ops"].items()}
    print("  %s: %s" % (lb["label"], " ".join("%s=%d" % kv for kv in d.items() if kv[1])))
EOF
	fi
}
drop() { sync && echo 3 >/proc/sys/vm/drop_caches; }

if [ "$WL" = dd ]; then
	phase write dd if=/dev/zero of="$M/f" bs=4k count=25000 status=none
	drop || die "drop_caches failed"
	phase read dd if="$M/f" of=/dev/null bs=4k status=none
elif [ "$WL" = tree ]; then
	phase copy cp -a --reflink=never "$TREE" "$M/t"
	sync
	drop || die "drop_caches failed"
	phase ls-lR sh -c 'ls -lR "$1" >/dev/null' sh "$M/t"
	drop || die "drop_caches failed"
	phase read sh -c 'find "$1" -type f -exec cat {} + >/dev/null' sh "$M/t"
	drop || die "drop_caches failed"
	phase rm-rf rm -rf "$M/t"
else
	mkdir "$M/a" || die "mkdir failed"
	phase create sh -c '"$1" create "$2" "$3" 42 >/dev/null && sync' sh "$SF" "$M/a" "$N"
	phase copy cp -a --reflink=never "$M/a" "$M/b"
	sync
	drop || die "drop_caches failed"
	phase read sh -c '"$1" read "$2" "$3" 42 >/dev/null' sh "$SF" "$M/b" "$N"
	drop || die "drop_caches failed"
	phase stat sh -c '"$1" stat "$2" "$3" 42 >/dev/null' sh "$SF" "$M/a" "$N"
	phase rename sh -c '"$1" rename "$2" "$3" 42 >/dev/null' sh "$SF" "$M/a" "$N"
	phase delete sh -c '"$1" delete "$2" "$3" 42 >/dev/null' sh "$SF" "$M/a" "$N"
fi
exit 0
