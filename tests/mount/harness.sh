#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# harness.sh - run one command against a fresh stackcrypt mount, always clean up.
#
#   harness.sh [--keep-going] CONFIG FSTYPE -- COMMAND [ARGS...]
#
#   CONFIG   passthrough | null | aes-xts | aes-cbc | aes-gcm
#   FSTYPE   ext4 | xfs   a fresh sparse image, mkfs'd and loop-mounted
#            tmp          a plain temp directory
#   --keep-going  daemon problems (non-zero exit, crash, error lines in its
#            log) are printed but do not fail the run; COMMAND's status alone
#            decides.  For tests that provoke daemon errors on purpose
#            (tampered headers, kill -9).
#
# Environment in:
#   SC_BIN         the stackcrypt binary (required)
#   SC_BLOCK_SIZE  data unit for `init --block-size` (default 4096)
#   SC_INIT_OPTS   more `init` options, split on blanks (e.g. --header-version=1)
#   SC_IMG_SIZE    loop image size (default 2G; sparse)
#   SC_MOUNT_OPTS  -o options for the mount (default allow_other: the battery
#                  runs a subtest as uid 65534; empty for none)
#   SC_MOUNT_TIMEOUT  seconds to wait for the mount and for the daemon to
#                  exit after unmount (default 60: it bounds a hang, and
#                  must not fail a slow start or exit on a loaded machine)
#   SC_KEEP=1      keep the scratch directory (after unmounting) for a look
#   SC_TEST_IO_URING=1  every mount of the run over FUSE over io_uring: adds
#                  -o io_uring, and fails the run if a daemon fell back to
#                  /dev/fuse (its notice).  Set by scripts/test.sh's second
#                  pass, which holds enable_uring at Y; a test that must stay
#                  on /dev/fuse unsets it (saying why)
#   TMPDIR         where the scratch directory goes (default /tmp)
#   SC_HARNESS_STATE_DIR  where the state directory (daemon log, key) goes
#                  instead of the scratch directory
#   SC_HARNESS_MNT_DIR  where MNT goes instead of the scratch directory: a
#                  local directory when the scratch lies on a FUSE file
#                  system (a GlusterFS client), whose failed lookups make the
#                  kernel drop the mounts below them (docs/usage.md)
#   SC_BACKING_URL, SC_BACKING_URL_DIR  init and mount take BACKING by URL:
#                  BACKING lies under SC_BACKING_URL_DIR (a GlusterFS FUSE
#                  mount, tests/gluster/harness.sh --gfapi) and is named
#                  SC_BACKING_URL + the rest of its path (gluster://...)
#
# What it does: fails (exit 1) if /dev/fuse is missing or cannot be opened --
# never skips.  Makes a private scratch dir; for ext4/xfs a sparse image on a
# loop device (`losetup -f --show`, so parallel runs do not collide) mounted
# there; if no loop device can be had it says so on stderr and uses a plain
# directory.  Inside that filesystem it makes BACKING, REF (a plain directory
# to compare against) and MNT.  For the crypt configs it writes a random key
# file and runs `$SC_BIN init --cipher=CONFIG --block-size=... --keyfile=KEY
# BACKING`.  It starts `$SC_BIN mount [--stack=passthrough] -f [-o OPTS]
# [--keyfile=KEY] BACKING MNT` in the background and waits until MNT is a fuse
# mount in /proc/self/mountinfo (failing if the daemon dies first).  Then it
# runs COMMAND with these exported:
#
#   MNT BACKING REF      the three directories
#   SRC                  what init and mount were given: BACKING, or its URL
#   CONFIG FSTYPE        as given (FSTYPE=tmp if the loop fallback was taken)
#   KEYFILE              the key file ("" for passthrough)
#   SC_BIN SC_BLOCK_SIZE as given / defaulted
#   DAEMON_PID           the daemon's pid (stale after a remount: read
#                        $SC_HARNESS_STATE/daemon.pid instead)
#   DAEMON_LOG           the daemon's stderr (all daemons, appended)
#   SC_HARNESS_STATE     the harness's private state directory
#   SC_REMOUNT           a command that remounts the same volume:
#                          "$SC_REMOUNT"         clean unmount, wait for the
#                                                daemon to exit 0, mount again
#                          "$SC_REMOUNT" --kill  kill -9 the daemon, detach the
#                                                dead mount, mount again
#                        It exits 0 once the new mount is up, 1 otherwise; the
#                        new daemon's pid is in $SC_HARNESS_STATE/daemon.pid.
#
# COMMAND runs in a session of its own (setsid).  Afterwards -- and on any
# exit, INT or TERM, and when the harness's parent (meson) dies, which the
# kernel tells it with SIGTERM (tests/lib/with_parent.sh) -- the harness
# stops what is left of COMMAND's process group, unmounts (fusermount3 -u,
# then -uz), waits for the daemon to exit (then kill -9 by pid), unmounts
# the loop filesystem, detaches the loop device and removes the scratch dir.
# Should the harness be SIGKILLed before it is done (meson's follow-up to
# its SIGTERM), a guard process does the same (tests/lib/guard.sh).
#
# Exit status: 0 pass; 1 if COMMAND failed, the daemon exited non-zero or
# crashed, or the daemon's log has an error line (error, AddressSanitizer,
# LeakSanitizer, "runtime error") -- the log is printed then; 77 (skip) only
# if COMMAND itself exited 77 and nothing else failed.

set -u
umask 022

say() { printf 'harness: %s\n' "$*" >&2; }
die() { say "$*"; status=1; exit 1; }

# ---------------------------------------------------------------------------
# Helpers shared by the main run and --remount

# True if $1 is a fuse mount point (type fuse or fuse.*).
is_fuse_mounted() {
	awk -v m="$1" '$5 == m {
		for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) ~ /^fuse/) f = 1; break }
	} END { exit !f }' /proc/self/mountinfo
}

# Starts the daemon in the background under a small wrapper that records its
# pid (daemon.pid) and, when it ends, its exit status (daemon.rc; 128+N when
# killed by signal N).  Both files appear atomically (mv), never half-written.
start_daemon() {
	local args=(mount -f)

	if [ "$CONFIG" = passthrough ]; then
		args+=(--stack=passthrough)
	else
		args+=(--keyfile="$KEYFILE")
	fi
	[ -n "$SC_MOUNT_OPTS" ] && args+=(-o "$SC_MOUNT_OPTS")
	[ "${SC_TEST_IO_URING:-}" = 1 ] && args+=(-o io_uring)
	args+=("$SRC" "$MNT")
	rm -f "$SC_HARNESS_STATE/daemon.pid" "$SC_HARNESS_STATE/daemon.rc"
	# A process group of its own (set -m): when --remount runs inside
	# COMMAND's group, stopping COMMAND's leftovers must not hit the daemon.
	set -m
	(
		"$SC_BIN" "${args[@]}" </dev/null >>"$DAEMON_LOG" 2>&1 &
		echo $! >"$SC_HARNESS_STATE/daemon.pid.tmp"
		mv "$SC_HARNESS_STATE/daemon.pid.tmp" "$SC_HARNESS_STATE/daemon.pid"
		wait $!
		echo $? >"$SC_HARNESS_STATE/daemon.rc.tmp"
		mv "$SC_HARNESS_STATE/daemon.rc.tmp" "$SC_HARNESS_STATE/daemon.rc"
	) </dev/null >/dev/null 2>&1 &
	set +m
	while [ ! -s "$SC_HARNESS_STATE/daemon.pid" ]; do sleep 0.01; done
	DAEMON_PID=$(cat "$SC_HARNESS_STATE/daemon.pid")
}

# Waits until MNT is mounted.  Returns 1 if the daemon exits first or time
# runs out.
wait_mounted() {
	local i

	for ((i = 0; i < SC_MOUNT_TIMEOUT * 50; i++)); do
		is_fuse_mounted "$MNT" && return 0
		if [ -e "$SC_HARNESS_STATE/daemon.rc" ]; then
			say "daemon exited with status $(cat "$SC_HARNESS_STATE/daemon.rc") before the mount appeared"
			return 1
		fi
		sleep 0.02
	done
	say "no fuse mount at $MNT after ${SC_MOUNT_TIMEOUT}s"
	return 1
}

# Unmounts MNT if it is a fuse mount: fusermount3 -u, else lazily.
unmount_fuse() {
	is_fuse_mounted "$MNT" || return 0
	fusermount3 -u "$MNT" 2>/dev/null && return 0
	sleep 0.2
	fusermount3 -u "$MNT" 2>/dev/null && return 0
	say "fusermount3 -u $MNT failed (busy?); detaching lazily"
	fusermount3 -uz "$MNT" 2>/dev/null || umount -l "$MNT"
}

# Waits for the daemon to exit (kill -9 by pid after SC_MOUNT_TIMEOUT
# seconds).  Prints its exit status; returns 1 if it had to be killed.
wait_daemon() {
	local pid i

	pid=$(cat "$SC_HARNESS_STATE/daemon.pid" 2>/dev/null) || { echo 0; return 0; }
	for ((i = 0; i < SC_MOUNT_TIMEOUT * 50; i++)); do
		if [ -e "$SC_HARNESS_STATE/daemon.rc" ]; then
			cat "$SC_HARNESS_STATE/daemon.rc"
			return 0
		fi
		sleep 0.02
	done
	say "daemon $pid still running ${SC_MOUNT_TIMEOUT}s after unmount: kill -9"
	kill -9 "$pid" 2>/dev/null
	for ((i = 0; i < 250; i++)); do
		[ -e "$SC_HARNESS_STATE/daemon.rc" ] && break
		sleep 0.02
	done
	cat "$SC_HARNESS_STATE/daemon.rc" 2>/dev/null || echo 137
	return 1
}

# Records a failure found outside the main shell (by --remount).
record_failure() {
	say "$*"
	echo "$*" >>"$SC_HARNESS_STATE/failures"
}

# ---------------------------------------------------------------------------
# harness.sh --remount [--kill]: called by COMMAND through $SC_REMOUNT.

if [ "${1:-}" = --remount ]; then
	if [ -z "${SC_HARNESS_STATE:-}" ] || [ ! -d "$SC_HARNESS_STATE" ]; then
		die "--remount: run me as \$SC_REMOUNT from a harness.sh COMMAND"
	fi
	# The run's own settings, not whatever COMMAND's environment says.
	# shellcheck source=/dev/null
	. "$SC_HARNESS_STATE/env"
	kill_first=0
	[ "${2:-}" = --kill ] && kill_first=1
	if ((kill_first)); then
		pid=$(cat "$SC_HARNESS_STATE/daemon.pid")
		echo "---- harness: kill -9 $pid, remount ----" >>"$DAEMON_LOG"
		kill -9 "$pid"
		wait_daemon >/dev/null
		unmount_fuse
	else
		echo "---- harness: unmount, remount ----" >>"$DAEMON_LOG"
		unmount_fuse
		rc=$(wait_daemon)
		if [ "$rc" != 0 ]; then
			record_failure "daemon exited with status $rc on unmount (remount)"
			exit 1
		fi
	fi
	if is_fuse_mounted "$MNT"; then
		record_failure "remount: $MNT is still mounted"
		exit 1
	fi
	start_daemon
	wait_mounted || { record_failure "remount: the daemon did not mount again"; exit 1; }
	say "remounted, daemon pid $DAEMON_PID"
	exit 0
fi

# ---------------------------------------------------------------------------
# The main run

# shellcheck source=../lib/with_parent.sh
. "$(dirname "$(realpath "$0")")/../lib/with_parent.sh"
sc_die_with_parent "$@"
# shellcheck source=../lib/guard.sh
. "$(dirname "$(realpath "$0")")/../lib/guard.sh"

keep_going=0
if [ "${1:-}" = --keep-going ]; then
	keep_going=1
	shift
fi
if [ $# -lt 4 ] || [ "$3" != -- ]; then
	die "usage: harness.sh [--keep-going] CONFIG FSTYPE -- COMMAND [ARGS...]"
fi
CONFIG=$1
FSTYPE=$2
shift 3
case $CONFIG in passthrough | null | aes-xts | aes-cbc | aes-gcm) ;; *) die "unknown CONFIG '$CONFIG'" ;; esac
case $FSTYPE in ext4 | xfs | tmp) ;; *) die "unknown FSTYPE '$FSTYPE'" ;; esac

[ -n "${SC_BIN:-}" ] || die "SC_BIN (the stackcrypt binary) is not set"
[ -x "$SC_BIN" ] || die "SC_BIN=$SC_BIN is not executable"
SC_BLOCK_SIZE=${SC_BLOCK_SIZE:-4096}
SC_IMG_SIZE=${SC_IMG_SIZE:-2G}
SC_MOUNT_OPTS=${SC_MOUNT_OPTS-allow_other}
SC_MOUNT_TIMEOUT=${SC_MOUNT_TIMEOUT:-60}

# A missing FUSE is a failure, not a skip.
[ -c /dev/fuse ] || die "FAIL: /dev/fuse is missing (FUSE is required; not skipping)"
( exec 9<>/dev/fuse ) 2>/dev/null ||
	die "FAIL: /dev/fuse cannot be opened (FUSE is required; not skipping)"
command -v fusermount3 >/dev/null || die "FAIL: fusermount3 not found (package fuse3)"

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/sc-mount.XXXXXX") || die "mktemp failed"
SCRATCH=$(realpath "$SCRATCH")
chmod 755 "$SCRATCH"		# REF and MNT are used as uid 65534 too
SC_HARNESS_STATE=$SCRATCH/state
mkdir -m 700 "$SC_HARNESS_STATE"
if [ -n "${SC_HARNESS_STATE_DIR:-}" ]; then
	# elsewhere than TMPDIR (a GlusterFS mount whose brick a test restarts)
	rmdir "$SC_HARNESS_STATE"
	SC_HARNESS_STATE=$(mktemp -d "$SC_HARNESS_STATE_DIR/sc-state.XXXXXX") || die "mktemp failed"
fi
DAEMON_LOG=$SC_HARNESS_STATE/daemon.log
: >"$DAEMON_LOG"
# An integrity volume's freshness record (docs/format.md 11.9) goes with the
# run's other state, not into the user's ~/.local/state.
export XDG_STATE_HOME=$SC_HARNESS_STATE
LOOPDEV=
FS_MOUNTED=0
DAEMON_PID=
CLEANED=0
MNT=$SCRATCH/fs/mnt		# set early: cleanup looks at it
if [ -n "${SC_HARNESS_MNT_DIR:-}" ]; then
	MNT=$(mktemp -d "$SC_HARNESS_MNT_DIR/sc-mnt.XXXXXX") || die "mktemp failed"
	chmod 755 "$MNT"		# used as uid 65534 too
fi
status=0

# Stops everything this run started; decides the final status.
finish() {
	local rc log_bad=0

	[ "$CLEANED" = 1 ] && return
	CLEANED=1
	# A dead reader (meson killed) must not end the cleanup at our first
	# word: EPIPE instead of SIGPIPE from here on.
	trap '' PIPE
	cd / || :
	if [ -n "$DAEMON_PID" ] || [ -e "$SC_HARNESS_STATE/daemon.pid" ]; then
		unmount_fuse
		rc=$(wait_daemon) || :
		if [ "$rc" != 0 ]; then
			if ((rc > 128)); then
				say "daemon died of signal $((rc - 128)) (exit status $rc)"
			else
				say "daemon exited with status $rc"
			fi
			((keep_going)) || status=1
		fi
	fi
	if [ -s "$SC_HARNESS_STATE/failures" ]; then
		((keep_going)) || status=1
	fi
	if [ "${SC_TEST_IO_URING:-}" = 1 ] && grep -q 'serving over /dev/fuse' "$DAEMON_LOG"; then
		say "SC_TEST_IO_URING=1, but the daemon fell back to /dev/fuse"
		log_bad=1
		((keep_going)) || status=1
	fi
	if grep -Eiq 'error|AddressSanitizer|LeakSanitizer|runtime error|\<asan\>' "$DAEMON_LOG"; then
		say "the daemon's log has error lines"
		log_bad=1
		((keep_going)) || status=1
	fi
	if ((status)) || ((log_bad)); then
		say "---- daemon log ($DAEMON_LOG), last 200 lines ----"
		tail -n 200 "$DAEMON_LOG" | sed 's/^/daemon: /' >&2
		say "---- end of daemon log ----"
	fi
	if is_fuse_mounted "$MNT"; then
		say "$MNT is still mounted: leaving $SCRATCH in place"
		status=1
		return
	fi
	if ((FS_MOUNTED)); then
		umount "$SCRATCH/fs" 2>/dev/null || { sleep 0.5; umount "$SCRATCH/fs"; } ||
			{ say "umount $SCRATCH/fs failed; detaching lazily"; umount -l "$SCRATCH/fs"; }
	fi
	[ -n "$LOOPDEV" ] && { losetup -d "$LOOPDEV" || say "losetup -d $LOOPDEV failed"; }
	if [ "${SC_KEEP:-0}" = 1 ]; then
		say "kept $SCRATCH $SC_HARNESS_STATE"
		: >"$SC_HARNESS_STATE/finished"	# the guard leaves them too
	else
		rm -rf "$SCRATCH" "$SC_HARNESS_STATE"
		[ "$MNT" = "$SCRATCH/fs/mnt" ] || rmdir "$MNT"
	fi
}

trap 'finish; exit $status' EXIT
CMD_PID=
# Stops COMMAND's whole process group (it runs in its own session), so that
# nothing it left behind keeps MNT busy.
stop_command() {
	local i

	[ -n "$CMD_PID" ] || CMD_PID=$(cat "$SC_HARNESS_STATE/cmd.pid" 2>/dev/null)
	[ -n "$CMD_PID" ] || return 0
	kill -TERM -- "-$CMD_PID" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do
		kill -0 -- "-$CMD_PID" 2>/dev/null || return 0
		sleep 0.02
	done
	kill -KILL -- "-$CMD_PID" 2>/dev/null
	sleep 0.1
}

# shellcheck disable=SC2317  # invoked by trap
on_signal() {
	trap '' PIPE	# see finish
	say "interrupted"
	status=1
	stop_command
	exit 1
}
trap on_signal INT TERM HUP

# What finish would have done, for a harness killed before it could
# (tests/lib/guard.sh: meson sends SIGKILL 0.5 s after SIGTERM).  Found by
# looking, since the guard knows only what was set before it started:
# COMMAND and the daemon by their pid files, the mounts under SCRATCH (the
# FUSE ones first, and the daemon gone, so that the loop filesystem is no
# longer busy), the loop devices by their image.  After a normal exit it
# finds nothing.
# shellcheck disable=SC2317  # run by the guard
leftovers() {
	[ -d "$SCRATCH" ] || [ -d "$SC_HARNESS_STATE" ] || return 0
	[ -e "$SC_HARNESS_STATE/finished" ] && return 0	# SC_KEEP=1
	say "cleaning up after a harness that was killed ($SCRATCH)"
	stop_command
	sc_unmount_below "$MNT" fuse
	sc_unmount_below "$SCRATCH" fuse
	[ -e "$SC_HARNESS_STATE/daemon.pid" ] && wait_daemon >/dev/null
	sc_unmount_below "$SCRATCH"
	sc_detach_loops_below "$SCRATCH"
	[ "${SC_KEEP:-0}" = 1 ] || rm -rf "$SCRATCH" "$SC_HARNESS_STATE"
	[ "${SC_KEEP:-0}" = 1 ] || [ "$MNT" = "$SCRATCH/fs/mnt" ] || rmdir "$MNT" 2>/dev/null
}
sc_guard leftovers

# The filesystem under test.
mkdir "$SCRATCH/fs"
if [ "$FSTYPE" != tmp ]; then
	if [ "$FSTYPE" = ext4 ]; then
		mkfs=(mkfs.ext4 -q -F -E nodiscard)
	else
		mkfs=(mkfs.xfs -q -f -K)
	fi
	command -v "${mkfs[0]}" >/dev/null || die "FAIL: ${mkfs[0]} not found"
	truncate -s "$SC_IMG_SIZE" "$SCRATCH/img" || die "cannot create $SCRATCH/img"
	# losetup -f --show is atomic in util-linux, but a device grabbed by a
	# parallel run between "find" and "attach" makes it fail: retry.
	for _ in 1 2 3 4 5; do
		LOOPDEV=$(losetup -f --show "$SCRATCH/img" 2>"$SC_HARNESS_STATE/losetup.err") && break
		LOOPDEV=
		sleep "0.$((RANDOM % 5 + 1))"
	done
	if [ -z "$LOOPDEV" ]; then
		say "NOTE: no loop device ($(head -c 200 "$SC_HARNESS_STATE/losetup.err")):" \
			"using a plain temp dir instead of $FSTYPE"
		rm -f "$SCRATCH/img"
		FSTYPE=tmp
	else
		"${mkfs[@]}" "$LOOPDEV" >"$SC_HARNESS_STATE/mkfs.log" 2>&1 ||
			{ cat "$SC_HARNESS_STATE/mkfs.log" >&2; die "FAIL: ${mkfs[*]} $LOOPDEV failed"; }
		mount -t "$FSTYPE" "$LOOPDEV" "$SCRATCH/fs" ||
			die "FAIL: cannot mount $LOOPDEV ($FSTYPE) on $SCRATCH/fs"
		FS_MOUNTED=1
		chmod 755 "$SCRATCH/fs"
	fi
fi
BACKING=$SCRATCH/fs/backing
REF=$SCRATCH/fs/ref
mkdir -m 755 "$BACKING" "$REF" || die "cannot make BACKING/REF"
[ -d "$MNT" ] || mkdir -m 755 "$MNT" || die "cannot make MNT"
# What init and mount are given: BACKING, or its URL
SRC=$BACKING
if [ -n "${SC_BACKING_URL:-}" ]; then
	url_dir=$(realpath "${SC_BACKING_URL_DIR:?SC_BACKING_URL needs SC_BACKING_URL_DIR}")
	case $BACKING in "$url_dir"/*) ;; *) die "BACKING $BACKING is not under SC_BACKING_URL_DIR $url_dir" ;; esac
	SRC=$SC_BACKING_URL${BACKING#"$url_dir"}
fi

# The volume.
KEYFILE=
if [ "$CONFIG" != passthrough ]; then
	KEYFILE=$SC_HARNESS_STATE/key
	head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$KEYFILE"
	chmod 600 "$KEYFILE"
	# With a key file init shows no master key (it never goes to stdout).
	# shellcheck disable=SC2086  # SC_INIT_OPTS is a list of options
	# names in the clear unless the run asks for them (init's default encrypts them)
	case " ${SC_INIT_OPTS:-} " in *" --encrypt-names "*) ;; *) SC_INIT_OPTS="${SC_INIT_OPTS:-} --plaintext-names" ;; esac
	if ! "$SC_BIN" init --cipher="$CONFIG" --block-size="$SC_BLOCK_SIZE" ${SC_INIT_OPTS:-} \
		--keyfile="$KEYFILE" "$SRC" >/dev/null 2>"$SC_HARNESS_STATE/init.log"; then
		sed 's/^/init: /' "$SC_HARNESS_STATE/init.log" >&2
		die "FAIL: stackcrypt init --cipher=$CONFIG failed"
	fi
fi

export MNT BACKING SRC REF CONFIG FSTYPE KEYFILE SC_BIN SC_BLOCK_SIZE DAEMON_LOG \
	SC_HARNESS_STATE SC_MOUNT_OPTS SC_MOUNT_TIMEOUT
export SC_REMOUNT
SC_REMOUNT=$(dirname "$(realpath "$0")")/harness_remount.sh

declare -p CONFIG FSTYPE MNT BACKING SRC REF KEYFILE SC_BIN SC_BLOCK_SIZE SC_MOUNT_OPTS \
	SC_MOUNT_TIMEOUT DAEMON_LOG >"$SC_HARNESS_STATE/env"

start_daemon
wait_mounted || { status=1; exit 1; }
export DAEMON_PID
if [ -n "$LOOPDEV" ]; then where="$FSTYPE on $LOOPDEV"; else where="a plain directory"; fi
say "$CONFIG over $where: MNT=$MNT daemon pid $DAEMON_PID"

# In the background, so that a signal to the harness is handled at once,
# and in a session of its own, so that its leftovers can be stopped.  Its
# pid file (for the guard) is written by COMMAND's own process before it
# execs COMMAND: written here after the fork, a kill of the harness in
# between (after COMMAND has told the world it runs) would orphan it.
setsid sh -c 'echo $$ >"$0"; exec "$@"' "$SC_HARNESS_STATE/cmd.pid" "$@" &
CMD_PID=$!
wait "$CMD_PID"
rc=$?
if kill -0 -- "-$CMD_PID" 2>/dev/null; then
	say "COMMAND left processes behind: stopping them"
	stop_command
fi
CMD_PID=
rm -f "$SC_HARNESS_STATE/cmd.pid"	# its group is gone: the number may be reused
if ((rc == 77)); then
	say "COMMAND asked to skip (77)"
	status=77
elif ((rc)); then
	say "COMMAND failed with status $rc: $*"
	status=1
fi
finish	# a skip (77) stays a skip only if nothing else failed
exit $status
