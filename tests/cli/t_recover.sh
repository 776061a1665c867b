#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t_recover.sh - recovery with the master key against a writer of BACKING
# (issue #28, finding 1).  The attack: clear the names bit of the config's
# features (checksum recomputed), spoil the salt so the password "fails",
# delete the root's nonce record; then 'passwd --masterkey' wrote an
# authenticated config without names, and new names landed in the clear.
# A format 3 config's MAC (keyed from the master key) now catches the edit;
# a config without it (formats 1 and 2) gets its names from the whole tree.
. "$(dirname "$0")/lib.sh"

# conf_edit CONF SED-ARGS...: edits the config with sed and recomputes its
# checksum, as anyone who can write BACKING can.
conf_edit() {
	local c=$1
	shift
	grep -v '^checksum = ' "$c" | sed "$@" >"$T/edit"
	echo "checksum = $(sha256sum "$T/edit" | cut -d' ' -f1)" >>"$T/edit"
	cp "$T/edit" "$c"
}
# The salt's first digit changed to another hex digit: the password fails.
SPOIL_SALT=(-e 's/^salt = 0/salt = 1/' -e t -e 's/^salt = ./salt = 0/')

# make_volume DIR CIPHER: a volume with encrypted names, a file in the root
# and one in a subdirectory; its master key in DIR.mk.
make_volume() {
	new_volume "$1" --cipher="$2" --encrypt-names || finish
	cp "$T/mk" "$1.mk"
	mkdir -p "$T/m"
	sc_mount_fg "$1" "$T/m" --passfile="$T/pw" || finish
	echo "root secret" >"$T/m/f"
	mkdir "$T/m/d"
	echo "sub secret" >"$T/m/d/g"
	sc_umount "$T/m"
}

# drop_root_nonce DIR: deletes the root's directory nonce record, either
# form, kept in $T/rootrec for put_root_nonce.
drop_root_nonce() {
	rm -f "$T/rootrec" "$T/rootrec.file"
	getfattr -n user.stackcrypt.names -e hex "$1" 2>/dev/null |
		sed -n 's/^user.stackcrypt.names=//p' >"$T/rootrec"
	[ -e "$1/sc.nonce" ] && mv "$1/sc.nonce" "$T/rootrec.file"
	setfattr -x user.stackcrypt.names "$1" 2>/dev/null
	check "the root of $1 has no nonce record left" \
		bash -c "! getfattr -n user.stackcrypt.names '$1' >/dev/null 2>&1 && [ ! -e '$1/sc.nonce' ]"
}

# put_root_nonce DIR: the record back (a lost root record loses the root's
# names, finding 7: not what this test is about).
# (aes-gcm keeps the file and its copy in the xattr: docs/format.md 9.2)
put_root_nonce() {
	[ -s "$T/rootrec" ] && setfattr -n user.stackcrypt.names -v "$(cat "$T/rootrec")" "$1"
	[ -e "$T/rootrec.file" ] && mv "$T/rootrec.file" "$1/sc.nonce"
	return 0
}

# names_encrypted DIR: after recovery, the volume reads with the new
# password and a name made now is not stored in the clear.
names_encrypted() {
	expect $E_OK "names:       encrypted" "$SC_BIN" info "$1"
	sc_mount_fg "$1" "$T/m" --passfile="$T/new" || finish
	check "$1: the old file reads after recovery" grep -qx "root secret" "$T/m/f"
	check "$1: the file in the subdirectory reads" grep -qx "sub secret" "$T/m/d/g"
	echo "new" >"$T/m/plainname-after-recovery"
	sc_umount "$T/m"
	check "$1: a name made after recovery is not stored in the clear" \
		bash -c "! find '$1' -name 'plainname-after-recovery' | grep -q ."
}

printf 'a new password\n' >"$T/new"

for cipher in aes-xts aes-gcm; do
	V="$T/v-$cipher"
	make_volume "$V" "$cipher"
	C="$V/.stackcrypt.conf"
	check "$cipher: init writes config format 3" grep -qx "format = 3" "$C"
	check "$cipher: init writes a config MAC" grep -qE "^config_mac = [0-9a-f]{64}$" "$C"
	cp "$C" "$T/good.conf"
	feat=$(sed -n 's/^features = //p' "$C")
	off=$(printf '0x%x' $((feat & ~2)))
	# names and bound directory records (0x4) both cleared
	off2=$(printf '0x%x' $((feat & ~6)))
	check "$cipher: the volume's records are bound (0x4)" [ $((feat & 4)) = 4 ]

	# A forgotten password (spoiled salt) alone: the MAC checks, names stay.
	conf_edit "$C" "${SPOIL_SALT[@]}"
	expect $E_BADPASS "wrong password" "$SC_BIN" fsck --passfile="$T/pw" "$V"
	expect $E_OK "password changed" "$SC_BIN" passwd --masterkey="$V.mk" \
		--new-passfile="$T/new" "$V"
	check "$cipher: recovery says the MAC checked" grep -q "MAC checks with this master key" "$T/out"
	check "$cipher: recovery says what it writes" \
		grep -q "writing the config of $V: format 3, cipher $cipher, block size 4096, features .*names" "$T/out"
	names_encrypted "$V"
	cp "$C" "$T/recovered.conf"

	# The attack on a format 3 config: refused, the config left as it is.
	conf_edit "$C" -e "s/^features = $feat\$/features = $off/" "${SPOIL_SALT[@]}"
	check "$cipher: the edit cleared the names bit" grep -qx "features = $off" "$C"
	drop_root_nonce "$V"
	cp "$C" "$T/attacked.conf"
	expect $E_CONFIG "config $C was edited: its MAC does not match" "$SC_BIN" passwd \
		--masterkey="$V.mk" --new-passfile="$T/new" "$V"
	check "$cipher: the refused recovery left the config alone" cmp -s "$C" "$T/attacked.conf"
	put_root_nonce "$V"
	# the same edit with the password: the unlock refuses it too
	cp "$T/recovered.conf" "$C"
	conf_edit "$C" -e "s/^features = $feat\$/features = $off/"
	expect $E_CONFIG "was tampered with" "$SC_BIN" fsck --passfile="$T/new" "$V"

	# A config of format 2 (no MAC), the same attack, with the bound-records
	# bit cleared too: the subdirectory's record says the names are
	# encrypted and that records are bound, and recovery keeps both so.
	cp "$T/good.conf" "$C"
	drop_root_nonce "$V"
	conf_edit "$C" -e '/^config_mac = /d' -e 's/^format = 3$/format = 2/' \
		-e "s/^features = $feat\$/features = $off2/" "${SPOIL_SALT[@]}"
	check "$cipher: an old-format config without MAC" bash -c "grep -qx 'format = 2' '$C' && ! grep -q config_mac '$C'"
	expect $E_OK "password changed" "$SC_BIN" passwd --masterkey="$V.mk" \
		--new-passfile="$T/new" "$V"
	check "$cipher: recovery found the names in the tree" \
		grep -q "names are encrypted: directory [^ ]* of $V carries a nonce record" "$T/out"
	check "$cipher: recovery says it raises the format" grep -q "from format 2 to 3" "$T/out"
	check "$cipher: the recovered config is format 3" grep -qx "format = 3" "$C"
	check "$cipher: recovery found the records bound" \
		grep -q "directory records are bound to their place: directory [^ ]* of $V carries a version 2 record" "$T/out"
	check "$cipher: the recovered config has its features back" grep -qx "features = $feat" "$C"
	put_root_nonce "$V"
	names_encrypted "$V"
done

# A master key of another volume against a format 3 config: refused, whether
# or not files can vouch for the key.
new_volume "$T/e" --cipher=aes-xts || finish
expect $E_BADPASS "does not match the config of $T/e: its MAC fails" "$SC_BIN" passwd \
	--masterkey="$T/v-aes-xts.mk" --new-passfile="$T/new" "$T/e"
# the volume's own key recovers it although it holds no file: the MAC vouches
expect $E_OK "password changed" "$SC_BIN" passwd --masterkey="$T/mk" --new-passfile="$T/new" "$T/e"

finish
