#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# gfapi_fsck_test.sh - `stackcrypt fsck gluster://...` (libgfapi, no mount
# of the volume needed): the same checks, lines and exit status as fsck of
# the same directory on the volume's FUSE mount, which tests/cli's t_fsck*.sh
# pin down over a directory.  Run by `tests/gluster/harness.sh --gfapi
# single aes-xts`; the volumes are SRC's siblings (gfapi_lib.sh), damaged
# only through the volume's FUSE mount, never on a brick.
#
#  1. clean aes-xts, aes-gcm and encrypted-names volumes: exit 0, "0 problems",
#     and the report over the URL is, line for line, the report over the
#     FUSE path (with the URL for the path);
#  2. damage (a header removed, a unit partly zeroed, a plain file; on
#     aes-gcm a flipped ciphertext byte, a cp copy sharing a file id, a hard
#     link that must not count): exit 1 and the problems by name,
#     again the FUSE path's report;
#  3. fsck of SRC, which the harness's daemon has mounted: it goes on with
#     posix's warning, told by the one-mount lock (a mount over gluster://
#     shows in no mountinfo);
#  4. --repair over gluster:// is refused with one line, nothing changed;
#  5. bad URLs, a missing volume, directory or config: one line and the
#     status mount and passwd give (2, 10, 13).
set -u
: "${SRC:?run me under tests/gluster/harness.sh --gfapi}" "${BACKING:?}" "${KEYFILE:?}"
# shellcheck source=../cli/lib.sh
. "$(dirname "$(realpath "$0")")/../cli/lib.sh"
# shellcheck source=gfapi_lib.sh
. "$(dirname "$(realpath "$0")")/gfapi_lib.sh"

# same NAME RC: fsck of URLD/NAME and of DIRD/NAME print the same report
# (sorted: the two readdirs need not agree on order) and exit with RC.
same() {
	local name=$1 rc=$2 urc drc
	"$SC_BIN" fsck -q --passfile="$T/pw" "$URLD/$name" >"$T/url.out" 2>"$T/url.err"
	urc=$?
	"$SC_BIN" fsck -q --passfile="$T/pw" "$DIRD/$name" >"$T/dir.out" 2>"$T/dir.err"
	drc=$?
	CHECKS=$((CHECKS + 1))
	[ "$urc" = "$rc" ] && [ "$drc" = "$rc" ] ||
		fail "fsck of $name: exit $urc over the URL, $drc over the FUSE path, want $rc: $(cat "$T/url.out" "$T/url.err")"
	check "fsck of $name over the URL reports what it reports over the FUSE path" \
		diff <(sed "s|$DIRD/|$URLD/|g" "$T/dir.out" | sort) <(sort "$T/url.out")
	check "fsck of $name over the URL says nothing on stderr" [ ! -s "$T/url.err" ]
}

# 1. clean volumes
nv x
fill x a b c d
nv g --cipher=aes-gcm
fill g a b c
expect $E_OK "$URLD/x: 4 files, 0 directories checked: 20000 bytes" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/x"
check "fsck of x: 0 problems" grep -q "; 0 problems" "$T/out"
same x $E_OK
expect $E_OK "$URLD/g: 3 files, 0 directories checked: " "$SC_BIN" fsck --passfile="$T/pw" "$URLD/g"
check "fsck of g: 0 problems" grep -q "; 0 problems" "$T/out"
same g $E_OK
# encrypted names: a directory, a long name (and its side file) and a symlink too
nv n --encrypt-names
fill n a b c
long=$(printf 'l%.0s' {1..200})
sc_mount_fg "$URLD/n" "$T/m" --passfile="$T/pw" "${M[@]}" && {
	mkdir "$T/m/sub" && printf 'deep\n' >"$T/m/sub/$long" && ln -s a "$T/m/sub/link" ||
		fail "filling n's directory"
	sc_umount "$T/m"
}
expect $E_OK "$URLD/n: 5 files, 1 directory checked: " "$SC_BIN" fsck --passfile="$T/pw" "$URLD/n"
check "fsck of n: 0 problems" grep -q "; 0 problems" "$T/out"
same n $E_OK
# aes-gcm with encrypted names: nonce records in files, read as file data
nv gn --cipher=aes-gcm --encrypt-names
fill gn a b
expect $E_OK "$URLD/gn: 3 files, 0 directories checked: " "$SC_BIN" fsck --passfile="$T/pw" "$URLD/gn"
check "fsck of gn: 0 problems" grep -q "; 0 problems" "$T/out"
same gn $E_OK

# 2. damage, through the FUSE mount
printf 'plain text\n' >"$DIRD/x/stray"
setfattr -x "user.stackcrypt" "$DIRD/x/a" || fail "removing a's header"
dd if=/dev/zero of="$DIRD/x/b" bs=1024 seek=1 count=1 conv=notrunc status=none || fail "zeroing b"
# c's header with a nonce digit changed (byte 10, as t_fsck.sh): its MAC fails
hex=$(getfattr -e hex -n user.stackcrypt "$DIRD/x/c" 2>/dev/null | sed -n 's/^user\.stackcrypt=//p')
d=${hex:22:1}; [ "$d" = 0 ] && d=1 || d=0
setfattr -n user.stackcrypt -v "${hex:0:22}$d${hex:23}" "$DIRD/x/c" || fail "changing c's header"
expect $E_FAIL "4 problems" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/x"
check "missing header reported" grep -qF "$URLD/x/a: no header" "$T/out"
check "torn unit reported" grep -qF "$URLD/x/b: data unit at offset 0 is partly zeros" "$T/out"
check "tampered header reported" grep -qF "$URLD/x/c: header MAC mismatch" "$T/out"
check "plain file reported" grep -qF "$URLD/x/stray: no header" "$T/out"
check "the good file is not reported" bash -c "! grep -qF '$URLD/x/d:' '$T/out'"
same x $E_FAIL
flip "$DIRD/g/b" 200 || fail "flipping a byte of g/b"
# a copy made with cp shares a's file id (#28 finding 5); a hard link of c does not count
cp "$DIRD/g/a" "$DIRD/g/a_copy" && ln "$DIRD/g/c" "$DIRD/g/c_link" || fail "copying g/a, linking g/c"
expect $E_FAIL "2 problems" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/g"
check "the flipped unit reported" grep -qF \
	"$URLD/g/b: unit 0 (plaintext bytes from 0, stored at offset 40) fails its authentication tag" "$T/out"
check "the copy sharing a's file id reported, naming a" grep -qF \
	"$URLD/g/a_copy: has the same aes-gcm file id (so the same key) as $URLD/g/a: " "$T/out"
check "the hard link is not reported" bash -c "! grep -qE '^$URLD/g/c(_link)?: ' '$T/out'"
same g $E_FAIL

# names: an entry renamed by hand, a symlink's target rewritten
enc=$(find "$DIRD/n" -mindepth 1 -maxdepth 1 -type f ! -name '.*' ! -name 'sc.*' -printf '%f\n' | head -1)
mv "$DIRD/n/$enc" "$DIRD/n/by-hand" || fail "renaming $enc on the FUSE mount"
sub=$(find "$DIRD/n" -mindepth 1 -maxdepth 1 -type d | head -1)
lnk=$(find "$sub" -type l | head -1)
rm "$lnk" && ln -s nonsense "$lnk" || fail "rewriting the symlink"
expect $E_FAIL "2 problems" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/n"
check "a hand-made name reported" grep -qF "$URLD/n/by-hand: not a stackcrypt name" "$T/out"
check "a bad symlink target reported" grep -qF "symlink target does not decrypt" "$T/out"
same n $E_FAIL

# 3. a mounted volume: the one-mount lock says so
expect $E_OK "is mounted (a client holds its one-mount lock)" \
	"$SC_BIN" fsck --keyfile="$KEYFILE" "$SRC"

# 4. --repair: refused whole
find "$DIRD/x" -type f -printf '%p %s\n' | sort >"$T/before"
expect $E_USAGE "--repair cannot change a volume over gluster:// yet" \
	"$SC_BIN" fsck --repair --passfile="$T/pw" "$URLD/x"
find "$DIRD/x" -type f -printf '%p %s\n' | sort >"$T/after"
check "a refused --repair changed nothing" cmp -s "$T/before" "$T/after"

# 5. what cannot be checked, in one line, with mount's and passwd's status
expect $E_USAGE "bad URL gluster://: expected gluster://HOST[:PORT]/VOLUME[/PATH]" \
	"$SC_BIN" fsck --passfile="$T/pw" gluster://
expect $E_USAGE "bad URL gluster://127.0.0.1: expected" "$SC_BIN" fsck --passfile="$T/pw" gluster://127.0.0.1
expect $E_BACKING "cannot connect to volume" "$SC_BIN" fsck --passfile="$T/pw" "gluster://127.0.0.1/${SC_GLUSTER_VOL}-nope"
expect $E_BACKING "" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/nope"
mkdir "$DIRD/empty"
expect $E_CONFIG "no stackcrypt volume in $URLD/empty" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/empty/"
check "fsck of a directory that holds no volume made no lock file there" \
	[ ! -e "$DIRD/empty/.stackcrypt.lock" ]

finish
