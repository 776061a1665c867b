# SPDX-License-Identifier: GPL-2.0-or-later
# faultdev.sh - an ext4 whose disk loses power: tests/reliability/faultdev
# (a FUSE-served disk image) in "hold" mode under a loop device, where
# what was written since the device's last flush is lost at a `powercut`.
# For the tests that cut the power at each step of a command
# (tests/reliability/t_rekey_power.sh, tests/cli/t_powerloss.sh's disk
# model).  Source it after tests/cli/lib.sh; it needs $T, root and
# /dev/fuse, and SC_FAULTDEV (the faultdev binary).  It sets the EXIT trap
# and the guard of a killed run.
#
#   fd_mkfs IMG             a pristine 64 MiB ext4 image
#   fd_serve IMG [raw]      faultdev on IMG, its ext4 mounted on $T/fs
#   fd_cut                  the power fails; everything torn down
#   fd_attach IMG           the image after the cut, its journal replayed
#   fd_teardown             the volume's mount, ext4, loop, faultdev
#   fd_field NAME           a counter of the last cut ($T/ctl.cut)

FD=${SC_FAULTDEV:-}
[ -x "$FD" ] || { echo "FAIL: SC_FAULTDEV is not set or not executable" >&2; exit 1; }
[ -c /dev/fuse ] || { echo "FAIL: /dev/fuse is missing (required; not skipping)" >&2; exit 1; }
FDPID='' LOOP=''
mkdir -p "$T/fs" "$T/fdm" "$T/m"

# The volume's mount, the ext4, the loop device, faultdev (by its PID),
# in that order.
fd_teardown() {
	local i
	sc_unmount_below "$T/m" fuse
	mountpoint -q "$T/fs" && { umount "$T/fs" 2>/dev/null || umount -l "$T/fs"; }
	sc_detach_loops_below "$T"
	LOOP=
	if [ -n "$FDPID" ]; then
		fusermount3 -u "$T/fdm" 2>/dev/null || fusermount3 -uz "$T/fdm" 2>/dev/null
		for ((i = 0; i < 500; i++)); do kill -0 "$FDPID" 2>/dev/null || break; sleep 0.02; done
		kill -9 "$FDPID" 2>/dev/null
		wait "$FDPID" 2>/dev/null
		FDPID=
	fi
}
fd_cleanup() { fd_teardown; cleanup; }
trap fd_cleanup EXIT
# shellcheck disable=SC2317  # run by the guard, for a run SIGKILLed before its trap
fd_leftovers() {
	[ -d "$T" ] || return 0
	sc_unmount_below "$T/m"
	sc_unmount_below "$T/fs"
	sc_detach_loops_below "$T"
	sc_unmount_below "$T"
}
sc_guard fd_leftovers

# No lazy init: ext4lazyinit's background writes would land at moments of
# their own, not the test's.
fd_mkfs() {
	truncate -s 64M "$1"
	mkfs.ext4 -q -F -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$1" \
		>"$T/mkfs.log" 2>&1 || { fail "mkfs.ext4: $(cat "$T/mkfs.log")"; return 1; }
}

# fd_serve IMAGE [raw]: faultdev on IMAGE in hold mode, its disk on a loop
# device, the ext4 mounted on $T/fs (not with raw) with commit=3600: the
# only flushes are those the test's own fsyncs and syncs cause, not a
# 5-second timer.
fd_serve() {
	"$FD" "$1" "$T/fdm" 2>"$T/faultdev.log" &
	FDPID=$!
	while ! is_mounted "$T/fdm"; do
		kill -0 "$FDPID" 2>/dev/null || { fail "faultdev did not mount: $(cat "$T/faultdev.log")"; return 1; }
		sleep 0.05
	done
	echo hold >"$T/fdm/ctl" || { fail "faultdev refused hold"; return 1; }
	LOOP=$(losetup -f --show "$T/fdm/disk") || { fail "losetup of faultdev's disk"; return 1; }
	[ "${2:-}" = raw ] && return 0
	mount -o errors=continue,commit=3600 "$LOOP" "$T/fs" || { fail "mount of $LOOP"; return 1; }
}

# fd_cut: the power fails; everything is torn down.  faultdev's counters
# after the unmount land in $T/ctl.cut: cut_sectors, the writes the device
# held and lost; eio_dead, the requests failed after the cut (the page
# cache's dirty pages, written back at the unmount, among them).
fd_cut() {
	echo powercut >"$T/fdm/ctl" || fail "faultdev refused powercut"
	# errors expected: every request fails now
	if mountpoint -q "$T/fs"; then umount "$T/fs" 2>/dev/null || umount -l "$T/fs"; fi
	cat "$T/fdm/ctl" >"$T/ctl.cut"
	fd_teardown
}

# fd_attach IMAGE: the image itself (no faultdev) on a loop device, its
# ext4 mounted on $T/fs (replaying its journal).
fd_attach() {
	LOOP=$(losetup -f --show "$1") || { fail "losetup of $1"; return 1; }
	mount -o errors=remount-ro "$LOOP" "$T/fs" || { fail "mount of $1 after the cut"; return 1; }
}

# fd_field NAME: a counter of $T/ctl.cut.
fd_field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$T/ctl.cut"; }
