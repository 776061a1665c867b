#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t_idle.sh - -o idle=DURATION (gocryptfs's -idle; issue #31): the daemon
# unmounts itself after DURATION without a request, never while a file or
# directory is open or the mount is otherwise in use.  Bad durations are
# refused in one line.  No outcome here hangs on timing: "still mounted" is
# checked while something holds the mount (it cannot be unmounted then,
# however slow the machine), and the unmount once released is waited for
# with a bound far above the 2 s asked for.
. "$(dirname "$0")/lib.sh"

new_volume "$T/v" || finish
mkdir -p "$T/m"

# bad durations: usage errors, before any secret is asked
for bad in 30 abc 1x 1.5 -1s 1e3s 5sm ''; do
	expect $E_USAGE "idle=$bad: not a duration" \
		"$SC_BIN" mount --passfile="$T/pw" -o "idle=$bad" "$T/v" "$T/m"
done
expect $E_USAGE "idle=0.0001s: out of range" \
	"$SC_BIN" mount --passfile="$T/pw" -o idle=0.0001s "$T/v" "$T/m"
expect $E_USAGE "idle=745h: out of range" \
	"$SC_BIN" mount --passfile="$T/pw" -o idle=745h "$T/v" "$T/m"
check "no refused idle= mounted anything" bash -c "! awk -v m='$T/m' '\$5 == m {f=1} END {exit !f}' /proc/self/mountinfo"

# still_mounted WHAT: after 8 s (four times the idle time) the mount is up.
still_mounted() {
	sleep 8
	check "idle=2s: still mounted after 8 s while $1" is_mounted "$T/m"
}

# gone_in BOUND: the daemon unmounted and exited within BOUND seconds.
gone_in() {
	local i rc
	for ((i = 0; i < $1 * 10; i++)); do
		is_mounted "$T/m" || break
		sleep 0.1
	done
	check "idle=2s: unmounted itself once unused" bash -c "! awk -v m='$T/m' '\$5 == m {f=1} END {exit !f}' /proc/self/mountinfo"
	wait "${SC_PIDS[0]}"
	rc=$?
	check "the daemon exited with status 0 after the idle unmount (got $rc)" test "$rc" = 0
	SC_PIDS=()
}

# a file held open (the test shell's fd 8): no unmount; closed: unmount
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o idle=2s || finish
mkdir "$T/m/d"
exec 8>"$T/m/f"
still_mounted "a file is open"
echo "written late" >&8
exec 8>&-
check "the file written while held reads back" grep -qx "written late" "$T/m/f"
gone_in 120
check "the daemon says why it unmounted: $(cat "$T/daemon.log")" \
	grep -qF "stackcrypt: unused for 2 s: unmounted $T/m" "$T/daemon.log"
check "the daemon logged no error: $(cat "$T/daemon.log")" \
	bash -c "! grep -qi 'error\|fail' '$T/daemon.log'"

# a directory held open: the same
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o idle=2s || finish
exec 8<"$T/m/d"
still_mounted "a directory is open"
exec 8<&-
gone_in 120

# no handle, but a process's working directory in the mount: the kernel
# refuses the unmount (EBUSY), the daemon says so once and stays
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o idle=2s || finish
(cd "$T/m/d" && exec sleep 600) &
cwd_pid=$!
while [ "$(readlink "/proc/$cwd_pid/cwd")" != "$T/m/d" ]; do
	kill -0 "$cwd_pid" 2>/dev/null || { fail "the process in $T/m/d died"; break; }
	sleep 0.1
done
still_mounted "a process works in it"
# the refusal is logged once the watcher tried (every 2 s of quiet), waited
# for with a bound far above that
for ((i = 0; i < 1200; i++)); do
	grep -q "is still in use" "$T/daemon.log" && break
	is_mounted "$T/m" || break
	sleep 0.1
done
check "the daemon says the mount is still in use: $(cat "$T/daemon.log")" \
	grep -qF "stackcrypt: unused for 2 s but $T/m is still in use" "$T/daemon.log"
kill "$cwd_pid"
wait "$cwd_pid" 2>/dev/null
gone_in 120
check "the daemon logged no error: $(cat "$T/daemon.log")" \
	bash -c "! grep -qi 'error\|fail' '$T/daemon.log'"

# read back through a mount without idle: the data of the idle mounts stayed
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
check "the file written before the idle unmount reads back" grep -qx "written late" "$T/m/f"
sc_umount "$T/m"
finish
