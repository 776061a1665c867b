#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# gfapi_tools_test.sh - the volume tools over gluster:// (passwd, recovery
# with the master key, init into a non-empty directory), as tests/cli's
# t_passwd.sh and t_init.sh check them over a directory: every exit status
# and the line that says why.  Run by `tests/gluster/harness.sh --gfapi
# single aes-xts`, which has SRC (gluster://127.0.0.1/VOL/.../backing)
# mounted on MNT through the translator; BACKING is that directory on the
# volume's FUSE mount.  The volumes made here are SRC's siblings, each
# reached by URL, and by path on the FUSE mount only to damage or inspect
# them; one GlusterFS volume serves all cases.
#
#  1. passwd: key file -> password -> key file; a wrong password, the wrong
#     kind of secret, a missing config; two passwd at once (the second is
#     refused while the first holds the config lock, taken through
#     libgfapi); a passwd of the mounted volume SRC goes through, as over a
#     directory (the mount read its config when it started); nothing
#     written into a directory that holds no volume by info, fsck, passwd
#     or mount, --masterkey or not (issue #31, item 3).
#  2. Recovery: `passwd --masterkey` with the config there, with the config
#     gone (cipher and block size from the file headers, found by walking
#     the volume through libgfapi), with a master key of another volume
#     (refused, nothing written), and with no file to check it against;
#     the same for aes-gcm, whose headers are inside the files;
#     `mount --masterkey`.
#  3. init into a non-empty directory: refused without --force (posix's
#     line), refused with --encrypt-names, refused where files of a volume
#     whose config was lost lie (recover instead), allowed with --force.
set -u
: "${SRC:?run me under tests/gluster/harness.sh --gfapi}" "${BACKING:?}" "${KEYFILE:?}"
# shellcheck source=../cli/lib.sh
. "$(dirname "$(realpath "$0")")/../cli/lib.sh"

# shellcheck source=gfapi_lib.sh
. "$(dirname "$(realpath "$0")")/gfapi_lib.sh"
new_keyfile "$T/key"
new_keyfile "$T/key2"

# readback NAME SECRET-OPTION FILE: mounts URLD/NAME and checks FILE.
readback() {
	local name=$1 sec=$2 f=$3
	sc_mount_fg "$URLD/$name" "$T/m" "$sec" "${M[@]}" || return 1
	check "$name/$f reads back after recovery" cmp -s <(yes "$f" | head -c 5000) "$T/m/$f"
	sc_umount "$T/m"
}

# 1. passwd
nv p
expect $E_OK "password changed" "$SC_BIN" passwd --passfile="$T/pw" --new-passfile="$T/pw" --scrypt-n=2048 "$URLD/p"
expect $E_OK "scrypt N=2048" "$SC_BIN" info "$URLD/p"
expect $E_OK "key file changed" "$SC_BIN" passwd --passfile="$T/pw" --new-keyfile="$T/key" "$URLD/p"
expect $E_OK "key file" "$SC_BIN" info "$URLD/p"
expect $E_SECRET "unlocked with a key file" "$SC_BIN" passwd --passfile="$T/pw" --new-passfile="$T/pw" "$URLD/p"
expect $E_BADPASS "wrong key file" "$SC_BIN" passwd --keyfile="$T/key2" --new-passfile="$T/pw" "$URLD/p"
expect $E_OK "password changed" "$SC_BIN" passwd --keyfile="$T/key" --new-passfile="$T/pw" --scrypt-n=1024 "$URLD/p"
expect $E_BADPASS "wrong password" "$SC_BIN" passwd --passfile="$T/wrong" --new-passfile="$T/pw" "$URLD/p"
expect $E_SECRET "unlocked with a password, not a key file" \
	"$SC_BIN" passwd --keyfile="$T/key" --new-passfile="$T/pw" "$URLD/p"
check "no temporary config left behind" \
	bash -c "[ -z \"\$(find '$DIRD/p' -name '.stackcrypt.conf.tmp-*')\" ]"
mkdir "$DIRD/empty"
expect $E_CONFIG "no stackcrypt volume" "$SC_BIN" passwd --passfile="$T/pw" --new-passfile="$T/pw" "$URLD/empty"
expect $E_BACKING "directory /" "$SC_BIN" passwd --passfile="$T/pw" --new-passfile="$T/pw" "$URLD/nope"
expect $E_USAGE "bad URL" "$SC_BIN" passwd --passfile="$T/pw" --new-passfile="$T/pw" gluster://127.0.0.1
# nothing is written into a directory that holds no volume (issue #31, item 3)
mkdir "$DIRD/plain"
echo "not encrypted" >"$DIRD/plain/f"
new_keyfile "$T/nomk"
mkdir -p "$T/m"
expect $E_CONFIG "no stackcrypt volume" "$SC_BIN" info "$URLD/plain"
expect $E_CONFIG "no stackcrypt volume" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/plain"
expect $E_CONFIG "no stackcrypt volume" "$SC_BIN" passwd --passfile="$T/pw" --new-passfile="$T/pw" "$URLD/plain"
expect $E_CONFIG "no stackcrypt volume" "$SC_BIN" mount --passfile="$T/pw" "${M[@]}" "$URLD/plain" "$T/m"
expect $E_CONFIG "no config and no encrypted file" \
	"$SC_BIN" passwd --masterkey="$T/nomk" --new-passfile="$T/pw" "$URLD/plain"
expect $E_CONFIG "no config and no encrypted file" \
	"$SC_BIN" mount --masterkey="$T/nomk" "${M[@]}" "$URLD/plain" "$T/m"
check "no command wrote into $URLD/plain: $(ls -A "$DIRD/plain" | tr '\n' ' ')" \
	test "$(ls -A "$DIRD/plain")" = f

# two passwd at once: the test of every backing (tests/cli/lib.sh)
passwd_lock_race "$URLD/p" --new-keyfile="$T/key" "key file changed"
expect $E_OK "key file" "$SC_BIN" info "$URLD/p"

# the harness's volume is mounted: its config may still change (the daemon
# read it when it started), as over a directory
expect $E_OK "key file changed" "$SC_BIN" passwd --keyfile="$KEYFILE" --new-keyfile="$KEYFILE" "$SRC"

# 2. Recovery with the master key
nv r
fill r a b
nv other
fill other x
expect $E_OK "password changed" "$SC_BIN" passwd --masterkey="$T/r.mk" --new-passfile="$T/pw" "$URLD/r"
# another volume's key: the format 3 config's MAC refuses it
expect $E_BADPASS "does not match the config of $URLD/r: its MAC fails" \
	"$SC_BIN" passwd --masterkey="$T/other.mk" --new-passfile="$T/wrong" "$URLD/r"
expect $E_OK "password, scrypt" "$SC_BIN" info "$URLD/r"
# the config lost: cipher and block size from the headers
cp "$DIRD/r/.stackcrypt.conf" "$T/r.conf"
rm "$DIRD/r/.stackcrypt.conf"
expect $E_CONFIG "no stackcrypt volume" "$SC_BIN" info "$URLD/r"
expect $E_BADPASS "does not match the files in $URLD/r" \
	"$SC_BIN" passwd --masterkey="$T/other.mk" --new-passfile="$T/pw" "$URLD/r"
check "a refused recovery wrote no config" test ! -e "$DIRD/r/.stackcrypt.conf"
# ... and init will not make a new volume over those files
expect $E_BACKING "holds files of a stackcrypt volume (e.g. '" \
	"$SC_BIN" init --passfile="$T/pw" "$URLD/r"
expect $E_BACKING "recover it with 'stackcrypt passwd --masterkey $URLD/r'" \
	"$SC_BIN" init --passfile="$T/pw" "$URLD/r"
expect $E_OK "config of $URLD/r recreated from the master key" \
	"$SC_BIN" passwd --masterkey="$T/r.mk" --new-passfile="$T/pw" "$URLD/r"
expect $E_OK "cipher:      aes-xts" "$SC_BIN" info "$URLD/r"
readback r --passfile="$T/pw" b
# mount --masterkey: the same recovery, for one mount
readback r --masterkey="$T/r.mk" a
# aes-gcm: the headers are inside the files, read through libgfapi
nv g --cipher=aes-gcm --block-size=8192
fill g c
rm "$DIRD/g/.stackcrypt.conf"
expect $E_BADPASS "does not match the files in $URLD/g" \
	"$SC_BIN" passwd --masterkey="$T/r.mk" --new-passfile="$T/pw" "$URLD/g"
expect $E_OK "config of $URLD/g recreated from the master key" \
	"$SC_BIN" passwd --masterkey="$T/g.mk" --new-passfile="$T/pw" "$URLD/g"
expect $E_OK "cipher:      aes-gcm" "$SC_BIN" info "$URLD/g"
expect $E_OK "block size:  8192" "$SC_BIN" info "$URLD/g"
readback g --passfile="$T/pw" c
# a volume with no file: the config's MAC (format 3) vouches for the key;
# without the config, nothing to check the key against
nv nofile
expect $E_OK "MAC checks with this master key" "$SC_BIN" passwd --masterkey="$T/nofile.mk" \
	--new-passfile="$T/pw" "$URLD/nofile"
rm "$DIRD/nofile/.stackcrypt.conf"
expect $E_CONFIG "no config and no encrypted file in $URLD/nofile" \
	"$SC_BIN" passwd --masterkey="$T/nofile.mk" --new-passfile="$T/pw" "$URLD/nofile"

# finding 1 of issue #28 over gluster://: the names bit cleared (checksum
# recomputed), the salt spoiled, the root's nonce record deleted.  A format
# 3 config's MAC refuses the recovery; a config without it (format 2) gets
# its names from the subdirectory's record, found by the walk through libgfapi.
nv an --cipher=aes-xts --encrypt-names
mkdir -p "$T/m"
sc_mount_fg "$URLD/an" "$T/m" --passfile="$T/pw" "${M[@]}" || finish
mkdir "$T/m/d"
echo sub >"$T/m/d/g"
sc_umount "$T/m"
AC="$DIRD/an/.stackcrypt.conf"
cp "$AC" "$T/an.good"
# gedit SED-ARGS...: the edit a writer of the volume makes, checksum recomputed
gedit() {
	grep -v '^checksum = ' "$AC" | sed "$@" >"$T/edit"
	echo "checksum = $(sha256sum "$T/edit" | cut -d' ' -f1)" >>"$T/edit"
	cp "$T/edit" "$AC"
}
SPOIL=(-e 's/^salt = 0/salt = 1/' -e t -e 's/^salt = ./salt = 0/')
# the names bit (0x2) cleared; the second edit clears bound records (0x4) too
feat=$(sed -n 's/^features = //p' "$AC")
off=$(printf '0x%x' $((feat & ~2)))
off2=$(printf '0x%x' $((feat & ~6)))
gedit -e "s/^features = $feat\$/features = $off/" "${SPOIL[@]}"
check "the edit cleared the names bit" grep -qx "features = $off" "$AC"
setfattr -x user.stackcrypt.names "$DIRD/an"
expect $E_CONFIG "was edited: its MAC does not match" \
	"$SC_BIN" passwd --masterkey="$T/an.mk" --new-passfile="$T/pw" "$URLD/an"
cp "$T/an.good" "$AC"
gedit -e '/^config_mac = /d' -e 's/^format = 3$/format = 2/' \
	-e "s/^features = $feat\$/features = $off2/" "${SPOIL[@]}"
expect $E_OK "names are encrypted: directory" \
	"$SC_BIN" passwd --masterkey="$T/an.mk" --new-passfile="$T/pw" "$URLD/an"
expect $E_OK "names:       encrypted" "$SC_BIN" info "$URLD/an"

# 3. init into a non-empty directory: the rule over a directory
mkdir "$DIRD/full" && printf 'plain\n' >"$DIRD/full/x"
expect $E_BACKING "is not empty (1 entry, e.g. 'x'); files already there would stay unencrypted" \
	"$SC_BIN" init --passfile="$T/pw" "$URLD/full"
expect $E_BACKING "encrypted names need an empty" \
	"$SC_BIN" init --force --encrypt-names --passfile="$T/pw" "$URLD/full"
expect $E_BACKING "encrypted names need an empty" \
	"$SC_BIN" init --force --passfile="$T/pw" "$URLD/full"
check "a refused init wrote no config" test ! -e "$DIRD/full/.stackcrypt.conf"
# a lock file left by an earlier mount and a config write's leftover do not count
: >"$DIRD/empty/.stackcrypt.lock"
: >"$DIRD/empty/.stackcrypt.conf.tmp-0123456789abcdef"
expect $E_OK "" "$SC_BIN" init --scrypt-n=1024 --passfile="$T/pw" "$URLD/empty"
expect $E_OK "" "$SC_BIN" init --force --cipher=aes-xts --plaintext-names --scrypt-n=1024 \
	--passfile="$T/pw" "$URLD/full"
expect $E_OK "cipher:      aes-xts" "$SC_BIN" info "$URLD/full"
check "--force kept the file" grep -qx plain "$DIRD/full/x"

finish
