#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tree_test.sh - a real tree through the mount.  Run under harness.sh:
#
#   harness.sh CONFIG FSTYPE -- tree_test.sh
#
# Extracts a tar stream of SC_TREE_SRC (default /usr/include) into MNT and
# into REF (a plain directory on the same filesystem), leaving out the
# subtrees that SC_TREE_EXCLUDE names (space-separated, relative to the
# source; absent ones are ignored), then checks:
#   - diff -r REF/<tree> MNT/<tree> is clean after a remount (so every byte comes
#     from the backing files, not the mount's page cache);
#   - type, mode, owner, size, file mtime and link count of every entry are
#     those tar gave the plain copy in REF (before and after the remount);
#   - passthrough: diff -r MNT BACKING is clean (the view is the backing dir);
#   - crypt configs: BACKING holds the same names, every backing file has the
#     plaintext's size and the per-file header xattr user.stackcrypt, and for
#     aes-xts/aes-cbc every non-empty backing file differs from its plaintext;
#     aes-gcm: every backing file has the stored size of its plaintext's
#     (docs/format.md 10.3) and no header xattr (the header is in the file).
#   - a volume whose features (stackcrypt info, not an environment variable
#     a run could forget) say names are encrypted: BACKING holds as many
#     entries of each type and file size as the mount (side files of long
#     names aside), no backing name equals a plaintext name of the tree (whole
#     names of 4 bytes or more), no symlink target equals a plaintext target,
#     and for aes-xts/aes-cbc no backing file holds a plaintext file's bytes.
# Exits 0 if all hold, 1 with a FAIL line per broken property otherwise.

set -u
SRC=$(realpath "${SC_TREE_SRC:-/usr/include}")
NAME=$(basename "$SRC")
. "$(dirname "$0")/test_lib.sh"
sc_test_init tree MNT BACKING REF CONFIG SC_REMOUNT

# Metadata that must survive the mount: one line per entry, sorted.
meta() {
	(cd "$1" && find . \( -type f -printf '%y %m %U %G %n %s %T@ %p\n' \) -o \
		\( -type l -printf '%y %U %G %s %p -> %l\n' \) -o \
		-printf '%y %m %U %G %p\n') | LC_ALL=C sort
}

# Names and sizes of regular files (types only for the rest), sorted.
names_sizes() {
	(cd "$1" && find . \( -type f -printf 'f %s %p\n' \) -o -printf '%y %p\n') |
		grep -Ev '^f [0-9]* \./(\.stackcrypt\.(conf|lock)|sc\.journal)$' | stored_sizes "$1" |
		LC_ALL=C sort
}

# aes-gcm: the sizes of "f SIZE ..." lines of the mount as stored (40-byte
# header, 32 bytes more per unit), and a header-only backing file (40) as
# the empty file it is; other configs: unchanged.
stored_sizes() {
	if [ "$CONFIG" != aes-gcm ]; then
		cat
	elif [ "$1" = "$BACKING" ]; then
		awk '$1 == "f" && $2 == 40 { $2 = 0 } { print }'
	else
		awk -v bs="$SC_BLOCK_SIZE" '$1 == "f" && $2 > 0 {
			r = $2 % bs
			$2 = 40 + ($2 - r) / bs * (bs + 32) + (r ? r + 32 : 0)
		} { print }'
	fi
}

# How many of $1 backing files should carry a per-file header xattr.
want_hdr_xattrs() {
	if [ "$CONFIG" = aes-gcm ]; then echo 0; else echo "$1"; fi
}

excl=()
for e in ${SC_TREE_EXCLUDE:-}; do excl+=("--exclude=$NAME/$e"); done
t0=$(date +%s.%N)
tar -C "$(dirname "$SRC")" "${excl[@]}" -cf - "$NAME" | tar -C "$MNT" -xf - ||
	fail "extract: tar into the mount failed"
tar -C "$(dirname "$SRC")" "${excl[@]}" -cf - "$NAME" | tar -C "$REF" -xf - ||
	fail "extract: tar into REF failed"
t1=$(date +%s.%N)
# From here on the source is REF's copy of it, which left out the same.
ORIG=$SRC
SRC=$REF/$NAME
echo "tree: extracted $(find "$SRC" | wc -l) entries of $ORIG${SC_TREE_EXCLUDE:+ (but $SC_TREE_EXCLUDE)} into MNT and REF in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')s"

# Warm (names and attributes as cached by the mount); the data is compared
# after the remount, where it must come from the backing files.
diff <(meta "$REF/$NAME") <(meta "$MNT/$NAME") >&2 || fail "meta: REF vs MNT metadata differ"

# Cold: a fresh mount reads everything back from the backing files.
"$SC_REMOUNT" || fail "remount failed"
diff -r --no-dereference "$SRC" "$MNT/$NAME" >&2 || fail "diff: REF vs MNT differ (after remount)"
diff <(meta "$REF/$NAME") <(meta "$MNT/$NAME") >&2 || fail "meta: REF vs MNT metadata differ (after remount)"

# Whether the volume encrypts names: the config's features (bit 0x2,
# SC_FEAT_NAMES), read by `stackcrypt info` without a secret.
names_encrypted() {
	local f
	f=$("$SC_BIN" info "$BACKING" 2>/dev/null | awk '$1 == "features:" { print $2 }')
	[ -n "$f" ] && (( f & 0x2 ))
}

# Types and file sizes of a tree, without names: one line per entry, sorted
# (the config, the mount's lock file, aes-gcm's crash journal and the side
# files of long names left out).
types_sizes() {
	(cd "$1" && find . -mindepth 1 \( -path ./.stackcrypt.conf -o -path ./.stackcrypt.lock -o \
		-path ./sc.journal -o \
		-regex '.*/sc\.[A-Za-z0-9_-]*\.name' \) -prune -o \
		\( -type f -printf 'f %s\n' \) -o -printf '%y\n') | stored_sizes "$1" | LC_ALL=C sort
}

if [ "$CONFIG" = passthrough ]; then
	diff -r --no-dereference "$MNT" "$BACKING" >&2 || fail "passthrough: MNT vs BACKING differ"
elif names_encrypted; then
	diff <(types_sizes "$MNT") <(types_sizes "$BACKING") >&2 ||
		fail "names: BACKING's entries (types, sizes) differ from the mount's"
	# every name of the source tree, 4 bytes or more, and every backing name
	LC_ALL=C find "$SRC" -printf '%f\n' | LC_ALL=C awk 'length($0) >= 4' |
		LC_ALL=C sort -u >"$REF/.plain-names"
	(cd "$BACKING" && LC_ALL=C find . -mindepth 1 -printf '%f\n') | LC_ALL=C sort -u \
		>"$REF/.backing-names"
	nplain=$(wc -l <"$REF/.plain-names")
	[ "$nplain" -gt 100 ] || fail "names: only $nplain plaintext names to look for"
	leaked=$(LC_ALL=C comm -12 "$REF/.plain-names" "$REF/.backing-names")
	[ -z "$leaked" ] ||
		fail "names: BACKING holds plaintext names: $(echo "$leaked" | head -5 | tr '\n' ' ')"
	find "$SRC" -type l -printf '%l\n' | LC_ALL=C sort -u >"$REF/.plain-targets"
	find "$BACKING" -type l -printf '%l\n' | LC_ALL=C sort -u >"$REF/.backing-targets"
	[ "$(wc -l <"$REF/.backing-targets")" -ge "$(wc -l <"$REF/.plain-targets")" ] ||
		fail "names: BACKING has fewer symlink targets than the tree"
	leaked=$(LC_ALL=C comm -12 "$REF/.plain-targets" "$REF/.backing-targets")
	[ -z "$leaked" ] ||
		fail "names: BACKING holds plaintext symlink targets: $(echo "$leaked" | head -5 | tr '\n' ' ')"
	nfiles=$(find "$BACKING" -mindepth 1 -type f ! -path "$BACKING/.stackcrypt.conf" \
		! -path "$BACKING/.stackcrypt.lock" | wc -l)
	nhdr=$(getfattr -R -h -P --absolute-names -m '^user\.stackcrypt$' "$BACKING" 2>/dev/null |
		grep -c '^# file: ')
	[ "$nhdr" = "$(want_hdr_xattrs "$nfiles")" ] ||
		fail "names: $nhdr of $nfiles backing files carry the user.stackcrypt header xattr"
	if [ "$CONFIG" != null ]; then
		# no backing file holds the bytes of a non-empty plaintext file
		(cd "$MNT/$NAME" && find . -type f -size +0 -exec sha256sum {} +) |
			awk '{ print $1 }' | LC_ALL=C sort -u >"$REF/.plain-sums"
		(cd "$BACKING" && find . -type f -size +0 ! -path ./.stackcrypt.conf ! -path ./.stackcrypt.lock \
			-exec sha256sum {} +) | awk '{ print $1 }' | LC_ALL=C sort -u >"$REF/.backing-sums"
		[ -s "$REF/.plain-sums" ] || fail "names: no plaintext file to compare"
		[ -z "$(LC_ALL=C comm -12 "$REF/.plain-sums" "$REF/.backing-sums")" ] ||
			fail "names: a backing file holds a plaintext file's bytes"
	fi
	rm -f "$REF"/.plain-* "$REF"/.backing-*
else
	diff <(names_sizes "$MNT") <(names_sizes "$BACKING") >&2 ||
		fail "crypt: BACKING names or sizes differ from the plaintext's"
	nfiles=$(find "$BACKING/$NAME" -type f | wc -l)
	nhdr=$(getfattr -R -h -P --absolute-names -m '^user\.stackcrypt$' "$BACKING/$NAME" 2>/dev/null |
		grep -c '^# file: ')
	[ "$nhdr" = "$(want_hdr_xattrs "$nfiles")" ] ||
		fail "crypt: $nhdr of $nfiles backing files carry the user.stackcrypt header xattr"
	if [ "$CONFIG" != null ]; then
		nonempty=$(find "$MNT/$NAME" -type f -size +0 | wc -l)
		ndiff=$(diff -rq --no-dereference "$MNT/$NAME" "$BACKING/$NAME" |
			grep -c '^Files .* differ$')
		[ "$ndiff" = "$nonempty" ] ||
			fail "crypt: only $ndiff of $nonempty non-empty backing files differ from the plaintext"
	fi
fi
t2=$(date +%s.%N)
echo "tree: checks done in $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", b - a }')s"
exit $failed
