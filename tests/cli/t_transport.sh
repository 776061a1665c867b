#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t_transport.sh - a background mount's line says the transport the mount
# got (issue #31, item 5: with -o io_uring and the kernel parameter off, it
# printed only "mounted", and with it on nothing said which transport
# served).  The line comes after the kernel's INIT is answered, so the
# fallback notice reaches the terminal too, before the daemon detaches.
# The fuse module's enable_uring is changed only under the lock the mount
# harness takes (/tmp/stackcrypt-enable_uring.lock), and put back; under
# SC_TEST_IO_URING=1 (scripts/test.sh's io_uring pass, which holds it at Y
# and the lock) only the "on" case runs.  Fails when the kernel has no
# FUSE over io_uring.
. "$(dirname "$0")/lib.sh"

PARAM=/sys/module/fuse/parameters/enable_uring
new_volume "$T/v" || finish
mkdir -p "$T/m"

# bg_mount TRANSPORT [options...]: a background mount of $T/v on $T/m,
# with -o stats, whose line and `stackcrypt stats` name TRANSPORT; it
# serves a file; unmounted, its daemon waited for.
bg_mount() {
	local want=$1 pids
	shift
	expect $E_OK "stackcrypt: mounted $T/v on $T/m (aes-xts, 4096-byte units, over $want)" \
		"$SC_BIN" mount --passfile="$T/pw" -o stats "$@" "$T/v" "$T/m"
	[ "$RC" = 0 ] || return
	cp "$T/out" "$T/mount.out"
	echo "served $*" >"$T/m/f"
	check "the mount ($*) serves a file" grep -qx "served $*" "$T/m/f"
	expect $E_OK "" "$SC_BIN" stats "$T/m"
	check "stats ($*) names the transport first: $(head -n1 "$T/out")" \
		test "$(head -n1 "$T/out")" = "transport: $want"
	expect $E_OK "" "$SC_BIN" stats --json "$T/m"
	check "stats --json ($*) names the transport" python3 -c \
		'import json, sys; sys.exit(json.load(open(sys.argv[1]))["transport"] != sys.argv[2])' \
		"$T/out" "$want"
	expect 1 "Operation not permitted" setfattr -n user.stackcrypt.transport -v x "$T/m"
	pids=$(daemon_pids "$T")
	fusermount3 -u "$T/m" || fail "fusermount3 -u $T/m"
	# shellcheck disable=SC2086  # a list of pids
	[ -z "$pids" ] || sc_wait_gone $pids
}

bg_mount "/dev/fuse read/write"
if [ ! -e "$PARAM" ]; then
	fail "$PARAM is missing: this kernel has no FUSE over io_uring (Linux 6.14+)"
	finish
fi
if [ "${SC_TEST_IO_URING:-}" = 1 ]; then
	check "SC_TEST_IO_URING=1 holds $PARAM at Y" test "$(cat "$PARAM")" = Y
	bg_mount io_uring -o io_uring
	finish
fi
exec 9>/tmp/stackcrypt-enable_uring.lock
flock 9
old=$(cat "$PARAM")
trap 'echo "$old" >"$PARAM"; cleanup' EXIT
echo Y >"$PARAM" || { fail "cannot set $PARAM (root needed)"; finish; }
bg_mount io_uring -o io_uring
check "no fallback notice with enable_uring on" bash -c "! grep -q 'serving over /dev/fuse' '$T/mount.out'"
echo N >"$PARAM" || { fail "cannot set $PARAM (root needed)"; finish; }
bg_mount "/dev/fuse read/write" -o io_uring
check "the fallback notice reaches the terminal of a background mount" \
	grep -q 'enable_uring is off; serving over /dev/fuse' "$T/mount.out"
finish
