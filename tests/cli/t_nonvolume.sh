#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t_nonvolume.sh - nothing is written into a directory that is not a volume
# (issue #31, item 3: a refused mount left an empty .stackcrypt.lock in
# it, and `diff -r` of the directory then failed).  Every command that
# takes a BACKING is run over a plain directory with a file in it, with
# every kind of secret; each is refused, and the directory's listing (names,
# sizes, modes, times) is the same after as before.  Then a recovery mount
# (--masterkey) of a volume whose config was lost still takes the one-mount
# lock, once the unlock has found the volume: a second mount is refused.
# passwd --masterkey says what it did: a config recreated, not "password
# changed".  (The same over gluster:// is in tests/gluster/gfapi_tools_test.sh.)
. "$(dirname "$0")/lib.sh"

(umask 077; printf 'correct horse\n' >"$T/pw")
new_keyfile "$T/key"
new_keyfile "$T/mk"
mkdir -p "$T/plain/sub" "$T/m"
echo "not encrypted" >"$T/plain/f"
echo "below" >"$T/plain/sub/g"

# listing DIR: every entry of DIR with its type, size, mode and times (ns).
listing() {
	find "$1" -printf '%P %y %s %m %T@ %C@\n' | sort
}
listing "$T/plain" >"$T/before"

# untouched WHAT: the plain directory is as it was.
untouched() {
	listing "$T/plain" >"$T/after"
	check "$WHAT left $T/plain as it was: $(diff "$T/before" "$T/after" | tr '\n' ' ')" \
		cmp -s "$T/before" "$T/after"
}

for sec in --passfile="$T/pw" --keyfile="$T/key"; do
	WHAT="mount $sec"
	expect $E_CONFIG "no stackcrypt volume in $T/plain" "$SC_BIN" mount "$sec" "$T/plain" "$T/m"
	untouched
	WHAT="mount -f $sec"
	expect $E_CONFIG "no stackcrypt volume in $T/plain" "$SC_BIN" mount -f "$sec" "$T/plain" "$T/m"
	untouched
	WHAT="fsck $sec"
	expect $E_CONFIG "no stackcrypt volume in $T/plain" "$SC_BIN" fsck "$sec" "$T/plain"
	untouched
	WHAT="passwd $sec"
	expect $E_CONFIG "no stackcrypt volume in $T/plain" \
		"$SC_BIN" passwd "$sec" --new-passfile="$T/pw" "$T/plain"
	untouched
done
WHAT="mount --masterkey"
expect $E_CONFIG "no config and no encrypted file in $T/plain" \
	"$SC_BIN" mount --masterkey="$T/mk" "$T/plain" "$T/m"
untouched
WHAT="fsck --masterkey"
expect $E_CONFIG "no config and no encrypted file in $T/plain" \
	"$SC_BIN" fsck --masterkey="$T/mk" "$T/plain"
untouched
WHAT="passwd --masterkey"
expect $E_CONFIG "no config and no encrypted file in $T/plain" \
	"$SC_BIN" passwd --masterkey="$T/mk" --new-passfile="$T/pw" "$T/plain"
untouched
WHAT="fsck (no secret)"
expect $E_CONFIG "no stackcrypt volume in $T/plain" "$SC_BIN" fsck "$T/plain"
untouched
WHAT="info"
expect $E_CONFIG "no stackcrypt volume in $T/plain" "$SC_BIN" info "$T/plain"
untouched
check "nothing is mounted on $T/m" bash -c "! awk -v m='$T/m' '\$5 == m {f=1} END {exit !f}' /proc/self/mountinfo"

# A volume whose config was lost: the recovery mount finds it, and only
# then takes the lock, which a second mount meets.
new_volume "$T/v" || finish
cp "$T/mk" "$T/v.mk"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
echo "kept" >"$T/m/a"
sc_umount "$T/m"
rm "$T/v/.stackcrypt.conf" "$T/v/.stackcrypt.lock"
sc_mount_fg "$T/v" "$T/m" --masterkey="$T/v.mk" || finish
check "the recovery mount reads the file back" grep -qx kept "$T/m/a"
check "the recovery mount holds the lock file" test -f "$T/v/.stackcrypt.lock"
mkdir -p "$T/m2"
expect $E_BACKING "already mounted at $T/m" "$SC_BIN" mount --masterkey="$T/v.mk" "$T/v" "$T/m2"
sc_umount "$T/m"
check "the daemon logged no error: $(cat "$T/daemon.log")" \
	bash -c "! grep -qi 'error\|fail' '$T/daemon.log'"

# passwd --masterkey says what it did: the config is recreated ...
expect $E_OK "config of $T/v recreated from the master key; the new password opens it" \
	"$SC_BIN" passwd --masterkey="$T/v.mk" --new-passfile="$T/pw" "$T/v"
check "passwd --masterkey over a lost config does not claim a changed password" \
	bash -c "! grep -q 'password changed' '$T/out'"
expect $E_OK "password, scrypt" "$SC_BIN" info "$T/v"
# ... or the password replaced, when the config is there
expect $E_OK "password changed for $T/v" \
	"$SC_BIN" passwd --masterkey="$T/v.mk" --new-passfile="$T/pw" "$T/v"
finish
