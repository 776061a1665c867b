#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The man page documents every long option that some command's --help lists,
# every exit code, and the fstab line that t_fstab.sh mounts.
. "$(dirname "$0")/lib.sh"

MAN="$CLI_DIR/../../docs/stackcrypt.1"
[ -f "$MAN" ] || { fail "no man page at $MAN"; finish; }
# the page as text with roff escapes for '-' undone
sed 's/\\-/-/g' "$MAN" >"$T/man"

for cmd in init mount passwd info fsck speed stats; do
	"$SC_BIN" "$cmd" --help >"$T/help" 2>&1 || fail "$cmd --help failed"
	for opt in $(grep -oE -- '--[a-z][a-z-]+' "$T/help" | sort -u); do
		check "man page documents $cmd $opt" grep -qF -- "$opt" "$T/man"
	done
done
for code in 0 1 2 10 11 12 13 14; do
	check "man page documents exit status $code" grep -qx -- ".B $code" "$T/man"
done
check "man page has the fstab line" \
	grep -qF "/srv/enc  /mnt/plain  fuse.stackcrypt  nosuid,nodev,keyfile=/root/key  0  0" "$T/man"
if command -v groff >/dev/null; then
	groff -ww -man -z "$MAN" >"$T/groff" 2>&1
	check "man page renders without warnings: $(head -3 "$T/groff")" [ ! -s "$T/groff" ]
fi

finish
