#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# two_clients_test.sh - two clients of one GlusterFS volume: one writer per
# stackcrypt volume, held across clients; each client its own volume.
#
# Run by tests/gluster/harness.sh (a crypt CONFIG): the harness's daemon has
# BACKING (volume V1) mounted on MNT through the GlusterFS client at
# SC_GLUSTER_DIR.  This script FUSE-mounts the same GlusterFS volume a second
# time (client 2, its own glusterfs process) and checks:
#  - a mount of V1 through client 2 is refused, read-write and read-only,
#    in one line naming the rule, exit status 10 (BACKING);
#  - client 2 makes and mounts its own volume V2 beside V1 on the same
#    GlusterFS volume, and both mounts write at the same time; each reads
#    back what it wrote;
#  - once client 2's daemon has exited, V2 mounts through client 1 and reads
#    back client 2's data, and a mount of V2 through client 2 is now refused;
#  - the same lock holds between a mount through a FUSE client and one
#    through the gluster translator (gluster://), both ways.
# Every daemon it starts runs in the foreground, is stopped by pid whatever
# happens, and must log no error line.

set -u
here=$(dirname "$(realpath "$0")")
GL=$here/../../scripts/gluster.sh
: "${MNT:?run me from tests/gluster/harness.sh}" "${BACKING:?}" "${KEYFILE:?}"
: "${SC_GLUSTER_VOL:?}" "${SC_GLUSTER_DIR:?}" "${SC_GLUSTER_WORK:?}" "${SC_BIN:?}"

fails=0
check() {
	local what=$1
	shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

T=$(mktemp -d /tmp/sc-gl2.XXXXXX) || exit 1
C2=$T/client2
PIDS=()
MOUNTS=()
cleanup() {
	local m p
	for m in "${MOUNTS[@]}"; do
		grep -q " $m fuse" /proc/self/mounts && { fusermount3 -u "$m" || fusermount3 -uz "$m"; }
	done
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	if grep -q " $C2 fuse" /proc/self/mounts; then "$GL" -w "$SC_GLUSTER_WORK" umount "$C2"; fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir "$C2" "$T/m2" "$T/m3" || exit 1
"$GL" -w "$SC_GLUSTER_WORK" mount "$SC_GLUSTER_VOL" "$C2" || { echo "FAIL: second GlusterFS client"; exit 1; }
rel=${BACKING#"$SC_GLUSTER_DIR"/}
B1_C2=$C2/$rel				# V1 as client 2 sees it
check "client 2 sees V1's config" test -f "$B1_C2/.stackcrypt.conf"

# Starts a foreground daemon (pid appended to PIDS, log in $T/NAME.log) and
# waits until MNT is mounted or the daemon died (no deadline: meson's
# timeout bounds a hang).
start() {
	local name=$1 backing=$2 mnt=$3
	"$SC_BIN" mount -f --keyfile="$KEYFILE" "$backing" "$mnt" >"$T/$name.log" 2>&1 &
	PIDS+=($!)
	MOUNTS+=("$mnt")
	until grep -q " $mnt fuse.stackcrypt " /proc/self/mounts; do
		kill -0 "${PIDS[-1]}" 2>/dev/null || { echo "FAIL: $name did not mount:"; cat "$T/$name.log"; return 1; }
		sleep 0.05
	done
}
# Unmounts MNT and waits for the daemon (last of PIDS) to exit 0.
stop() {
	local name=$1 mnt=$2 pid=${PIDS[-1]} rc
	fusermount3 -u "$mnt" || return 1
	wait "$pid"
	rc=$?
	unset 'PIDS[-1]'
	check "$name: daemon exited 0" test "$rc" = 0
	check "$name: daemon logged no error" bash -c "! grep -qi 'error' '$T/$name.log'"
}

# 1. V1 is held by client 1's daemon: refused through client 2.
for ro in "" "-o ro"; do
	# shellcheck disable=SC2086
	"$SC_BIN" mount $ro --keyfile="$KEYFILE" "$B1_C2" "$T/m2" >"$T/out" 2>&1
	rc=$?
	check "V1 via client 2 ($ro): refused with status 10" test "$rc" = 10
	check "V1 via client 2 ($ro): one line naming the rule" \
		bash -c "[ \$(wc -l <'$T/out') = 1 ] && grep -q 'in use by another stackcrypt mount, on this or another client' '$T/out'"
	check "V1 via client 2 ($ro): nothing mounted" bash -c "! grep -q ' $T/m2 ' /proc/self/mounts"
done

# ... and through the gluster translator (libgfapi), which locks the same file.
GURL=gluster://127.0.0.1/$SC_GLUSTER_VOL
"$SC_BIN" mount -o gluster_log="$T/gfapi.log" --keyfile="$KEYFILE" "$GURL/$rel" "$T/m2" >"$T/out" 2>&1
check "V1 via gluster:// refused with status 10" test $? = 10
check "V1 via gluster://: the rule named" grep -q 'in use by another stackcrypt mount' "$T/out"

# 2. Client 2's own volume V2, written at the same time as V1.
B2_C2=$C2/${rel%/*}/v2-$$
mkdir "$B2_C2" || exit 1
"$SC_BIN" init --cipher="${CONFIG:-aes-xts}" --plaintext-names --keyfile="$KEYFILE" "$B2_C2" >"$T/init.log" 2>&1 ||
	{ echo "FAIL: init of V2 through client 2:"; cat "$T/init.log"; exit 1; }
start c2-v2 "$B2_C2" "$T/m2" || exit 1
head -c 3000000 /dev/urandom >"$T/d1"
head -c 3000000 /dev/urandom >"$T/d2"
cp "$T/d1" "$MNT/from-client1" & w1=$!
cp "$T/d2" "$T/m2/from-client2" & w2=$!
wait $w1; r1=$?
wait $w2; r2=$?
check "concurrent writers on two clients both succeed" test "$r1$r2" = 00
check "V1 reads back client 1's data" cmp -s "$T/d1" "$MNT/from-client1"
check "V2 reads back client 2's data" cmp -s "$T/d2" "$T/m2/from-client2"
stop c2-v2 "$T/m2"

# 3. Client 2's daemon has exited: V2 is free, and moves to client 1.
B2_C1=$SC_GLUSTER_DIR/${rel%/*}/v2-$$
start c1-v2 "$B2_C1" "$T/m3" || exit 1
check "V2 through client 1 reads back client 2's data" cmp -s "$T/d2" "$T/m3/from-client2"
"$SC_BIN" mount --keyfile="$KEYFILE" "$B2_C2" "$T/m2" >"$T/out" 2>&1
check "V2 via client 2 refused while client 1 holds it" test $? = 10
stop c1-v2 "$T/m3"

# 4. V2 through the gluster translator: it reads client 2's data, and holds
# the volume against a mount through a FUSE client.
start_url() {
	local name=$1 url=$2 mnt=$3
	"$SC_BIN" mount -f -o gluster_log="$T/gfapi.log" --keyfile="$KEYFILE" "$url" "$mnt" \
		>"$T/$name.log" 2>&1 &
	PIDS+=($!)
	MOUNTS+=("$mnt")
	until grep -q " $mnt fuse.stackcrypt " /proc/self/mounts; do
		kill -0 "${PIDS[-1]}" 2>/dev/null || { echo "FAIL: $name did not mount:"; cat "$T/$name.log"; return 1; }
		sleep 0.05
	done
}
start_url gfapi-v2 "$GURL/${rel%/*}/v2-$$" "$T/m3" || exit 1
check "V2 through gluster:// reads back client 2's data" cmp -s "$T/d2" "$T/m3/from-client2"
"$SC_BIN" mount --keyfile="$KEYFILE" "$B2_C2" "$T/m2" >"$T/out" 2>&1
check "V2 via a FUSE client refused while gluster:// holds it" test $? = 10
stop gfapi-v2 "$T/m3"

echo "$fails failed"
[ "$fails" = 0 ]
