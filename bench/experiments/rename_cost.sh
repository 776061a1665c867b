#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rename_cost.sh - what a create, a rename, a cold lookup and an unlink
# cost on a volume, two builds (or two volume kinds) taking turns.
#
#   bash bench/experiments/rename_cost.sh [-n PAIRS] [-f FILES] \
#       'BIN_A [INIT_OPTS...]' 'BIN_B [INIT_OPTS...]'
#
# Each round makes a fresh volume with A's binary and init options (a
# random key file, the freshness record in the round's own state dir),
# mounts it, times writing FILES files of 1 000 bytes into one directory
# (create, write, close), syncs, and times os.rename of each to a new name
# (warm caches: the directory and the files were just made); then
# remounts it and times an os.stat of each (a lookup through the whole
# stack each, the daemon's first sight of every name; the backing's
# caches are warm) and their unlinks; then the same with B.  PAIRS rounds
# (default 8), FILES files (default 3000).  Prints each round's seconds
# (A's create, rename, stat and unlink, then B's), the medians, and the
# medians of the pairs' ratios B/A with their range.  Root not needed;
# written up in docs/format.md 11.5 (the binding record looked for at each
# lookup) and 11.6 (the rename entry's cost, the mtime kept by a header
# rewrite).
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

# PHASE: the timed calls of one half of a round ("write" or "read" MNT),
# their seconds printed.
PHASE='
import os, sys, time
which, m, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

def timed(call, fmt):
    t = time.perf_counter()
    for i in range(n):
        call(fmt % (m, i))
    return time.perf_counter() - t

def make(p):
    with open(p, "wb") as f:
        f.write(b"x" * 1000)

if which == "write":
    os.mkdir(m + "/d")
    c = timed(make, "%s/d/f%d")
    os.sync()
    t = time.perf_counter()
    for i in range(n):
        os.rename("%s/d/f%d" % (m, i), "%s/d/g%d" % (m, i))
    print("%.3f %.3f" % (c, time.perf_counter() - t))
else:
    print("%.3f %.3f" % (timed(os.stat, "%s/d/g%d"), timed(os.unlink, "%s/d/g%d")))
'

# an interrupted run leaves no mount behind
trap 'for m in "${TMPDIR:-/var/tmp}"/rename_cost.*/m; do fusermount3 -u "$m" 2>/dev/null; done' EXIT

# one SPEC: prints the four timings of one fresh volume, then removes it
one() {
	local spec=($1) d i
	d=$(mktemp -d "${TMPDIR:-/var/tmp}/rename_cost.XXXXXX")
	mkdir -p "$d/v" "$d/m"
	(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$d/key")
	"${spec[0]}" init --keyfile="$d/key" "${spec[@]:1}" "$d/v" >/dev/null 2>&1
	XDG_STATE_HOME="$d/state" "${spec[0]}" mount --keyfile="$d/key" "$d/v" "$d/m" >/dev/null 2>&1
	echo -n "$(python3 -c "$PHASE" write "$d/m" "$files") "
	fusermount3 -u "$d/m"
	# the daemon holds the volume's lock until it has exited: the mount waits for it
	for i in $(seq 100); do
		XDG_STATE_HOME="$d/state" "${spec[0]}" mount --keyfile="$d/key" "$d/v" "$d/m" \
			>/dev/null 2>&1 && break
		sleep 0.1
	done
	python3 -c "$PHASE" read "$d/m" "$files"
	fusermount3 -u "$d/m"
	rm -rf "$d"
}

out=$(for ((i = 0; i < pairs; i++)); do
	echo "$(one "$1") $(one "$2")"
done)
echo "$out"
echo "$out" | python3 "$(dirname "$0")/pair_stats.py" "create (s)" "rename (s)" "stat (s)" \
	"unlink (s)"
