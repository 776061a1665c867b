#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# uring_test.sh - a mount test over FUSE over io_uring (-o io_uring,
# fs/fuse/uring.c), with proof that the rings served it.
#
#   uring_test.sh HARNESS CONFIG FSTYPE COMMAND [ARGS...]
#
# Turns the fuse module's enable_uring on (SC_URING_PARAM=N: off, for the
# fallback) for the test and puts the old value back on any exit; the tests that do this run one at a time (a lock
# file), so none puts the value back under another.  Under
# SC_TEST_IO_URING=1 (scripts/test.sh's io_uring pass, which holds the
# parameter at Y and the lock for the whole run) it changes nothing, and
# the fallback test skips: pass 1 runs it.  Fails (never skips)
# when the kernel has no FUSE over io_uring.  Runs HARNESS CONFIG FSTYPE --
# (this script) --check COMMAND ARGS, with -o allow_other,io_uring.
#
#   uring_test.sh --check COMMAND [ARGS...]     (in the harness's mount)
#
# Runs COMMAND, then writes PROOF_WRITES blocks of 4 KiB one write(2) at a
# time, and fails if the daemon fell back to /dev/fuse (its notice) or its
# io_uring queue threads (named sc-uring-N) made fewer write syscalls than
# that: each write is a WRITE request whose backing pwrite(2) runs on the
# thread that serves it, and requests served by /dev/fuse never reach them.
# With the parameter off: fails unless the daemon said, in its one notice,
# that it serves over /dev/fuse, and has no queue thread.
set -u

PARAM=/sys/module/fuse/parameters/enable_uring
PROOF_WRITES=100

if [ "${1-}" = --check ]; then
	shift
	"$@" || exit 1
	if [ "$SC_URING_PARAM" = N ]; then
		n=$(grep -c 'enable_uring is off; serving over /dev/fuse' "$DAEMON_LOG")
		pid=$(cat "$SC_HARNESS_STATE/daemon.pid") || exit 1
		if [ "$n" -lt 1 ] || grep -qs '^sc-uring' /proc/"$pid"/task/*/comm; then
			echo "uring_test: no fallback notice, or io_uring queues with enable_uring off:" >&2
			cat "$DAEMON_LOG" >&2
			exit 1
		fi
		exit 0
	fi
	if grep -q 'serving over /dev/fuse' "$DAEMON_LOG"; then
		echo "uring_test: the daemon fell back to /dev/fuse:" >&2
		cat "$DAEMON_LOG" >&2
		exit 1
	fi
	# PROOF_WRITES write(2)s, each a WRITE request (no writeback cache),
	# each a pwrite(2) of the backing layer on the thread that serves it.
	dd if=/dev/zero of="$MNT/uring-proof" bs=4k count="$PROOF_WRITES" conv=fsync status=none || exit 1
	rm -f "$MNT/uring-proof" || exit 1
	# The battery remounts: the daemon serving now is in daemon.pid.
	pid=$(cat "$SC_HARNESS_STATE/daemon.pid") || exit 1
	queues=0 writes=0
	for t in /proc/"$pid"/task/*; do
		case $(cat "$t/comm" 2>/dev/null) in
		sc-uring-*)
			queues=$((queues + 1))
			n=$(awk '$1 == "syscw:" { print $2 }' "$t/io")
			writes=$((writes + ${n:-0}))
			;;
		esac
	done
	echo "uring_test: $queues io_uring queue threads made $writes write syscalls"
	if [ "$queues" -eq 0 ] || [ "$writes" -lt "$PROOF_WRITES" ]; then
		echo "uring_test: the rings did not serve the $PROOF_WRITES writes" >&2
		exit 1
	fi
	exit 0
fi

if [ $# -lt 4 ]; then
	echo "usage: uring_test.sh HARNESS CONFIG FSTYPE COMMAND [ARGS...]" >&2
	exit 1
fi
harness=$1 config=$2 fstype=$3
shift 3
if [ ! -e "$PARAM" ]; then
	echo "uring_test: $PARAM is missing: this kernel has no FUSE over io_uring (Linux 6.14+, CONFIG_FUSE_IO_URING)" >&2
	exit 1
fi
export SC_URING_PARAM=${SC_URING_PARAM:-Y}
if [ "${SC_TEST_IO_URING:-}" = 1 ]; then
	# scripts/test.sh's io_uring pass holds the parameter at Y (and the
	# lock) for every test running in parallel: it must not change here.
	if [ "$SC_URING_PARAM" != Y ]; then
		echo "uring_test: SC_TEST_IO_URING=1 holds $PARAM at Y for the whole run;" \
			"the fallback is tested in the /dev/fuse pass" >&2
		exit 77
	fi
	if [ "$(cat "$PARAM")" != Y ]; then
		echo "uring_test: SC_TEST_IO_URING=1 but $PARAM is not Y" >&2
		exit 1
	fi
	# This test checks the fallback notice itself (--check).
	unset SC_TEST_IO_URING
else
	exec 9>/tmp/stackcrypt-enable_uring.lock
	flock 9
	old=$(cat "$PARAM")
	trap 'echo "$old" >"$PARAM"' EXIT
	if ! echo "$SC_URING_PARAM" >"$PARAM"; then
		echo "uring_test: cannot set $PARAM (root needed)" >&2
		exit 1
	fi
fi
SC_MOUNT_OPTS=allow_other,io_uring "$harness" "$config" "$fstype" -- "$0" --check "$@"
