#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t_ioerr.sh - backing block I/O errors under a mounted volume.
#
#   t_ioerr.sh CONFIG          (CONFIG: passthrough | null | aes-xts | aes-cbc)
#
# Builds a block device that fails on command, an ext4 on it, a volume in
# that ext4, mounts it, runs t_ioerr.py (which injects the faults and checks
# what the mount returns), unmounts, and checks that the daemon exited 0
# and logged no sanitizer or crash line.
#
# The failing device, in order of preference:
#   device-mapper  a loop device under `dmsetup create` with a linear table;
#                  t_ioerr.py reloads it with `error` / `flakey` segments.
#   faultdev       if the kernel has no device-mapper (/dev/mapper/control
#                  cannot be opened, as on the CI machine): a loop device on
#                  the "disk" file of faultdev.c, a FUSE-served image that
#                  fails reads and/or writes of a byte range on command.
#                  Both fail block I/O below ext4 with EIO; the choice is
#                  printed.  SC_REL_REQUIRE_DM=1 makes a missing
#                  device-mapper a failure instead.
# Not done through tests/mount/harness.sh on purpose: the harness keeps its
# state (daemon log, pid files) beside the backing directory, which here is
# the filesystem being broken.
#
# Environment: SC_BIN (stackcrypt), SC_FAULTDEV (the faultdev binary),
# SC_IMG_SIZE (default 128M), SC_MOUNT_OPTS (-o for the mount, default
# none), SC_REL_FULL, SC_REL_REQUIRE_DM.
# Exit: 0 pass, 1 fail.

set -u
say() { printf 't_ioerr: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }

CONFIG=${1:-}
case $CONFIG in passthrough | null | aes-xts | aes-cbc) ;; *) die "usage: t_ioerr.sh CONFIG" ;; esac
[ -x "${SC_BIN:-}" ] || die "SC_BIN is not set or not executable"
HERE=$(dirname "$(realpath "$0")")
IMG_SIZE=${SC_IMG_SIZE:-128M}
[ "${SC_REL_FULL:-0}" = 1 ] && IMG_SIZE=${SC_REL_FULL_IMG:-1G}
[ -c /dev/fuse ] || die "/dev/fuse is missing (required; not skipping)"

SCR=$(mktemp -d /tmp/sc-ioerr.XXXXXX) || die "mktemp"
LOOP='' DMNAME='' FDPID='' DPID='' FSMOUNTED=0
MNT=$SCR/mnt
status=1

cleanup() {
	local i
	trap - EXIT INT TERM
	if grep -qs " $MNT fuse" /proc/mounts; then
		fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"
	fi
	if [ -n "$DPID" ]; then
		for ((i = 0; i < 500; i++)); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.02; done
		kill -9 "$DPID" 2>/dev/null
	fi
	((FSMOUNTED)) && { umount "$SCR/fs" 2>/dev/null || umount -l "$SCR/fs"; }
	[ -n "$DMNAME" ] && { dmsetup remove "$DMNAME" 2>/dev/null || dmsetup remove --force "$DMNAME"; }
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	if [ -n "$FDPID" ]; then
		fusermount3 -u "$SCR/fdm" 2>/dev/null || fusermount3 -uz "$SCR/fdm"
		for ((i = 0; i < 250; i++)); do kill -0 "$FDPID" 2>/dev/null || break; sleep 0.02; done
		kill -9 "$FDPID" 2>/dev/null
	fi
	rm -rf "$SCR"
	exit "$status"
}
trap cleanup EXIT
trap 'say interrupted; exit 1' INT TERM
# For a run SIGKILLed before cleanup is done (meson's follow-up to its
# SIGTERM; tests/lib/guard.sh): the same teardown, its objects found by
# looking, since the guard knows no variable set after this line.
# shellcheck source=../lib/guard.sh
. "$HERE/../lib/guard.sh"
# shellcheck disable=SC2317  # run by the guard
leftovers() {
	[ -d "$SCR" ] || return 0
	say "cleaning up after a run that was killed ($SCR)"
	sc_unmount_below "$MNT"
	sc_unmount_below "$SCR/fs"
	if dmsetup info "sc-ioerr-$$" >/dev/null 2>&1; then
		dmsetup remove "sc-ioerr-$$" 2>/dev/null || dmsetup remove --force "sc-ioerr-$$"
	fi
	sc_detach_loops_below "$SCR"
	sc_unmount_below "$SCR"
	rm -rf "$SCR"
}
sc_guard leftovers

# Waits until $1 is a mount point (fuse) or the process $2 is gone.  No
# deadline: one of the two happens however loaded the machine is (a
# process that neither mounts nor exits is a hang: meson's timeout).
wait_mount() {
	while :; do
		grep -qs " $1 fuse" /proc/mounts && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.02
	done
}

truncate -s "$IMG_SIZE" "$SCR/img" || die "cannot make the image"
export FAULT_KIND FAULT_CTL='' FAULT_DM='' FAULT_LOOP=''
if dmsetup version >/dev/null 2>&1 && [ -e /dev/mapper/control ]; then
	FAULT_KIND=dm
	LOOP=$(losetup -f --show "$SCR/img") || die "losetup failed"
	DMNAME=sc-ioerr-$$
	sectors=$(blockdev --getsz "$LOOP")
	dmsetup create "$DMNAME" --table "0 $sectors linear $LOOP 0" || die "dmsetup create failed"
	DEV=/dev/mapper/$DMNAME
	FAULT_DM=$DMNAME
	FAULT_LOOP=$LOOP
	say "device-mapper: $DEV (linear over $LOOP)"
else
	[ "${SC_REL_REQUIRE_DM:-0}" = 1 ] &&
		die "device-mapper is unavailable (dmsetup version: $(dmsetup version 2>&1 | tail -1)) and SC_REL_REQUIRE_DM=1"
	[ -x "${SC_FAULTDEV:-}" ] || die "no device-mapper and SC_FAULTDEV is not set: cannot inject I/O errors"
	FAULT_KIND=faultdev
	mkdir "$SCR/fdm"
	"$SC_FAULTDEV" "$SCR/img" "$SCR/fdm" 2>"$SCR/faultdev.log" &
	FDPID=$!
	wait_mount "$SCR/fdm" "$FDPID" || { cat "$SCR/faultdev.log" >&2; die "faultdev did not mount"; }
	LOOP=$(losetup -f --show "$SCR/fdm/disk") || die "losetup on the faultdev disk failed"
	DEV=$LOOP
	FAULT_CTL=$SCR/fdm/ctl
	say "NOTE: no device-mapper in this kernel; I/O errors come from faultdev under $LOOP"
fi
mkfs.ext4 -q -F -b 4096 -E nodiscard "$DEV" >"$SCR/mkfs.log" 2>&1 || { cat "$SCR/mkfs.log" >&2; die "mkfs.ext4"; }
mkdir "$SCR/fs"
# errors=continue: an I/O error must not panic or remount the test box.
mount -o errors=continue "$DEV" "$SCR/fs" || die "mount $DEV"
FSMOUNTED=1
BACKING=$SCR/fs/backing
mkdir -m 755 "$BACKING" "$MNT"

KEYFILE=
args=(mount -f)
# SC_TEST_IO_URING=1 (tests/mount/harness.sh): over FUSE over io_uring too.
[ "${SC_TEST_IO_URING:-}" = 1 ] && args+=(-o io_uring)
if [ "$CONFIG" = passthrough ]; then
	args+=(--stack=passthrough)
else
	KEYFILE=$SCR/key
	head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$KEYFILE"
	chmod 600 "$KEYFILE"
	# shellcheck disable=SC2086  # SC_INIT_OPTS: more init options (--header-version=1)
	# names in the clear unless the run asks for them (init's default encrypts them)
	case " ${SC_INIT_OPTS:-} " in *" --encrypt-names "*) ;; *) SC_INIT_OPTS="${SC_INIT_OPTS:-} --plaintext-names" ;; esac
	"$SC_BIN" init --cipher="$CONFIG" ${SC_INIT_OPTS:-} --keyfile="$KEYFILE" "$BACKING" \
		>/dev/null 2>"$SCR/init.log" ||
		{ cat "$SCR/init.log" >&2; die "stackcrypt init"; }
	args+=(--keyfile="$KEYFILE")
fi
[ -n "${SC_MOUNT_OPTS:-}" ] && args+=(-o "$SC_MOUNT_OPTS")
DAEMON_LOG=$SCR/daemon.log
"$SC_BIN" "${args[@]}" "$BACKING" "$MNT" </dev/null >"$DAEMON_LOG" 2>&1 &
DPID=$!
wait_mount "$MNT" "$DPID" || { cat "$DAEMON_LOG" >&2; die "the daemon did not mount"; }
say "$CONFIG over ext4 on $DEV ($FAULT_KIND): MNT=$MNT daemon pid $DPID"

export MNT BACKING CONFIG KEYFILE SC_BIN DAEMON_LOG
export FAULT_BLKDEV=$DEV
export DAEMON_PID=$DPID
timeout -s KILL 600 python3 "$HERE/t_ioerr.py"
rc=$?

# A clean unmount even after the faults: the daemon must exit 0.  It is
# our child: wait for it, with no deadline (a loaded machine, LeakSanitizer
# at exit, only make it later; a daemon that never exits is a hang).
if fusermount3 -u "$MNT"; then
	wait "$DPID"
	drc=$?
	DPID=
	[ "$drc" = 0 ] || { say "FAIL: the daemon exited with status $drc"; rc=1; }
else
	say "fusermount3 -u failed"
	rc=1
fi
if grep -Eq 'Sanitizer|runtime error|Segmentation|Aborted' "$DAEMON_LOG"; then
	say "FAIL: sanitizer or crash lines in the daemon log"
	rc=1
fi
if [ "${SC_TEST_IO_URING:-}" = 1 ] && grep -q 'serving over /dev/fuse' "$DAEMON_LOG"; then
	say "FAIL: SC_TEST_IO_URING=1, but the daemon fell back to /dev/fuse"
	rc=1
fi
say "daemon log: $(wc -l <"$DAEMON_LOG") lines, $(grep -c -i 'error' "$DAEMON_LOG") mentioning errors"
if [ "$rc" != 0 ]; then
	say "---- daemon log, last 60 lines ----"
	tail -n 60 "$DAEMON_LOG" >&2
fi
[ -n "$FAULT_CTL" ] && say "faultdev: $(cat "$FAULT_CTL" 2>/dev/null)"
status=$rc
