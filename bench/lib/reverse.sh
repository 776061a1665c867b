# SPDX-License-Identifier: GPL-2.0-or-later
# What bench/reverse_speed.sh and bench/experiments/reverse_cold_io.sh
# share: a scratch dir in /var/tmp removed on exit (mounts and the loop
# device with it), a file system on a loop image holding a copy of a tree
# with a reverse config for each system outside it, and the mounting of
# each system's view of it.  The caller sets BIN (the stackcrypt binary)
# and TREE, then calls rv_setup NAME.
# shellcheck shell=bash disable=SC2154  # BIN and TREE: the caller's

# rv_setup NAME: the scratch dir $W (/var/tmp/NAME.XXXXXX) and its password file.
rv_setup() {
	W=$(mktemp -d "/var/tmp/$1.XXXXXX")
	LOOP=
	trap rv_cleanup EXIT
	(umask 077; printf 'bench pass\n' >"$W/pw")
}

rv_cleanup() {
	local m
	for m in "$W"/m_*; do
		[ -d "$m" ] && mountpoint -q "$m" && fusermount3 -u "$m"
	done
	mountpoint -q "$W/fs" && umount "$W/fs"
	[ -z "$LOOP" ] || losetup -d "$LOOP"
	rm -rf "$W"
}

# rv_fs FS SIZE: a fresh FS (ext4 or xfs) on a loop image of SIZE at
# $W/fs, TREE copied to $W/fs/plain, configs $W/sc.conf and $W/gc.conf.
rv_fs() {
	truncate -s "$2" "$W/img"
	LOOP=$(losetup -f --show "$W/img")
	case $1 in
	ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP" ;;
	xfs) mkfs.xfs -q -f "$LOOP" ;;
	*) echo "file system $1: ext4 or xfs" >&2; exit 2 ;;
	esac
	mkdir -p "$W/fs"
	mount "$LOOP" "$W/fs"
	cp -a "$TREE" "$W/fs/plain"
	rm -f "$W/sc.conf" "$W/gc.conf"
	"$BIN" init --reverse --config="$W/sc.conf" --scrypt-n=1024 --passfile="$W/pw" "$W/fs/plain" \
		>"$W/init.log" 2>&1 || { cat "$W/init.log" >&2; exit 1; }
	gocryptfs -init -reverse -q -scryptn 10 -config "$W/gc.conf" -passfile "$W/pw" "$W/fs/plain"
}

# rv_fs_gone: unmounts $W/fs and frees its loop device and image.
rv_fs_gone() {
	umount "$W/fs"
	losetup -d "$LOOP"
	LOOP=
	rm -f "$W/img"
}

# rv_mount SYS: SYS's (stackcrypt, gocryptfs) view of $W/fs/plain at $W/m_SYS.
rv_mount() {
	local m="$W/m_$1"
	mkdir -p "$m"
	case $1 in
	stackcrypt) "$BIN" mount --reverse --config="$W/sc.conf" --passfile="$W/pw" "$W/fs/plain" "$m" >/dev/null ;;
	# (its daemon's complaints that this machine has no syslog left out)
	gocryptfs) gocryptfs -reverse -q -config "$W/gc.conf" -passfile "$W/pw" "$W/fs/plain" "$m" \
			2> >(grep -v 'syslog delivery error' >&2) ;;
	esac
}

rv_umount() { fusermount3 -u "$W/m_$1"; }

# rv_drop: the page cache and inodes dropped, dirty data written first.
rv_drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
