#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# orphan_test.sh HARNESS CLI_LIB - when the process that started a test
# dies (meson killed with kill -9), the test ends and cleans up
# (tests/lib/with_parent.sh):
#   1. harness.sh on an ext4 loop image, its COMMAND never ending: after a
#      kill -9 of the harness's parent, COMMAND is stopped, the mount, the
#      daemon, the loop device and the scratch dir are all gone;
#   2. a tests/cli script (lib.sh) with a daemon from sc_mount_fg, blocked
#      for good: after a kill -9 of its parent, the mount and the daemon
#      are gone.
# Each run holds a FIFO's write end, inherited by every process it starts;
# this test reads the FIFO to its end, which comes when the last of them
# has exited.  So it needs no sleep and no deadline: a run that never
# cleans up hangs until meson's timeout, which fails the test.
set -u
H=$1
CLI_LIB=$2
: "${SC_BIN:?SC_BIN must point at the stackcrypt binary}"
S=$(mktemp -d /tmp/sc-orphan.XXXXXX)
hpid=
fails=0
# Should a run not clean up, stop it the way the fix would (TERM makes the
# harness clean up) rather than leave its mount behind.
cleanup() {
	[ -n "$hpid" ] && kill -TERM "$hpid" 2>/dev/null
	rm -rf "$S"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
mounted() { awk -v m="$1" '$5 == m {f = 1} END {exit !f}' /proc/self/mountinfo; }
mkfifo "$S/ready" "$S/done" "$S/ready2" "$S/done2" "$S/never"

# 1. The harness.  Its parent is a shell that only waits for it.
bash -c '"$@" & echo $! >"$0"; wait' "$S/hpid" "$H" passthrough ext4 -- \
	sh -c 'echo "$MNT $DAEMON_PID $$" >"$0"; exec sleep 1000000' "$S/ready" 9>"$S/done" &
parent=$!
exec 7<"$S/done"
read -r mnt dpid cpid <"$S/ready"
hpid=$(cat "$S/hpid")
scratch=${mnt%/fs/mnt}
mounted "$mnt" || fail "harness: $mnt was not mounted while COMMAND ran"
kill -9 "$parent"
wait "$parent" 2>/dev/null
cat <&7 >/dev/null		# EOF: every process of the run has exited
exec 7<&-
hpid=
mounted "$mnt" && fail "harness: $mnt still mounted after its parent died"
kill -0 "$dpid" 2>/dev/null && fail "harness: daemon $dpid still running"
kill -0 "$cpid" 2>/dev/null && fail "harness: COMMAND $cpid still running"
losetup -a | grep -qF "$scratch/" && fail "harness: loop device of $scratch still attached"
[ -e "$scratch" ] && fail "harness: scratch dir $scratch left behind"

# 2. A command-line test: lib.sh, a foreground daemon, then blocked in read.
cat >"$S/t_cli.sh" <<EOT
. "$CLI_LIB"
mkdir "\$T/b" "\$T/m"
sc_mount_fg "\$T/b" "\$T/m" --stack=passthrough
echo "\$T \${SC_PIDS[0]}" >"$S/ready2"
read -r _ <"$S/never"
EOT
bash -c '"$@" & wait' _ bash "$S/t_cli.sh" 9>"$S/done2" &
parent=$!
exec 7<"$S/done2"
read -r t dpid <"$S/ready2"
mounted "$t/m" || fail "cli: $t/m was not mounted"
kill -9 "$parent"
wait "$parent" 2>/dev/null
cat <&7 >/dev/null
exec 7<&-
mounted "$t/m" && fail "cli: $t/m still mounted after its parent died"
kill -0 "$dpid" 2>/dev/null && fail "cli: daemon $dpid still running"
[ -e "$t" ] && fail "cli: $t left behind"

[ "$fails" = 0 ] && echo "orphan_test: both runs cleaned up after their parent died"
exit $((fails > 0))
