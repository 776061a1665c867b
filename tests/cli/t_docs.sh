#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The man page documents every long option that some command's --help lists,
# every exit code, and the fstab line that t_fstab.sh mounts; every link and
# section reference into the docs lands (doc_links.py: relative links and
# their anchors, the history pages included, and "performance.md N" or
# "benchmarks.md, \"Section\"" written in the docs and the sources).
. "$(dirname "$0")/lib.sh"

MAN="$CLI_DIR/../../docs/stackcrypt.1"
[ -f "$MAN" ] || { fail "no man page at $MAN"; finish; }
# the page as text with roff escapes for '-' undone
sed 's/\\-/-/g' "$MAN" >"$T/man"

for cmd in init mount passwd key info fsck speed stats path; do
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

SRC="$CLI_DIR/../.."
python3 "$CLI_DIR/doc_links.py" "$SRC" >"$T/links" 2>&1
check "every link and section reference into the docs lands: $(head -3 "$T/links")" [ ! -s "$T/links" ]
# the checker itself: a broken anchor and a missing section must be found
mkdir -p "$T/tree/docs/history" "$T/tree/bench" "$T/tree/fs"
printf '# B\n\n## Runs\n' >"$T/tree/docs/benchmarks.md"
printf '# P\n\n## 1. One\n' >"$T/tree/docs/performance.md"
printf '# H\n\nsee [runs](../benchmarks.md#runs)\n' >"$T/tree/docs/history/runs.md"
printf '# R\n\n[h](docs/history/runs.md#h)\n' >"$T/tree/README.md"
printf '# Bench\n' >"$T/tree/bench/README.md"
printf '/* docs/performance.md %s and docs/benchmarks.md, %s */\n' 1 '"Runs"' >"$T/tree/fs/a.c"
check "doc_links.py passes a tree whose references land" python3 "$CLI_DIR/doc_links.py" "$T/tree"
printf '# H\n\nsee [runs](../benchmarks.md#gone)\n' >"$T/tree/docs/history/runs.md"
printf '/* docs/performance.md %s and docs/benchmarks.md, %s */\n' 2 '"Gone"' >"$T/tree/fs/a.c"
python3 "$CLI_DIR/doc_links.py" "$T/tree" >"$T/bad" 2>&1
check "doc_links.py exits 1 on broken references" [ "$?" = 1 ]
check "doc_links.py names the broken anchor, section number and section name: $(cat "$T/bad")" \
	[ "$(grep -c -e '#gone' -e 'no section 2' -e 'no such section' "$T/bad")" = 3 ]

finish
