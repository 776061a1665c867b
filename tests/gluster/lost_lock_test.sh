#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lost_lock_test.sh - the one-mount lock lost across a brick restart
# (gluster.c, "The one-mount lock across lost connections"): a mount A that
# finds, on taking its lock again, that another client B holds it, logs one
# error line and fails every modifying call with EIO; reads go on (they
# change nothing, and B's writes are what they see); nothing B wrote is
# damaged; A unmounts cleanly.  Run by `tests/gluster/harness.sh --gfapi
# --keep-going single aes-xts` (the brick restart makes the harness's own
# daemon log "not connected" lines; this script checks its log instead).
#
# No waiting on time: A runs with the test hook SC_TEST_GLUSTER_RETAKE_FIFO
# (gluster.c, test_park), which parks each re-take of its lock, after a log
# line, until the test opens and closes the FIFO.  So A cannot take its lock
# again before B has it: the brick is restarted (the bricks keep no lock
# across it), B mounts and writes, and only then is A let go, one parked
# re-take at a time, until A logs the loss.
#
# Then (part 2, below) a re-take that fails for another reason: logged, and
# the mount recovers once the reason is gone.
set -u
: "${SRC:?run me under tests/gluster/harness.sh --gfapi}" "${BACKING:?}" "${KEYFILE:?}"
: "${SC_GLUSTER_SH:?}" "${SC_GLUSTER_WORK:?}" "${SC_GLUSTER_VOL:?}" "${DAEMON_LOG:?}"
# shellcheck source=../cli/lib.sh
. "$(dirname "$(realpath "$0")")/../cli/lib.sh"
# shellcheck source=gfapi_lib.sh
. "$(dirname "$(realpath "$0")")/gfapi_lib.sh"

LOST="another client took the one-mount lock"
PARKED="test hook: the re-take of the one-mount lock waits on"

# start NAME [VAR=VALUE...]: mounts URLD/l on $T/NAME in the foreground, its
# log in $T/NAME.log, with the environment given; its PID in PID_NAME.
# Returns 1 if the mount did not come up (start_or_fail says why).
start() {
	local name=$1
	shift
	mkdir -p "$T/$name"
	env "$@" "$SC_BIN" mount -f --passfile="$T/pw" -o gluster_log="$T/$name-gfapi.log" \
		"$URLD/l" "$T/$name" >"$T/$name.log" 2>&1 </dev/null &
	SC_PIDS+=($!)
	printf -v "PID_$name" %s $!
	while ! is_mounted "$T/$name"; do
		kill -0 "${SC_PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	is_mounted "$T/$name"
}

start_or_fail() {
	start "$@" || { fail "mount $1 did not come up: $(cat "$T/$1.log")"; return 1; }
}

# stop NAME: unmounts $T/NAME and checks that its daemon exited 0.
stop() {
	local name=$1 pid rc
	pid=PID_$name
	fusermount3 -u "$T/$name" || fail "fusermount3 -u $T/$name"
	wait "${!pid}"
	rc=$?
	check "daemon $name exited 0 after its unmount (exit $rc)" [ "$rc" = 0 ]
}

# parked N: true once A has logged N parked re-takes.
parked() { [ "$(grep -c "$PARKED" "$T/a.log")" -ge "$1" ]; }

nv l
mkfifo "$T/fifo"
start_or_fail a SC_TEST_GLUSTER_RETAKE_FIFO="$T/fifo" || finish
printf 'written by A\n' >"$T/a/from-a" || fail "write through A before the restart"
sync -f "$T/a/from-a"
# A's keeper parks its first round: it holds the lock, so nothing changes
while ! parked 1; do sleep 0.1; done

r=$("$SC_GLUSTER_SH" -w "$SC_GLUSTER_WORK" restart-brick "$SC_GLUSTER_VOL" 1 2>&1) ||
	fail "restart-brick: $r"
# B: the brick has no lock now, and A cannot take it again while parked.  A
# client connecting while the new brick process still starts up finds no
# brick ("not connected"): tried again then, each attempt a whole mount,
# for as long as that is the failure (how long the brick takes depends on
# the machine's load; meson's timeout bounds a brick that never comes).
while ! start b; do
	grep -q "not connected\|Transport endpoint is not connected" "$T/b.log" || break
done
is_mounted "$T/b" || { fail "mount b did not come up: $(cat "$T/b.log")"; finish; }
yes "written by B" | head -c 100000 >"$T/b/from-b" || fail "write through B"
sync -f "$T/b/from-b"
cmp -s "$T/b/from-b" <(yes "written by B" | head -c 100000) || fail "B reads back its own file"

# let A go, one parked re-take at a time, until it has seen B's lock
n=1
while ! grep -q "$LOST" "$T/a.log"; do
	: >"$T/fifo"
	n=$((n + 1))
	while ! parked $n && ! grep -q "$LOST" "$T/a.log"; do sleep 0.1; done
done
check "A logged the loss once" [ "$(grep -c "$LOST" "$T/a.log")" = 1 ]

# A: every modifying call fails with EIO, reads go on
check "a create through A fails with EIO" \
	bash -c "! touch '$T/a/new' 2>'$T/err' && grep -q 'Input/output error' '$T/err'"
check "an overwrite through A fails with EIO" \
	bash -c "! dd if=/dev/zero of='$T/a/from-b' bs=4096 count=1 conv=notrunc,fsync status=none 2>'$T/err' && grep -q 'Input/output error' '$T/err'"
check "a mkdir through A fails with EIO" \
	bash -c "! mkdir '$T/a/d' 2>'$T/err' && grep -q 'Input/output error' '$T/err'"
check "A still reads its own file" grep -qx "written by A" "$T/a/from-a"
check "A reads B's file as B wrote it" cmp -s "$T/a/from-b" <(yes "written by B" | head -c 100000)
stop a
check "A's log: no error line but the loss and lost connections" \
	bash -c "! grep -i error '$T/a.log' | grep -v -e '$LOST' -e \"not connected to the volume's bricks\""

# B's data: intact through B, after B's unmount, and to fsck
check "B's file intact through B" cmp -s "$T/b/from-b" <(yes "written by B" | head -c 100000)
check "A's failed create left nothing" [ ! -e "$T/b/new" ]
stop b
check "B's log has no error line" bash -c "! grep -qi error '$T/b.log'"
expect $E_OK "; 0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/l"

# Part 2: a re-take that fails for a reason other than a lost connection
# says so, and the mount recovers once the reason is gone.  The lock fd
# never serves again after a failed re-take: each round looks the lock file
# up afresh (gluster.c, lock_retake).  Its file is replaced by a directory
# while C holds the lock: unlinked while open, it is gone once the brick
# restarts, so C's re-take finds the directory (EISDIR) until it is removed.
# Before this was logged, C failed every write with ENOTCONN and logged
# nothing: the failure brick_restart_test.py saw once in CI.
RETAKE="cannot take the one-mount lock on .stackcrypt.lock again: Is a directory"
start_or_fail c || finish
printf 'written by C\n' >"$T/c/from-c" || fail "write through C before the restart"
sync -f "$T/c/from-c"
rm "$DIRD/l/.stackcrypt.lock" && mkdir "$DIRD/l/.stackcrypt.lock" ||
	fail "replace C's lock file by a directory"
r=$("$SC_GLUSTER_SH" -w "$SC_GLUSTER_WORK" restart-brick "$SC_GLUSTER_VOL" 1 2>&1) ||
	fail "restart-brick: $r"
# C's keeper finds the directory once the brick is back; bounded only so
# that a mount that never logs it fails instead of hanging
for ((i = 0; i < 3000; i++)); do
	grep -q "$RETAKE" "$T/c.log" && break
	sleep 0.1
done
check "C logged why it cannot take its lock again" grep -q "$RETAKE" "$T/c.log"
check "a write through C fails with ENOTCONN meanwhile" \
	bash -c "! touch '$T/c/new' 2>'$T/err' && grep -q 'Transport endpoint is not connected' '$T/err'"
rmdir "$DIRD/l/.stackcrypt.lock" || fail "rmdir the directory in the lock file's place"
for ((i = 0; i < 3000; i++)); do
	grep -q "one-mount lock on .stackcrypt.lock is held again" "$T/c.log" && break
	sleep 0.1
done
check "C took its lock again once the directory was gone" \
	grep -q "one-mount lock on .stackcrypt.lock is held again" "$T/c.log"
printf 'written by C after\n' >"$T/c/after" || fail "write through C after the recovery"
check "C reads back what it wrote before and after" \
	bash -c "grep -qx 'written by C' '$T/c/from-c' && grep -qx 'written by C after' '$T/c/after'"
# in the foreground: no detached child left to outlive the refusal
mkdir -p "$T/d"
expect $E_BACKING "in use by another stackcrypt mount" "$SC_BIN" mount -f --passfile="$T/pw" \
	-o gluster_log="$T/d-gfapi.log" "$URLD/l" "$T/d"
stop c
check "C's log: no error line but the failed re-take and lost connections" \
	bash -c "! grep -i error '$T/c.log' | grep -v -e '$RETAKE' -e \"not connected to the volume's bricks\""
check "the harness's daemon logged no error but lost connections" \
	bash -c "! grep -i error '$DAEMON_LOG' | grep -v \"not connected to the volume's bricks\""
finish
