#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t_dead.sh - the hint after kill -9 of a daemon, within the attribute
# cache time (issue #31, item 4).  The kernel answers a plain stat of the
# dead mount's root from its cache for 30 s after the last access, and
# mount used to say "MOUNTPOINT is already a mount point" then.  Here the
# mount point (and a directory in the mount, as BACKING) is accessed just
# before the kill, and the second mount runs at once: with the default
# 30 s cache the first attribute is still cached however slow the machine.
. "$(dirname "$0")/lib.sh"

new_volume "$T/v" || finish
new_volume "$T/w" || finish
mkdir -p "$T/m" "$T/m2"

# kill_fresh MNT: stats MNT and MNT/d (their attributes are then cached;
# a readdir would mark the root's atime stale), then kill -9 of the daemon.
kill_fresh() {
	stat "$1" "$1/d" >/dev/null || fail "stat $1 before the kill"
	kill -KILL "${SC_PIDS[0]}"
	wait "${SC_PIDS[0]}"
	SC_PIDS=()
}

sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
mkdir "$T/m/d"
kill_fresh "$T/m"
expect $E_MOUNTPOINT "$T/m: a stackcrypt daemon died here; run 'fusermount3 -u $T/m' and mount again" \
	"$SC_BIN" mount --passfile="$T/pw" "$T/v" "$T/m"
check "the dead mount is one line of message" [ "$(wc -l <"$T/out")" = 1 ]
check "no 'already a mount point' for a dead mount" bash -c "! grep -q 'already a mount point' '$T/out'"
check "fusermount3 -u clears the dead mount" fusermount3 -u "$T/m"

# the same with a directory of the dead mount as BACKING
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
kill_fresh "$T/m"
expect $E_BACKING "BACKING $T/m/d: a stackcrypt daemon died here; run 'fusermount3 -u $T/m'" \
	"$SC_BIN" mount --passfile="$T/pw" "$T/m/d" "$T/m2"
check "fusermount3 -u clears the dead mount" fusermount3 -u "$T/m"

# a live mount is still "already a mount point", and a live daemon keeps serving
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
expect $E_MOUNTPOINT "MOUNTPOINT $T/m is already a mount point" \
	"$SC_BIN" mount --passfile="$T/pw" "$T/w" "$T/m"
check "the live mount still serves" test -d "$T/m/d"
sc_umount "$T/m"
check "the daemon logged no error: $(cat "$T/daemon.log")" \
	bash -c "! grep -qi 'error\|fail' '$T/daemon.log'"
finish
