# SPDX-License-Identifier: GPL-2.0-or-later
#
# guard.sh - sourced by the test shells that mount or attach loop devices
# (tests/mount/harness.sh, tests/cli/lib.sh, tests/reliability/t_ioerr.sh),
# so that what they set up goes away even when they are killed outright
# (and for its two helpers, sc_wait_gone and daemon_pids, by
# tests/gluster/gfapi_cli_test.sh):
#
#   . "$(dirname "$0")/../lib/guard.sh"
#   sc_guard FN [ARGS...]     # once the paths FN cleans are known
#
# Why: meson stops a test (a timeout, or meson itself getting SIGTERM or
# Ctrl-C) with SIGTERM to the test's process group and, 0.5 s later,
# SIGKILL to the same group (mesonbuild/mtest.py, _kill).  A harness whose
# TERM handling is still unmounting then dies half way: the bigdir tests,
# whose 100 000-entry file systems take seconds to unmount, left their
# loop filesystems mounted and their loop devices attached.  No trap runs
# on SIGKILL, so the cleanup must live in another process: sc_guard starts
# one in a process group of its own, out of the signals' reach, which
# waits for this shell's exit (a pidfd: an event, not a poll) and then
# runs FN, however the shell ended.  After a normal exit FN finds nothing
# left and returns; FN must therefore find what to clean by looking
# (mounts under a directory, loop devices of an image, pid files), not by
# variables the shell set after sc_guard.
#
# The guard holds the shell's stdout and stderr until it is done, so meson
# and a test reading a pipe to its end also wait for the guard's cleanup.

# sc_guard FN [ARGS...]: runs FN ARGS in the background once this shell has
# exited (by exit, signal or SIGKILL).
sc_guard() {
	local me=$$ had_m=0

	case $- in *m*) had_m=1 ;; esac
	set -m		# the guard's own process group: meson's killpg misses it
	(
		trap '' INT TERM HUP PIPE
		sc_wait_gone "$me"
		"$@"
	) </dev/null &
	((had_m)) || set +m
}

# sc_wait_gone PID...: returns once every PID has exited (children or not;
# pidfds: an event, no poll and no deadline).
sc_wait_gone() {
	python3 -c '
import os, select, sys
for pid in sys.argv[1:]:
    try:
        fd = os.pidfd_open(int(pid))
    except ProcessLookupError:
        continue
    select.select([fd], [], [])	# readable once the process has exited
    os.close(fd)
' "$@" </dev/null
}

# sc_mounts_below DIR: the mount points at or below DIR, deepest first.
sc_mounts_below() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo | sort -r
}

# sc_unmount_below DIR [fuse]: unmounts what is mounted at or below DIR,
# deepest first (only FUSE mounts with "fuse"); lazily when busy.
sc_unmount_below() {
	local m type

	for m in $(sc_mounts_below "$1"); do
		type=$(awk -v m="$m" '$5 == m {
			for (i = 7; i <= NF; i++) if ($i == "-") { print $(i + 1); exit } }' /proc/self/mountinfo)
		case $type in
		fuse*) fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" ;;
		*) [ "${2:-}" = fuse ] || umount "$m" 2>/dev/null || umount -l "$m" ;;
		esac
	done
}

# sc_detach_loops_below DIR: detaches the loop devices whose backing file
# lies below DIR.
sc_detach_loops_below() {
	local dev

	for dev in $(losetup -l -n -O NAME,BACK-FILE 2>/dev/null |
		awk -v d="$1/" 'index($2, d) == 1 {print $1}'); do
		losetup -d "$dev"
	done
}

# daemon_pids DIR: PIDs of our binary ($SC_BIN) with an argument that is
# DIR or lies below it (daemons detach, so $! does not know them).  The
# executable is compared by test's -ef (same file), not by a readlink per
# process: a fork and an exec for each of some 160 processes cost 2.8 s of
# CPU per call.
daemon_pids() {
	local p arg bin
	bin=$(realpath "$SC_BIN")
	for p in /proc/[0-9]*; do
		[ "$p/exe" -ef "$bin" ] || continue
		while IFS= read -r -d '' arg; do
			case "$arg" in "$1" | "$1"/*) echo "${p#/proc/}"; break ;; esac
		done <"$p/cmdline" 2>/dev/null
	done
}
