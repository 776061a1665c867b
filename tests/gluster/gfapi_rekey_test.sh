#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# gfapi_rekey_test.sh - stackcrypt rekey over gluster:// (issue #32), as
# tests/cli/t_rekey.sh checks it over a directory: an aes-gcm volume with
# encrypted names and an aes-xts one (names in the clear), each holding a
# long name, a hard link, a long symlink target, a sparse and an empty
# file, with a password and a key-file slot, rekeyed through libgfapi;
# fsck is clean with each slot, each mounts it and reads the source's
# plaintext, the old master key opens nothing, no rekey state is left; a
# volume mounted through libgfapi is refused (its one-mount lock).  Then
# the rekey is killed (SIGKILL at the Nth step, SC_REKEY_FAULT=N) at every
# fourth step in turn and a second run with one secret finishes it.  Run by
# `tests/gluster/harness.sh --gfapi single aes-xts`; the volume's FUSE
# view (DIRD) copies a backing for each kill and lists what is left.
set -u
: "${SRC:?run me under tests/gluster/harness.sh --gfapi}" "${BACKING:?}"
# shellcheck source=../cli/lib.sh
. "$(dirname "$(realpath "$0")")/../cli/lib.sh"
# shellcheck source=gfapi_lib.sh
. "$(dirname "$(realpath "$0")")/gfapi_lib.sh"
new_keyfile "$T/key"
mkdir -p "$T/m" "$T/src/d"
long=$(printf 'n%.0s' $(seq 200))
head -c 70000 /dev/urandom >"$T/src/d/data"
ln "$T/src/d/data" "$T/src/hard"
ln -s "$(printf 't%.0s' $(seq 700))" "$T/src/longlink"
echo tiny >"$T/src/$long"
: >"$T/src/empty"
truncate -s 3M "$T/src/sparse"

# same NAME WHAT SECRET: URLD/NAME mounted with SECRET holds $T/src's tree
same() {
	sc_mount_fg "$URLD/$1" "$T/m" "$3" "${M[@]}" || return 1
	check "$2: the plaintext equals the source's" diff -r --no-dereference "$T/src" "$T/m"
	check "$2: hard link kept" test "$(stat -c %h "$T/m/hard")" = 2
	sc_umount "$T/m"
}

# filled NAME INIT-OPTIONS...: a volume holding the tree, with a key-file slot
filled() {
	local name=$1
	shift
	nv "$name" "$@" || return 1
	sc_mount_fg "$URLD/$name" "$T/m" --passfile="$T/pw" "${M[@]}" || return 1
	cp -a "$T/src/." "$T/m/"
	sc_umount "$T/m"
	expect $E_OK "added slot 1" "$SC_BIN" key add --passfile="$T/pw" --new-keyfile="$T/key" \
		--label=usb "$URLD/$name"
}

for kind in "--cipher=aes-gcm --encrypt-names" "--cipher=aes-xts"; do
	name=v$RANDOM
	# shellcheck disable=SC2086
	filled "$name" $kind || continue
	sc_mount_fg "$URLD/$name" "$T/m" --passfile="$T/pw" "${M[@]}" || continue
	expect $E_BACKING "is mounted" "$SC_BIN" rekey --passfile="$T/pw" \
		--also-keyfile="$T/key" "$URLD/$name"
	sc_umount "$T/m"
	expect $E_OK "has a new master key; 2 key slots" "$SC_BIN" rekey --passfile="$T/pw" \
		--also-keyfile="$T/key" "$URLD/$name"
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/$name"
	expect $E_OK "0 problems" "$SC_BIN" fsck --keyfile="$T/key" "$URLD/$name"
	expect $E_BADPASS "does not match" "$SC_BIN" fsck --masterkey="$T/$name.mk" "$URLD/$name"
	same "$name" "$kind" --passfile="$T/pw"
	same "$name" "$kind, key file slot" --keyfile="$T/key"
	check "$kind: no rekey state left: $(ls -A "$DIRD/$name")" \
		bash -c "! ls -A '$DIRD/$name' | grep -q rekey"
done

# a kill at every fourth step, then a run with one secret finishes it:
# tests/cli/t_rekey.sh kills at every step over a directory, and the steps
# are one code path whatever the backing; here they are spread over every
# phase of the run through libgfapi, at a quarter of the CPU (CI's
# sanitizer pass is CPU-bound: docs/design.md, "CI time")
filled base --cipher=aes-gcm --encrypt-names || finish
n=1
while :; do
	name=f$n
	mkdir "$DIRD/$name"
	cp -a "$DIRD/base/." "$DIRD/$name/"
	SC_REKEY_FAULT=$n "$SC_BIN" rekey --passfile="$T/pw" --also-keyfile="$T/key" \
		"$URLD/$name" >"$T/out" 2>&1 </dev/null
	RC=$?
	[ $RC = 0 ] && break
	CHECKS=$((CHECKS + 1))
	[ $RC = 137 ] || { fail "rekey with fault $n exited $RC: $(cat "$T/out")"; break; }
	# one secret finishes a rekey that began; all are needed when the
	# kill came before it marked the config (then nothing had changed)
	if (($(sed -n 's/^features = //p' "$DIRD/$name/.stackcrypt.conf") & 0x80)); then
		expect $E_OK "going on with the rekey" "$SC_BIN" rekey --keyfile="$T/key" "$URLD/$name"
	else
		expect $E_OK "" "$SC_BIN" rekey --keyfile="$T/key" --also-passfile="$T/pw" \
			"$URLD/$name"
	fi
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/$name"
	[ $((n % 6)) = 1 ] && same "$name" "killed at step $n" --keyfile="$T/key"
	rm -rf "${DIRD:?}/$name"
	n=$((n + 4))
done
check "the kill loop reached the steps (got to $n)" test "$n" -gt 20
echo "killed at every fourth of $((n - 1)) steps over gluster://"
same "f$n" "the run with no fault" --passfile="$T/pw"

finish
