#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# script_test.sh - scripts/ceph.sh does what its usage says, and nothing
# more: it refuses a host name that is not loopback before it starts
# anything; a failed start (the monitor's port taken) leaves no process
# and no state; `up` with cephx
# off gives a cluster that a keyless client may use, a second `up` is the
# same cluster, an `up` asking for cephx on is refused; two WORKDIRs share
# it and the first `down` removes only its own directory; every port of the
# cluster is on 127.0.0.1; the last `down` stops every daemon and leaves
# only the lock; with cephx on a keyless client is refused and the admin's
# mount works; kill-daemon is refused while another WORKDIR uses the
# cluster, and once done, an `up` is refused until start-daemon, after
# which the mount works on; a second `down` succeeds.  A cluster of its own
# (SC_CEPH_DIR, SC_CEPH_PORT 3302), beside any other test's.  A missing
# Ceph fails the test.
#
#   script_test.sh SCRIPT     (scripts/ceph.sh)
set -u
CS=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

here=$(dirname "$(realpath "$0")")
# shellcheck source=../lib/with_parent.sh
. "$here/../lib/with_parent.sh"
sc_die_with_parent "$@"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sc-cephtest.XXXXXX") || fail "mktemp"
export SC_CEPH_DIR=$WORK/cluster SC_CEPH_PORT=3302
W1=$WORK/w1 W2=$WORK/w2
CONF=$SC_CEPH_DIR/ceph.conf
trap '"$CS" -w "$W1" down; "$CS" -w "$W2" down; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM HUP

"$CS" -w "$W1" check || fail "scripts/ceph.sh check failed (Ceph is required; not skipping)"

pids() { grep -lzxF -f <(printf "%s\n" "$CONF") /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3; }
# The processes of pids, each with its state and arguments (of one look).
procs() {
	local p
	for p in $(pids); do
		echo "$p $(grep '^State' "/proc/$p/status" 2>/dev/null) $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
	done
}
keyless() { timeout 60 ceph -c "$CONF" --keyring=/dev/null --connect-timeout 20 health >/dev/null 2>&1; }

# 1. A non-loopback host: one line, exit 1, nothing started or made.
out=$(SC_CEPH_HOST=192.0.2.1 "$CS" -w "$WORK/refused" up 2>&1)
rc=$?
[ $rc = 1 ] || fail "non-loopback host: exit $rc, want 1 ($out)"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "non-loopback host: not one line: $out"
case $out in *"resolves to 192.0.2.1, not 127.0.0.0/8: refusing"*) ;; *) fail "message: $out" ;; esac
[ ! -e "$WORK/refused" ] && [ ! -e "$SC_CEPH_DIR" ] || fail "refused run made files"

# 2. A start that fails (the monitor's port taken): it says so, and leaves
# no process and no state.
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 3302)); s.listen(); print("ok", flush=True); time.sleep(600)' >"$WORK/taker.out" &
taker=$!
while [ ! -s "$WORK/taker.out" ]; do
	kill -0 "$taker" 2>/dev/null || fail "cannot take port 3302 for the failed start"
	sleep 0.1
done
out=$("$CS" -w "$W1" up 2>&1) && fail "up with the monitor's port taken succeeded"
kill "$taker"
wait "$taker" 2>/dev/null
echo "failed start: $out"
left=$(procs)
[ -z "$left" ] || fail "a failed start left processes: $left"
left=$(ls -A "$SC_CEPH_DIR")
[ "$left" = "$(printf 'lock\nusers')" ] || fail "a failed start left $left in $SC_CEPH_DIR"
[ -z "$(ls -A "$SC_CEPH_DIR/users")" ] || fail "a failed start left a user"
"$CS" -w "$W1" down || fail "down after a failed start"
[ ! -e "$W1" ] || fail "down left $W1"

# 3. cephx off: up, up again (the same daemons), cephx on refused.
t0=$(date +%s.%N)
addr=$("$CS" -w "$W1" --cephx=off up) || fail "up --cephx=off"
echo "cold up: $(echo "$(date +%s.%N) - $t0" | bc) s"
[ "$addr" = 127.0.0.1:3302 ] || fail "up printed '$addr', want 127.0.0.1:3302"
before=$(pids | sort)
t0=$(date +%s.%N)
"$CS" -w "$W1" --cephx=off up >/dev/null || fail "a second up"
echo "up when up: $(echo "$(date +%s.%N) - $t0" | bc) s"
[ "$(pids | sort)" = "$before" ] || fail "a second up changed the daemons"
out=$("$CS" -w "$W2" --cephx=on up 2>&1) && fail "up --cephx=on of a cluster with cephx off succeeded"
case $out in *"runs with cephx off, not on"*) ;; *) fail "cephx mismatch message: $out" ;; esac
"$CS" -w "$W1" status | grep -q 'cephx off' || fail "status does not say cephx off"
keyless || fail "cephx off: a client without a key is refused"

# 4. Two WORKDIRs, each with a directory of its own.
mkdir "$WORK/m1" "$WORK/m2" || fail mkdir
"$CS" -w "$W1" mount scfs/one/deep "$WORK/m1" || fail "mount scfs/one/deep"
"$CS" -w "$W2" --cephx=off up >/dev/null || fail "up of a second WORKDIR"
"$CS" -w "$W2" mount scfs/two "$WORK/m2" || fail "mount scfs/two"
echo data1 >"$WORK/m1/f" && echo data2 >"$WORK/m2/f" || fail "write"
[ "$(cat "$WORK/m1/f")" = data1 ] && [ "$(cat "$WORK/m2/f")" = data2 ] || fail "read back"
"$CS" -w "$W1" mount scfs/two "$WORK/m2" 2>/dev/null && fail "a second mount on $WORK/m2 succeeded"
out=$("$CS" -w "$W1" kill-daemon mds.a 2>&1) && fail "kill-daemon with another WORKDIR using the cluster succeeded"
[[ $out == *"other WORKDIR(s) use the cluster"* ]] || fail "kill-daemon refused without saying why: $out"
# every listening port of the cluster's processes is on 127.0.0.1
for pid in $(pids); do
	if ss -ltnpH | grep "pid=$pid," | awk '{ print $4 }' | grep -qv '^127\.0\.0\.1:'; then
		fail "a daemon listens on a non-loopback address: $(ss -ltnpH | grep "pid=$pid,")"
	fi
done
ss -ltnpH | grep -q "127.0.0.1:3302 " || fail "no monitor on 127.0.0.1:3302"
"$CS" -w "$W1" down || fail "down of the first WORKDIR"
findmnt "$WORK/m1" >/dev/null && fail "down left $WORK/m1 mounted"
"$CS" -w "$W2" status >/dev/null || fail "the first down stopped a cluster still in use"
[ "$(cat "$WORK/m2/f")" = data2 ] || fail "the second WORKDIR's data after the first down"
mkdir "$WORK/m3" || fail mkdir
"$CS" -w "$W2" mount scfs "$WORK/m3" || fail "mount of the root"
[ -d "$WORK/m3/two" ] || fail "the second WORKDIR's directory is gone"
[ ! -e "$WORK/m3/one" ] || fail "down left the first WORKDIR's directory /one"
"$CS" -w "$W2" down || fail "the last down"
left=$(procs)
[ -z "$left" ] || fail "the last down left processes: $left"
left=$(ls -A "$SC_CEPH_DIR")
[ "$left" = "$(printf 'lock\nusers')" ] || fail "the last down left $left in $SC_CEPH_DIR"
"$CS" -w "$W2" status >/dev/null
[ $? = 3 ] || fail "status of a stopped cluster: not exit 3"
"$CS" -w "$W2" down || fail "a second down"

# 5. cephx on: a keyless client refused, the admin's mount works.
"$CS" -w "$W1" up >/dev/null || fail "up (cephx on)"
grep -qx 'auth client required = cephx' "$CONF" || fail "cephx on: not in $CONF"
keyless && fail "cephx on: a client without a key is let in"
"$CS" -w "$W1" mount scfs/x "$WORK/m1" || fail "mount with cephx on"
echo data3 >"$WORK/m1/f" && [ "$(cat "$WORK/m1/f")" = data3 ] || fail "write with cephx on"
# kill-daemon and start-daemon, by the cluster's only user
"$CS" -w "$W1" kill-daemon mds.a || fail "kill-daemon mds.a"
out=$("$CS" -w "$W2" up 2>&1) && fail "up while mds.a is killed succeeded"
[[ $out == *"stopped on purpose by 'kill-daemon'"* ]] || fail "up refused without saying why: $out"
out=$("$CS" -w "$W1" start-daemon osd.0 2>&1) && fail "start-daemon of a daemon not killed succeeded"
"$CS" -w "$W1" start-daemon mds.a || fail "start-daemon mds.a"
"$CS" -w "$W1" status >/dev/null || fail "status after start-daemon: not running"
echo data4 >"$WORK/m1/g" && [ "$(cat "$WORK/m1/f")" = data3 ] || fail "the mount after the MDS's restart"
"$CS" -w "$W1" down || fail "down (cephx on)"
left=$(procs)
[ -z "$left" ] || fail "down (cephx on) left processes: $left"
echo "ok"
