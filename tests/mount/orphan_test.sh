#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# orphan_test.sh parent|group HARNESS CLI_LIB - a test stopped from outside
# cleans up everything it set up:
#   parent  its parent dies (meson killed with kill -9): the kernel tells
#           the test with SIGTERM (tests/lib/with_parent.sh);
#   group   meson stops it (a timeout, or meson getting SIGTERM): SIGTERM to
#           the test's process group, then SIGKILL to the group -- meson
#           waits 0.5 s, here it follows at once, the worst case of that:
#           the run is killed anywhere in its TERM handling, and its guard
#           (tests/lib/guard.sh) must clean up after it.
# The runs:
#   1. harness.sh on an ext4 loop image, paused after mounting (COMMAND
#      waits on a FIFO nobody writes): afterwards no mount below its scratch
#      dir, no loop device of its image, no daemon, no COMMAND, no scratch;
#   2. a tests/cli script (lib.sh) with a daemon from sc_mount_fg, paused
#      the same way: no mount below its directory, no daemon, no directory.
# Each run holds a FIFO's write end, inherited by every process it starts
# (a guard too); this test reads the FIFO to its end, which comes when the
# last of them has exited.  So it needs no sleep and no deadline: a run
# that never cleans up hangs until meson's timeout, which fails the test.
set -u
MODE=$1
H=$2
CLI_LIB=$3
: "${SC_BIN:?SC_BIN must point at the stackcrypt binary}"
case $MODE in parent | group) ;; *) echo "usage: orphan_test.sh parent|group HARNESS CLI_LIB" >&2; exit 1 ;; esac
S=$(mktemp -d /tmp/sc-orphan.XXXXXX)
rpid=
fails=0
# Should a run not clean up, stop it the way the fix would (TERM makes the
# harness clean up) rather than leave its mount behind.
cleanup() {
	[ -n "$rpid" ] && kill -TERM "$rpid" 2>/dev/null
	rm -rf "$S"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
# alive PID: the process exists and is not a zombie (an orphaned daemon
# that has exited waits for init to reap it; kill -0 would still see it).
alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "${st%% *}" != Z ]
}
mounts_below() { awk -v d="$1" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo; }
loops_below() { losetup -l -n -O NAME,BACK-FILE | awk -v d="$1/" 'index($2, d) == 1 {print $1}'; }
mkfifo "$S/ready" "$S/done" "$S/ready2" "$S/done2" "$S/never"

# start_and_stop READY DONE CMD...: starts CMD as meson would (parent: under
# a shell that only waits for it; group: in a session of its own), reads
# its READY line into $line, stops it the MODE's way and reads DONE to its
# end.  The run holds DONE's write end as fd 9.
start_and_stop() {
	local ready=$1 done=$2 starter
	shift 2
	if [ "$MODE" = parent ]; then
		bash -c '"$@" & echo $! >"$0"; wait' "$S/pid" "$@" 9>"$done" &
	else
		setsid bash -c 'echo $$ >"$0"; exec "$@"' "$S/pid" "$@" 9>"$done" &
	fi
	starter=$!
	exec 7<"$done"
	read -r line <"$ready"
	rpid=$(cat "$S/pid")
	if [ "$MODE" = parent ]; then
		kill -9 "$starter"
	else
		kill -TERM -- "-$rpid"
		kill -KILL -- "-$rpid"
	fi
	wait "$starter" 2>/dev/null
	cat <&7 >/dev/null	# EOF: every process of the run has exited
	exec 7<&-
	rpid=
}

# 1. The harness.
start_and_stop "$S/ready" "$S/done" "$H" passthrough ext4 -- \
	sh -c 'echo "$MNT $DAEMON_PID $$" >"$0"; read -r _ <"$1"' "$S/ready" "$S/never"
read -r mnt dpid cpid <<<"$line"
scratch=${mnt%/fs/mnt}
[ -n "$cpid" ] && [ "$scratch" != "$mnt" ] || fail "harness: no READY line ('$line')"
[ -z "$(mounts_below "$scratch")" ] || fail "harness: still mounted: $(mounts_below "$scratch" | tr '\n' ' ')"
[ -z "$(loops_below "$scratch")" ] || fail "harness: loop device still attached: $(loops_below "$scratch")"
alive "$dpid" && fail "harness: daemon $dpid still running"
alive "$cpid" && fail "harness: COMMAND $cpid still running"
[ -e "$scratch" ] && fail "harness: scratch dir $scratch left behind"

# 2. A command-line test: lib.sh, a foreground daemon, then paused.
cat >"$S/t_cli.sh" <<EOT
. "$CLI_LIB"
mkdir "\$T/b" "\$T/m"
sc_mount_fg "\$T/b" "\$T/m" --stack=passthrough
echo "\$T \${SC_PIDS[0]}" >"$S/ready2"
read -r _ <"$S/never"
EOT
start_and_stop "$S/ready2" "$S/done2" bash "$S/t_cli.sh"
read -r t dpid <<<"$line"
[ -n "$dpid" ] || fail "cli: no READY line ('$line')"
[ -z "$(mounts_below "$t")" ] || fail "cli: still mounted: $(mounts_below "$t" | tr '\n' ' ')"
alive "$dpid" && fail "cli: daemon $dpid still running"
[ -e "$t" ] && fail "cli: $t left behind"

[ "$fails" = 0 ] && echo "orphan_test $MODE: both runs cleaned up"
exit $((fails > 0))
