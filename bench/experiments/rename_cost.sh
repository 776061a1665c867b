#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rename_cost.sh - what a create and a rename cost on a volume, two builds
# (or two volume kinds) taking turns.
#
#   bash bench/experiments/rename_cost.sh [-n PAIRS] [-f FILES] \
#       'BIN_A [INIT_OPTS...]' 'BIN_B [INIT_OPTS...]'
#
# Each round makes a fresh volume with A's binary and init options (a
# random key file, the freshness record in the round's own state dir),
# mounts it, times writing FILES files of 1 000 bytes into one directory
# (create, write, close), syncs, and times os.rename of each to a new name
# (warm caches: the directory and the files were just made); then the same
# with B.  PAIRS rounds (default 8), FILES files (default 3000).  Prints
# each round's seconds (A's create and rename, B's create and rename), the
# medians and the medians of the pairs' ratios B/A.  Root not needed;
# written up in docs/format.md 11.6 (the rename entry's cost, the mtime
# kept by a header rewrite).
set -euo pipefail

pairs=8
files=3000
while getopts "n:f:" o; do
	case $o in
	n) pairs=$OPTARG ;;
	f) files=$OPTARG ;;
	*) echo "usage: rename_cost.sh [-n PAIRS] [-f FILES] 'BIN_A [OPTS]' 'BIN_B [OPTS]'" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: rename_cost.sh [-n PAIRS] [-f FILES] 'BIN_A [OPTS]' 'BIN_B [OPTS]'" >&2; exit 2; }

# one SPEC: prints the seconds the renames of one fresh volume took
one() {
	local spec=($1) d
	d=$(mktemp -d "${TMPDIR:-/var/tmp}/rename_cost.XXXXXX")
	trap 'fusermount3 -u "$d/m" 2>/dev/null; rm -rf "$d"' RETURN
	mkdir -p "$d/v" "$d/m"
	(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$d/key")
	"${spec[0]}" init --keyfile="$d/key" "${spec[@]:1}" "$d/v" >/dev/null 2>&1
	XDG_STATE_HOME="$d/state" "${spec[0]}" mount --keyfile="$d/key" "$d/v" "$d/m" >/dev/null 2>&1
	python3 - "$d/m" "$files" <<'EOF'
import os, sys, time
m, n = sys.argv[1], int(sys.argv[2])
os.mkdir(m + "/d")
t = time.perf_counter()
for i in range(n):
    with open("%s/d/f%d" % (m, i), "wb") as f:
        f.write(b"x" * 1000)
c = time.perf_counter() - t
os.sync()
t = time.perf_counter()
for i in range(n):
    os.rename("%s/d/f%d" % (m, i), "%s/d/g%d" % (m, i))
print("%.3f %.3f" % (c, time.perf_counter() - t))
EOF
}

out=$(for ((i = 0; i < pairs; i++)); do
	echo "$(one "$1") $(one "$2")"
done)
echo "$out"
python3 - <<EOF
import statistics
r = [list(map(float, l.split())) for l in """$out""".splitlines()]
for k, what in ((0, "create"), (1, "rename")):
    print("%s: median A %.3f s, B %.3f s; B/A, median of the pairs: %.3f" % (
        what, statistics.median(x[k] for x in r), statistics.median(x[2 + k] for x in r),
        statistics.median(x[2 + k] / x[k] for x in r)))
EOF
