#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# crash_test.sh - kill -9 the daemon during a write loop, remount, check.
#
# Under tests/mount/harness.sh (which exports MNT BACKING REF CONFIG KEYFILE
# SC_BIN SC_BLOCK_SIZE SC_HARNESS_STATE and SC_REMOUNT), each round:
#   1. starts `sc_crash write` on $MNT/crash/rN, logging every operation to
#      $REF/crash-rN.log (a plain directory: the log survives the daemon),
#      fsynced content only after fsync returned;
#   2. kill -9 the daemon ($SC_HARNESS_STATE/daemon.pid) at a random time
#      0.15..1.5 s after the writer's first completed operation; the writer
#      then gets ENOTCONN and exits;
#   3. for crypt configs, runs `$SC_BIN fsck --keyfile=$KEYFILE $BACKING`
#      (if `fsck --help` exits 0) while no daemon runs, expecting exit 0
#      (on an integrity volume a file being written or created at the kill
#      is a note, counted in the round's line: the remount accepts it);
#   4. remounts ("$SC_REMOUNT" --kill), runs `sc_crash verify` on this
#      round's files, and reads every file under $MNT (all earlier rounds
#      too) without error.
#
#   crash_test.sh [-n rounds] [-s seed] SC_CRASH          (under the harness)
#   crash_test.sh -p DIR [-n rounds] [-s seed] SC_CRASH   (plain directory:
#       kills the writer instead of a daemon; tests the test itself)
#   crash_test.sh -p DIR -F SC_CRASH                      (self-test: damage
#       an fsynced file; exits 0 only if verify catches it)
#
# Rounds default to $CRASH_ROUNDS or 3 (the full run uses 50); the seed to
# $CRASH_SEED or the time, printed first.  Exit 0 pass, 1 fail, 2 usage.
set -u

rounds=${CRASH_ROUNDS:-3}
seed=${CRASH_SEED:-$(date +%s)}
plain=
selftest=
while getopts "n:s:p:F" opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	s) seed=$OPTARG ;;
	p) plain=$OPTARG ;;
	F) selftest=1 ;;
	*) echo "usage: crash_test.sh [-n rounds] [-s seed] [-p DIR] [-F] SC_CRASH" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "crash_test.sh: need the path of sc_crash" >&2; exit 2; }
SC_CRASH=$1
bs=${SC_BLOCK_SIZE:-4096}

say() { echo "crash_test: $*"; }
die() { echo "crash_test: FAILED: $*" >&2; exit 1; }

if [ -n "$plain" ]; then
	rm -rf "$plain" && mkdir -p "$plain/ref" "$plain/data" || die "cannot create $plain"
	top=$plain/data
	ref=$plain/ref
else
	for v in MNT BACKING REF CONFIG SC_BIN SC_HARNESS_STATE SC_REMOUNT; do
		[ -n "${!v:-}" ] || { echo "crash_test.sh: \$$v not set: run me under tests/mount/harness.sh, or with -p DIR" >&2; exit 2; }
	done
	top=$MNT/crash
	ref=$REF
fi
if [ -n "$plain" ]; then
	say "seed=$seed rounds=$rounds bs=$bs plain=$plain"
else
	say "seed=$seed rounds=$rounds bs=$bs config=$CONFIG fstype=${FSTYPE:-?} mnt=$MNT"
fi
RANDOM=$seed

if [ -n "$selftest" ]; then
	[ -n "$plain" ] || die "-F needs -p DIR"
	"$SC_CRASH" write -b "$bs" -S "$seed" -n 3000 "$top/r1" "$ref/r1.log" || die "writer failed"
	"$SC_CRASH" corrupt -b "$bs" "$top/r1" "$ref/r1.log" || die "corrupt failed"
	"$SC_CRASH" verify -b "$bs" "$top/r1" "$ref/r1.log"
	rc=$?
	[ $rc -eq 1 ] || die "self-test: verify exited $rc on a damaged fsynced file (want 1)"
	say "self-test passed: verify caught the damaged file"
	exit 0
fi

# fsck exists once `stackcrypt fsck --help` exits 0; only crypt volumes have one
fsck_ok=
if [ -z "$plain" ] && [ "$CONFIG" != passthrough ] && "$SC_BIN" fsck --help >/dev/null 2>&1; then
	fsck_ok=1
fi

# Every regular file under $1 must read without error; adds to $problems.
read_all() {
	local f n=0 bad=0
	while IFS= read -r -d '' f; do
		if ! cat -- "$f" >/dev/null; then
			problems+="  $f: unreadable after the crash"$'\n'
			bad=$((bad + 1))
		fi
		n=$((n + 1))
	done < <(find "$1" -type f -print0)
	say "round $i: $((n - bad)) of $n files under $1 read back without error"
}

mkdir -p "$top" || die "mkdir $top"
for ((i = 1; i <= rounds; i++)); do
	dir=$top/r$i
	log=$ref/crash-r$i.log
	err=$ref/crash-r$i.err
	"$SC_CRASH" write -b "$bs" -S $((seed + i)) "$dir" "$log" 2>"$err" &
	wpid=$!
	# The kill's delay counts from the writer's first completed operation
	# through the mount, not from its start: on a loaded machine the writer
	# can take longer than the delay to start, and a kill before it began
	# left no log to check (a gluster replica run failed so at load 17).
	# Bounded only so that a writer that never gets going fails the test.
	for ((t = 0; t < 1200; t++)); do
		grep -qE '^(D$|S )' "$log" 2>/dev/null && break
		kill -0 "$wpid" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -qE '^(D$|S )' "$log" 2>/dev/null; then
		kill -9 "$wpid" 2>/dev/null
		wait "$wpid"
		cat "$err" >&2
		die "round $i: the writer completed no operation in 120 s (exit $?)"
	fi
	ms=$((150 + RANDOM % 1350))
	sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
	if ! kill -0 "$wpid" 2>/dev/null; then
		wait "$wpid"
		cat "$err" >&2
		die "round $i: the writer stopped before the kill (exit $?)"
	fi
	if [ -n "$plain" ]; then
		kill -9 "$wpid"
	else
		# DAEMON_PID goes stale after the first remount; the harness keeps the current one
		dpid=$(cat "$SC_HARNESS_STATE/daemon.pid") || die "round $i: no daemon.pid"
		kill -9 "$dpid" || die "round $i: kill -9 $dpid failed"
	fi
	# the writer sees ENOTCONN and exits 3; give it 10 s, then kill it
	for ((t = 0; t < 100; t++)); do
		kill -0 "$wpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$wpid" 2>/dev/null
	wait "$wpid"
	wrc=$?
	if [ $wrc -ne 137 ] && [ $wrc -ne 3 ]; then
		cat "$err" >&2
		die "round $i: the writer failed (exit $wrc) for a reason other than the kill"
	fi
	ops=$(grep -c . "$log")
	# every check runs, so one report shows everything this crash broke
	problems=
	pinned=
	if [ -z "$plain" ]; then
		# no daemon runs now: fsck sees the backing dir exactly as the crash left it
		if [ -n "$fsck_ok" ]; then
			"$SC_BIN" fsck --keyfile="$KEYFILE" "$BACKING" >"$ref/fsck-r$i.out" 2>&1
			frc=$?
			if [ $frc -ne 0 ]; then
				cat "$ref/fsck-r$i.out" >&2
				problems+="  fsck exited $frc"$'\n'
			fi
			# integrity volumes: files being written or created at the kill
			# are notes, not problems
			pinned=$(grep -c -e 'was being written when the mount stopped:' \
				-e 'was being created when the mount stopped,' "$ref/fsck-r$i.out")
			[ "$pinned" = 0 ] && pinned=
		fi
		# --kill: the daemon is dead already; this detaches the dead mount and mounts again
		"$SC_REMOUNT" --kill 2>"$ref/remount-r$i.err" ||
			{ cat "$ref/remount-r$i.err" >&2; die "round $i: remount failed"; }
	fi
	"$SC_CRASH" verify -b "$bs" "$dir" "$log" ||
		problems+="  sc_crash verify failed (log $log)"$'\n'
	read_all "$top"
	if [ -n "$problems" ]; then
		echo "crash_test: round $i: killed after ${ms} ms, $ops log records, writer seed" \
			"$((seed + i)); the log ends with (op in flight last):" >&2
		tail -n 3 "$log" | sed 's/^/    /' >&2
		printf '%s' "$problems" >&2
		die "round $i: the crash left the problems above"
	fi
	say "round $i: killed after ${ms} ms and $ops log records: OK${pinned:+ ($pinned file(s) being written or created at the kill, accepted)}"
done
say "$rounds rounds OK${fsck_ok:+ (fsck clean after each)}"
