#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# script_test.sh - scripts/gluster.sh does what its usage says, and nothing
# more: it refuses a host name that is not loopback before it starts
# anything; a two-brick distribute volume spreads files over both bricks and
# a two-brick replica puts each file on both, and survives a brick killed
# and restarted (restart-brick); `down` leaves no mount, loop
# device, brick image, brick process, volume or glusterd of ours behind, and
# a second `down` succeeds too.  A missing GlusterFS fails the test.
#
#   script_test.sh SCRIPT     (scripts/gluster.sh)
set -u
GL=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

here=$(dirname "$(realpath "$0")")
# shellcheck source=../lib/with_parent.sh
. "$here/../lib/with_parent.sh"
sc_die_with_parent "$@"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sc-gltest.XXXXXX") || fail "mktemp"
W=$WORK/gl
trap '"$GL" -w "$W" down; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM HUP

"$GL" -w "$W" check || fail "scripts/gluster.sh check failed (GlusterFS is required; not skipping)"

# 1. A non-loopback host: one line, exit 1, nothing started or made.
out=$(SC_GLUSTER_HOST=192.0.2.1 "$GL" -w "$WORK/refused" up single screfused 2>&1)
rc=$?
[ $rc = 1 ] || fail "non-loopback host: exit $rc, want 1 ($out)"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "non-loopback host: not one line: $out"
case $out in *"resolves to 192.0.2.1, not 127.0.0.0/8: refusing"*) ;; *) fail "message: $out" ;; esac
[ ! -e "$WORK/refused" ] || fail "refused run left $(ls -A "$WORK/refused")"
gluster --mode=script volume info screfused >/dev/null 2>&1 && fail "refused run created a volume"

# Was a glusterd running before us?  Then it must still run afterwards.
before=0
gluster --mode=script --timeout=10 pool list >/dev/null 2>&1 && before=1

# 2. Distribute and replica, mounted.
vd=scgd$$ vr=scgr$$
host=${SC_GLUSTER_HOST:-$(hostname)}
addr=$("$GL" -w "$W" up dist "$vd") || fail "up dist"
[ "$addr" = "$host:/$vd" ] || fail "up printed '$addr', want $host:/$vd"
"$GL" -w "$W" up replica "$vr" >/dev/null || fail "up replica"
"$GL" -w "$W" up single "$vd" 2>/dev/null && fail "a second 'up' of $vd succeeded"
# without it GlusterFS's md-cache serves stale sizes (docs/usage.md)
for v in "$vd" "$vr"; do
	gluster --mode=script volume get "$v" performance.stat-prefetch | grep -q 'stat-prefetch *off' ||
		fail "$v: performance.stat-prefetch is not off"
done
mkdir "$WORK/cd" "$WORK/cr" || fail mkdir
"$GL" -w "$W" mount "$vd" "$WORK/cd" || fail "mount $vd"
"$GL" -w "$W" mount "$vr" "$WORK/cr" || fail "mount $vr"
for i in $(seq 40); do
	echo "$i" >"$WORK/cd/f$i" || fail "write $WORK/cd/f$i"
	echo "$i" >"$WORK/cr/f$i" || fail "write $WORK/cr/f$i"
done
# (not DHT link files: empty, mode 1000, pointing at the other brick)
b1=$(find "$W/bricks/$vd-b1/brick" -maxdepth 1 -name 'f*' -type f ! -perm -1000 | wc -l)
b2=$(find "$W/bricks/$vd-b2/brick" -maxdepth 1 -name 'f*' -type f ! -perm -1000 | wc -l)
echo "distribute: $b1 + $b2 files on the two bricks"
[ $((b1 + b2)) = 40 ] && [ "$b1" -gt 0 ] && [ "$b2" -gt 0 ] || fail "distribute: $b1 + $b2 files, want 40 over both"
for b in 1 2; do
	n=$(find "$W/bricks/$vr-b$b/brick" -maxdepth 1 -name 'f*' -type f ! -perm -1000 | wc -l)
	[ "$n" = 40 ] || fail "replica: brick $b holds $n files, want 40"
done
findmnt -rn -o SOURCE,OPTIONS --mountpoint "$W/bricks/$vd-b1" | grep -q '^/dev/loop' ||
	fail "brick $vd-b1 is not a loop device"
# every port of glusterd and of our bricks is bound to 127.0.0.1
for pid in $(cat /run/stackcrypt-gluster/glusterd.pid 2>/dev/null); do
	if ss -ltnpH | grep "pid=$pid," | awk '{ print $4 }' | grep -qv '^127\.0\.0\.1:'; then
		fail "glusterd listens on a non-loopback address: $(ss -ltnpH | grep "pid=$pid,")"
	fi
done
ss -ltnpH | grep '"glusterfsd"' | awk '{ print $4 }' | grep -v '^127\.0\.0\.1:' &&
	fail "a brick listens on a non-loopback address"
# A replica brick killed and started again: the data stays readable and
# writable through the other brick meanwhile, the brick has a new process.
# The processes are found by one grep over their argument lists (-z:
# NUL-separated), not a pipeline per process (seconds of CPU each time).
procs_with() { grep -lzF "$@" /proc/[0-9]*/cmdline 2>/dev/null; }
old=
for f in $(procs_with -x -e "$W/bricks/$vr-b1/brick"); do
	old=${f//[^0-9]/}
done
[ -n "$old" ] || fail "no process serves brick 1 of $vr"
new=$("$GL" -w "$W" restart-brick "$vr" 1) || fail "restart-brick $vr 1"
[ -n "$new" ] && [ "$new" != "$old" ] && [ -e "/proc/$new" ] ||
	fail "restart-brick: pid '$new' (was $old)"
for i in $(seq 40); do
	[ "$(cat "$WORK/cr/f$i")" = "$i" ] || fail "replica: f$i reads back wrong after the restart"
done
echo after >"$WORK/cr/after" && [ "$(cat "$WORK/cr/after")" = after ] ||
	fail "replica: cannot write after the restart"
"$GL" -w "$W" restart-brick "$vr" 3 2>/dev/null; [ $? = 2 ] || fail "restart-brick N=3 accepted"
"$GL" -w "$W" umount "$WORK/cr" || fail "umount $WORK/cr"
findmnt --mountpoint "$WORK/cr" >/dev/null && fail "$WORK/cr still mounted after umount"

# 3. Down leaves nothing, twice.
imgs=("$W"/bricks/*.img)
# the brick processes' unix sockets (-S), which GlusterFS itself leaves
socks=()
for f in $(procs_with -e "$W/bricks/"); do
	socks+=($({ tr '\0' '\n' <"$f"; } 2>/dev/null | awk 'prev == "-S" { print } { prev = $0 }'))
done
[ ${#socks[@]} = 4 ] || fail "found ${#socks[@]} brick sockets, want 4"
socks+=($(cat "$W/sockets" 2>/dev/null))	# the killed brick's, recorded by restart-brick
"$GL" -w "$W" down || fail "down"
"$GL" -w "$W" down || fail "second down"
[ ! -e "$W" ] || fail "down left $W: $(ls -A "$W")"
findmnt -rn | grep -F "$WORK" && fail "down left a mount under $WORK"
for img in "${imgs[@]}"; do
	losetup -a | grep -F "$img" && fail "down left a loop device on $img"
done
for f in $(procs_with -e "$W/bricks/"); do
	fail "a brick process is left: $f"
done
for v in "$vd" "$vr"; do
	gluster --mode=script --timeout=10 volume info "$v" >/dev/null 2>&1 && fail "volume $v is left"
	for d in /var/log/glusterfs/gfproxy /var/log/glusterfs/snaps /var/run/gluster/vols \
		/var/run/gluster/shd; do
		[ ! -e "$d/$v" ] || fail "down left $d/$v"
	done
done
for s in "${socks[@]}"; do
	[ ! -e "$s" ] || fail "down left the brick socket $s"
done
ls /var/log/glusterfs/bricks | grep -F "$(basename "$WORK")" && fail "down left brick logs"
# Other tests may share glusterd (suite gluster runs in parallel): it must
# be gone only when the script started it and no WORKDIR uses it; looked at
# under the script's lock, so nobody starts one meanwhile.
flock /run/stackcrypt-gluster/lock sh -c '
	[ -e /run/stackcrypt-gluster/ours ] || [ "$1" = 0 ] || exit 0
	[ -z "$(ls -A /run/stackcrypt-gluster/users)" ] || exit 0
	! gluster --mode=script --timeout=10 pool list >/dev/null 2>&1' sh "$before" ||
	fail "glusterd started by the script still answers after down, with no user left"
echo "ok: refusal, distribute, replica, down twice, nothing left"
