#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fstab line of docs/stackcrypt.1 and docs/usage.md:
#   /srv/enc /mnt/plain fuse.stackcrypt nosuid,nodev,keyfile=/root/key 0 0
# mount(8) runs mount.fuse3, which runs
#   stackcrypt BACKING MOUNTPOINT -o rw,nosuid,nodev,keyfile=/root/key
# (with "defaults" in place of nosuid,nodev: -o rw,keyfile=/root/key,dev,suid;
# checked with a stand-in binary).  mount(8) searches a fixed PATH, so we
# call mount.fuse3 the same way with our binary first in PATH.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }
FUSEHELPER=$(command -v mount.fuse3 || echo /sbin/mount.fuse3)
[ -x "$FUSEHELPER" ] || { fail "mount.fuse3 missing (package fuse3: scripts/deps.sh installs it)"; finish; }

# umount_gone MNT: unmounts a mount that mount.fuse3 made (its daemon
# detached: $! does not know it) and waits for that daemon to exit.  Until
# it has, it holds the volume's lock, and the next mount of the volume is
# refused for that (exit 10) instead of for what the check looks for: seen
# once under load.
umount_gone() {
	local pids
	pids=$(daemon_pids "$T")
	fusermount3 -u "$1" || fail "fusermount3 -u $1"
	# shellcheck disable=SC2086  # a list of pids
	[ -z "$pids" ] || sc_wait_gone $pids
}

new_keyfile "$T/key"
mkdir "$T/vk" "$T/mk2"
"$SC_BIN" init --keyfile="$T/key" $(init_opts) $(kind_opts) "$T/vk" >/dev/null 2>&1 || fail "init keyfile volume"
mkdir -p "$T/bin"
ln -s "$SC_BIN" "$T/bin/stackcrypt"
expect $E_OK "" env PATH="$T/bin:$PATH" "$FUSEHELPER" "$T/vk" "$T/mk2" \
	-t fuse.stackcrypt -o rw,nosuid,nodev,keyfile="$T/key"
check "fstab-style mount is up" is_mounted "$T/mk2"
check "fstab-style mount is nosuid,nodev" \
	awk -v m="$T/mk2" '$5 == m && $6 ~ /(^|,)nosuid(,|$)/ && $6 ~ /(^|,)nodev(,|$)/ {f=1} END {exit !f}' \
	/proc/self/mountinfo
if is_mounted "$T/mk2"; then
	echo fstab >"$T/mk2/f" || fail "write through the fstab-style mount"
	umount_gone "$T/mk2"
	expect $E_OK "0 problems" "$SC_BIN" fsck --keyfile="$T/key" "$T/vk"
fi

# the older fstab form: "stackcrypt#/srv/enc /mnt/plain fuse defaults,keyfile=..."
expect $E_OK "" env PATH="$T/bin:$PATH" "$FUSEHELPER" "stackcrypt#$T/vk" "$T/mk2" \
	-o rw,keyfile="$T/key"
check "stackcrypt#BACKING form is up" is_mounted "$T/mk2"
if is_mounted "$T/mk2"; then
	check "file written by the first mount reads back" grep -qx fstab "$T/mk2/f"
	umount_gone "$T/mk2"
fi
# without keyfile= (as at boot, with no terminal) the mount fails clearly
expect $E_SECRET "unlocked with a key file" setsid -w env PATH="$T/bin:$PATH" "$FUSEHELPER" "$T/vk" "$T/mk2" \
	-t fuse.stackcrypt -o rw
# ... and its hint is in fstab words: -o keyfile=, not --keyfile=
check "the hint under mount(8) names -o keyfile=" grep -qF -- "-o keyfile=FILE" "$T/out"
check "the hint under mount(8) has no --keyfile=" bash -c "! grep -qF -- '--keyfile=' '$T/out'"
# a password volume at boot (no terminal): -o passfile= or -o keyfile=
new_volume "$T/vp" || finish
expect $E_SECRET "-o passfile=FILE" setsid -w env PATH="$T/bin:$PATH" "$FUSEHELPER" "$T/vp" "$T/mk2" \
	-t fuse.stackcrypt -o rw
check "no option mount(8) cannot pass in the hint" bash -c "! grep -qE -- '--(passfile|keyfile|extpass)' '$T/out'"
check "nothing mounted without a secret" bash -c "! awk -v m='$T/mk2' '\$5 == m {f=1} END {exit !f}' /proc/self/mountinfo"

finish
