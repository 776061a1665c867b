# SPDX-License-Identifier: GPL-2.0-or-later
# What scripts/gluster.sh and scripts/ceph.sh share, sourced by both: the
# refusal of a host name that is not loopback, and the unmounting of their
# client mounts.  The caller defines prog (its name in messages), die, and
# WORK (its work directory, whose file `mounts` lists the mounts it made).
# shellcheck shell=bash disable=SC2154  # prog and WORK: the caller's

# Dies unless every address of host name $1 is in 127.0.0.0/8; $2 names
# the system and $3 the variable that sets the name, for the message.
check_loopback_host() {
	local host=$1 what=$2 var=$3 addrs a

	addrs=$(getent ahosts "$host" | awk '{ print $1 }' | sort -u)
	[ -n "$addrs" ] || die "host name '$host' does not resolve: refusing to run (it must resolve to 127.0.0.0/8)"
	for a in $addrs; do
		case $a in
		127.*) ;;
		*) die "host name '$host' resolves to $a, not 127.0.0.0/8: refusing to run ($what must use loopback only; set $var)" ;;
		esac
	done
}

is_mounted() { findmnt -rn --mountpoint "$1" >/dev/null 2>&1; }

# Unmounts $1 if it is a mount point: twice, then lazily (busy).
unmount_dir() {
	is_mounted "$1" || return 0
	umount "$1" 2>/dev/null && return 0
	sleep 0.5
	umount "$1" 2>/dev/null && return 0
	echo "$prog: umount $1 failed (busy?); detaching lazily" >&2
	umount -l "$1"
}

# The `umount DIR` command: unmounts DIR, one that WORK's `mount` made.
cmd_umount() {
	local dir=${1:-}

	[ $# -eq 1 ] || { echo "$prog: usage: umount DIR" >&2; exit 2; }
	dir=$(realpath "$dir") || die "umount: no such directory $1"
	grep -qxF "$dir" "$WORK/mounts" 2>/dev/null || die "umount: $dir was not mounted by this WORKDIR"
	unmount_dir "$dir"
	is_mounted "$dir" && die "umount: $dir is still mounted"
	grep -vxF "$dir" "$WORK/mounts" >"$WORK/mounts.tmp"
	mv "$WORK/mounts.tmp" "$WORK/mounts"
}
