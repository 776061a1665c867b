#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Instructions per small-file create in the daemon (docs/performance.md
# 14.2): a fresh ext4 loop image, a volume of CIPHER made by BIN (or the
# passthrough stack), the daemon run under `valgrind --tool=callgrind` in
# the foreground, `sc-smallfiles create MNT FILES 42`, unmount.  Prints the
# daemon's total and the inclusive counts of op_create, sc_fkey_new and
# sc_hkdf_sha256.  Instructions, not seconds: the same whatever else the
# machine is doing.  Build BIN with -Dbuildtype=debugoptimized so the
# functions keep their names.
#
#   bash bench/experiments/create_callgrind.sh BIN SMALLFILES [CIPHER|passthrough] [FILES]
# Root (loop device, mount).  Everything is made in a temp dir and removed.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: create_callgrind.sh BIN SMALLFILES [CIPHER|passthrough] [FILES]" >&2; exit 2; }
BIN=$(realpath "$1") SF=$(realpath "$2") CIPHER=${3:-aes-xts} FILES=${4:-2000}
[ -x "$BIN" ] || { echo "create_callgrind.sh: $1 is not executable" >&2; exit 2; }
[ -x "$SF" ] || { echo "create_callgrind.sh: $2 is not executable (build/bench/sc-smallfiles)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "create_callgrind.sh: valgrind is not installed" >&2; exit 2; }
W=$(mktemp -d /tmp/sc-cg.XXXXXX)
VP=
cleanup()
{
	mountpoint -q "$W/m" && fusermount3 -u "$W/m"
	[ -n "$VP" ] && wait "$VP" 2>/dev/null
	mountpoint -q "$W/fs" && umount "$W/fs"
	rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/fs" "$W/m"
truncate -s 1G "$W/img"
mkfs.ext4 -q -F "$W/img"
mount -o loop "$W/img" "$W/fs"
mkdir "$W/fs/b"
opts=(--stack=passthrough)
if [ "$CIPHER" != passthrough ]; then
	(umask 077 && head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$W/key")
	# names in the clear, as before init encrypted them by default (issue #28)
	# shellcheck disable=SC2046  # an option or nothing
	"$BIN" init --cipher="$CIPHER" $("$BIN" init --help 2>&1 | grep -q -- --plaintext-names && echo --plaintext-names) --keyfile="$W/key" "$W/fs/b" >"$W/init.log" 2>&1 ||
		{ cat "$W/init.log" >&2; exit 1; }
	opts=(--keyfile="$W/key")
fi
valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" \
	"$BIN" mount -f "${opts[@]}" "$W/fs/b" "$W/m" >"$W/vg.log" 2>&1 &
VP=$!
# The daemon under valgrind takes seconds to mount; wait for it, or for its end.
until mountpoint -q "$W/m"; do
	kill -0 "$VP" 2>/dev/null || { cat "$W/vg.log" >&2; echo "create_callgrind.sh: the daemon exited before mounting" >&2; exit 1; }
	sleep 0.1
done
"$SF" create "$W/m" "$FILES" 42 >/dev/null
fusermount3 -u "$W/m"
wait "$VP"
VP=
echo "daemon total: $(sed -n 's/^summary: //p' "$W/cg.out") instructions ($CIPHER, $FILES creates)"
callgrind_annotate --inclusive=yes "$W/cg.out" 2>/dev/null |
	awk '$3 ~ /:(op_create|sc_fkey_new|sc_hkdf_sha256)$/ && $4 ~ /^\[/ { sub(/.*\//, "", $3); print "  " $1, $3 }'
