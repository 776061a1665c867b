#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# gfapi_reverse_test.sh - reverse mode over gluster:// (issue #33), as
# tests/cli/t_reverse.sh checks it over a directory, in short: a plaintext
# tree written on the volume through its FUSE mount (files across a unit
# boundary, a symlink, a hard link, a 255-byte name) gets a reverse config
# from `init --reverse URL` (written through libgfapi), is shown encrypted
# by `mount --reverse URL` (the reverse layer over the gluster translator),
# read-only (EROFS), the same bytes in two mounts; the view copied with
# cp -a to a local directory and mounted forward is the tree again; and
# with --config=FILE, a config kept off the volume.  Run
# by `tests/gluster/harness.sh --gfapi single passthrough`; over FUSE over
# io_uring when SC_TEST_IO_URING=1 (sc_mount_fg).
set -u
: "${SRC:?run me under tests/gluster/harness.sh --gfapi}" "${BACKING:?}"
# shellcheck source=../cli/lib.sh
. "$(dirname "$(realpath "$0")")/../cli/lib.sh"
# shellcheck source=gfapi_lib.sh
. "$(dirname "$(realpath "$0")")/gfapi_lib.sh"

P="$DIRD/rev" U="$URLD/rev" V="$T/view" C="$T/copy" F="$T/fwd"
mkdir -p "$P" "$V" "$F" "$C" || finish

log_clean() {
	check "$1: the daemon logged only its mounted line: $(cat "$T/daemon.log")" \
		test "$(grep -vc '^stackcrypt: mounted ' "$T/daemon.log")" = 0
}
rmount() { sc_mount_fg "$U" "$V" --reverse --passfile="$T/pw" "${M[@]}"; }
view_sums() {
	(cd "$V" && find . -type f -exec sha256sum {} + | sort -k2 &&
		find . -type l -printf '%p -> %l\n' | sort)
}

long255=$(printf 'm%.0s' $(seq 255))
mkdir -p "$P/d1/d2"
for n in 1 4095 4096 4097 9000; do
	head -c "$n" /dev/urandom >"$P/d1/f$n" || fail "write f$n on the volume"
done
: >"$P/empty"
head -c 5000 /dev/urandom >"$P/$long255"
echo "linked" >"$P/hard1"
ln "$P/hard1" "$P/d1/d2/hard2"
ln -s d1/f4097 "$P/sym"
ln -s does-not-exist "$P/d1/dangling"

expect $E_OK "Created the reverse-mode config $U/.stackcrypt.reverse.conf" \
	"$SC_BIN" init --reverse --scrypt-n=1024 --passfile="$T/pw" "$U"
check "the config is on the volume" test -f "$P/.stackcrypt.reverse.conf"
expect $E_BACKING "already holds a stackcrypt config" \
	"$SC_BIN" init --reverse --scrypt-n=1024 --passfile="$T/pw" "$U"
expect $E_BADPASS "wrong password" \
	"$SC_BIN" mount --reverse --passfile="$T/wrong" "${M[@]}" "$U" "$V"

rmount || finish
check "the view holds the volume's config" test -f "$V/.stackcrypt.conf"
check "no plaintext name shows in the view" \
	test -z "$(comm -12 <(find "$P" -mindepth 1 -printf '%f\n' | sort -u) \
		<(find "$V" -mindepth 1 -printf '%f\n' | sort -u))"
check "the long name has a side file" test "$(find "$V" -name 'sc.*.name' | wc -l)" = 1
check "the hard-linked file is one inode of the view with 2 links" \
	test "$(find "$V" -type f -links 2 -printf '%i\n' | sort | uniq -c | awk '{print $1}')" = 2
check "the view is mounted read-only (kernel mount flags)" \
	bash -c "findmnt -no OPTIONS '$V' | grep -qE '(^|,)ro(,|$)'"
view_sums >"$T/sums1"
for w in "touch $V/new" "mkdir $V/newdir" "rm -f $V/sc.nonce" "truncate -s 0 $V/sc.nonce"; do
	# shellcheck disable=SC2086  # each command split into its words
	expect 1 "Read-only file system" $w
done
check "cp -a copies the whole view" cp -a "$V/." "$C/"
sc_umount "$V"
log_clean "first view"

rmount || finish
view_sums >"$T/sums2"
sc_umount "$V"
log_clean "second view"
check "two mounts show the same bytes" cmp -s "$T/sums1" "$T/sums2"
check "the copy holds the view's bytes" cmp -s "$T/sums1" <(V="$C" view_sums)
check "the tree on the volume is as it was" test ! -e "$P/new"

sc_mount_fg "$C" "$F" --passfile="$T/pw" || finish
check "the copy mounted forward is the tree: $(diff -r --no-dereference \
	-x .stackcrypt.reverse.conf "$P" "$F" 2>&1 | head -3)" \
	diff -r --no-dereference -x .stackcrypt.reverse.conf "$P" "$F"
check "the copy keeps the hard link" \
	test "$(stat -c %i "$F/hard1")" = "$(stat -c %i "$F/d1/d2/hard2")"
check "the symlink reads its target" test "$(readlink "$F/sym")" = d1/f4097
sc_umount "$F"
log_clean "forward mount of the copy"

# --config=FILE: a local config for the tree on the volume
expect $E_OK "Created the reverse-mode config $T/ext.conf" \
	"$SC_BIN" init --reverse --config="$T/ext.conf" --scrypt-n=1024 --passfile="$T/pw" "$U"
sc_mount_fg "$U" "$V" --reverse --config="$T/ext.conf" --passfile="$T/pw" "${M[@]}" || finish
check "with --config, the view's config is that file's fields" \
	cmp -s <(grep -v checksum "$V/.stackcrypt.conf") <(grep -v checksum "$T/ext.conf")
check "... and the tree's own config is one more file of the view" \
	test "$(find "$V" -type f | wc -l)" = "$(($(grep -c '^[0-9a-f]' "$T/sums1") + 1))"
sc_umount "$V"
log_clean "view with --config"
finish
