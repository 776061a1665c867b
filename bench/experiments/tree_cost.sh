#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tree_cost.sh - what a tree costs on a volume: untar, a cold listing of
# every directory, rm -rf; two builds (or two volume kinds) taking turns.
#
#   bash bench/experiments/tree_cost.sh [-n PAIRS] [-t TARBALL] \
#       'BIN_A [INIT_OPTS...]' 'BIN_B [INIT_OPTS...]'
#
# Each round makes a fresh volume with A's binary and init options (a
# random key file, the freshness record in the round's own state dir),
# mounts it, times `tar -x` of TARBALL (default: /usr/include, tarred
# once into the temporary directory) and a sync; remounts it and times
# `find -type d -exec ls -f` (every directory listed in full, cold: the
# daemon's first sight of each) and `rm -rf` of the tree; then the same
# with B.  PAIRS rounds (default 6).  Prints each round's seconds (A's
# untar, listing and rm, then B's), the medians, and the medians of the
# pairs' ratios B/A with their range.  Root not needed; written up in
# docs/format.md 11.7 (what directories' listing records cost).
set -euo pipefail

pairs=6
tarball=
while getopts "n:t:" o; do
	case $o in
	n) pairs=$OPTARG ;;
	t) tarball=$OPTARG ;;
	*) echo "usage: tree_cost.sh [-n PAIRS] [-t TARBALL] 'BIN_A [OPTS]' 'BIN_B [OPTS]'" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: tree_cost.sh [-n PAIRS] [-t TARBALL] 'BIN_A [OPTS]' 'BIN_B [OPTS]'" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/var/tmp}/tree_cost.XXXXXX")
# an interrupted run leaves no mount behind
trap 'for m in "$work"/r.*/m; do fusermount3 -u "$m" 2>/dev/null; done; rm -rf "$work"' EXIT
if [ -z "$tarball" ]; then
	tarball=$work/tree.tar
	tar -C /usr -cf "$tarball" include
fi

secs() { local t0=$EPOCHREALTIME; "$@" >/dev/null; echo "$EPOCHREALTIME - $t0" | bc; }

# mount SPEC D: the volume of round directory D, mounted on D/m
mount_vol() {
	local spec=($1) i
	# the daemon holds the volume's lock until it has exited: the mount waits for it
	for i in $(seq 100); do
		XDG_STATE_HOME="$2/state" "${spec[0]}" mount --keyfile="$2/key" "$2/v" "$2/m" \
			>/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# one SPEC: prints the three timings of one fresh volume, then removes it
one() {
	local spec=($1) d u l r
	d=$(mktemp -d "$work/r.XXXXXX")
	mkdir -p "$d/v" "$d/m"
	(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$d/key")
	"${spec[0]}" init --keyfile="$d/key" "${spec[@]:1}" "$d/v" >/dev/null 2>&1
	mount_vol "$1" "$d"
	u=$(secs bash -c "tar -C '$d/m' -xf '$tarball' && sync")
	fusermount3 -u "$d/m"
	mount_vol "$1" "$d"
	l=$(secs find "$d/m" -type d -exec ls -f {} +)
	r=$(secs bash -c "rm -rf '$d/m'/*")
	fusermount3 -u "$d/m"
	rm -rf "$d"
	echo "$u $l $r"
}

out=$(for ((i = 0; i < pairs; i++)); do
	echo "$(one "$1") $(one "$2")"
done)
echo "$out"
echo "$out" | python3 "$(dirname "$0")/pair_stats.py" "untar (s)" "list, cold (s)" "rm -rf (s)"
