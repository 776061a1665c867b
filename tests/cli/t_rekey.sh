#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# stackcrypt rekey (issue #32): a volume's master key replaced, every file,
# name and symlink target re-encrypted, on the default volume (aes-gcm,
# encrypted names), aes-xts with encrypted names (nonce records in xattrs)
# and aes-xts with names in the clear.  The tree holds long names, hard
# links, symlinks with long targets, sparse and empty files, files around
# the unit boundaries, a FIFO, extended attributes and odd modes; after a
# rekey fsck is clean, every remaining slot (password, second password,
# key file) mounts it, the plaintext, modes, times and links equal the
# source's, the old master key opens nothing, and no rekey directory or
# state is left.  Refusals: a mounted volume, a slot whose secret is not
# given (nothing changed), a wrong --also secret.  Crashes: the rekey is
# killed (SIGKILL, at the Nth step of SC_REKEY_FAULT=N: every step in
# turn, no timing) at every step of the run (on aes-xts with names every
# third); while it is stopped mount, fsck and key refuse the volume, and a
# second rekey with one secret finishes it, after which fsck is clean
# (every step) and the plaintext, modes, times and links equal the
# source's (every other step).
# Last, docs/usage.md's workflow after a lost laptop: its slot removed, the
# key rotated, and a config backup that opened the volume with the laptop's
# password before opens nothing after.
# (tests/gluster/gfapi_keys_test.sh runs a rekey over gluster://.)
. "$(dirname "$0")/lib.sh"

printf 'second pass\n' >"$T/pw2"
printf 'wrong horse\n' >"$T/wrong"
chmod 600 "$T"/pw2 "$T/wrong"
new_keyfile "$T/key"
mkdir -p "$T/m"

# fill DIR [small]: the tree every case rekeys (a plain directory, copied
# into the mount with cp -a).
fill() {
	local d=$1 long
	long=$(printf 'n%.0s' $(seq 200))
	mkdir -p "$d/dir/sub" "$d/$long.d"
	head -c 300000 /dev/urandom >"$d/dir/data"
	ln "$d/dir/data" "$d/hard"
	ln "$d/dir/data" "$d/dir/sub/hard2"
	echo tiny >"$d/$long"
	ln -s "$(printf 't%.0s' $(seq 900))/x" "$d/longlink"
	ln -s dir/data "$d/link"
	: >"$d/empty"
	[ "${2:-}" = small ] && return
	for n in 15 16 17 4095 4096 4097 8191 8192 8193 65537; do
		head -c $n /dev/urandom >"$d/dir/sz$n"
	done
	truncate -s 20M "$d/sparse"
	printf 'middle' | dd of="$d/sparse" bs=1 seek=9000000 conv=notrunc status=none
	mkfifo "$d/fifo"
	setfattr -n user.colour -v blue "$d/dir/data"
	chmod 0751 "$d/dir/sub"
	chmod 0400 "$d/dir/sz15"
	touch -d '2001-02-03 04:05:06' "$d/dir/sz16" "$d/dir"
}

# new_source KIND-OPTIONS... : a volume $T/v0 filled, its plaintext in
# $T/src and its tree_listing in $T/want, its master key in $T/mk.
new_source() {
	rm -rf "$T/v0" "$T/src"
	if [ "$1" = default ]; then
		mkdir -p "$T/v0"
		rm -f "$T/mk"
		(umask 077; printf 'correct horse\n' >"$T/pw")
		"$SC_BIN" init --scrypt-n=1024 --passfile="$T/pw" --save-masterkey="$T/mk" \
			"$T/v0" >"$T/init.out" 2>&1 || fail "init: $(cat "$T/init.out")"
		shift
	else
		new_volume "$T/v0" "$@"
	fi
	shift $#
	mkdir -p "$T/src"
	fill "$T/src" "${SMALL:-}"
	sc_mount_fg "$T/v0" "$T/m" --passfile="$T/pw" || return 1
	cp -a "$T/src/." "$T/m/"
	touch -d '2001-02-03 04:05:06' "$T/m/dir"	# after its entries were made
	touch -d '2001-02-03 04:05:06' "$T/src/dir"
	sc_umount "$T/m"
	tree_listing "$T/src" >"$T/want"
}

# ---- every kind of volume, three slots ----
for kind in default "--cipher=aes-xts --encrypt-names" "--cipher=aes-xts --plaintext-names"; do
	# shellcheck disable=SC2086
	new_source $kind
	v=$T/v0
	expect $E_OK "added slot 1" "$SC_BIN" key add --passfile="$T/pw" --new-keyfile="$T/key" \
		--label=usb "$v"
	expect $E_OK "added slot 2" "$SC_BIN" key add --passfile="$T/pw" --new-passfile="$T/pw2" \
		--scrypt-n=1024 --label=phone "$v"
	cp "$v/.stackcrypt.conf" "$T/conf.before"
	expect $E_SECRET "no secret given for slot 2 (phone)" \
		"$SC_BIN" rekey --passfile="$T/pw" --also-keyfile="$T/key" "$v"
	expect $E_BADPASS "opens no other key slot" \
		"$SC_BIN" rekey --passfile="$T/pw" --also-passfile="$T/wrong" "$v"
	check "$kind: refusals leave the config alone" cmp -s "$T/conf.before" "$v/.stackcrypt.conf"
	sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || continue
	expect $E_BACKING "is mounted" "$SC_BIN" rekey --passfile="$T/pw" --also-keyfile="$T/key" \
		--also-passfile="$T/pw2" "$v"
	sc_umount "$T/m"
	expect $E_OK "has a new master key; 3 key slots wrap it" \
		"$SC_BIN" rekey --passfile="$T/pw" --also-keyfile="$T/key" --also-passfile="$T/pw2" "$v"
	check "$kind: the config changed" bash -c "! cmp -s '$T/conf.before' '$v/.stackcrypt.conf'"
	rekey_after "$v" "$kind"
	same_tree "$v" "$kind, key file slot" --keyfile="$T/key"
	same_tree "$v" "$kind, second password slot" --passfile="$T/pw2"
	# a second rekey, with the key file unlocking this time
	expect $E_OK "has a new master key" \
		"$SC_BIN" rekey --keyfile="$T/key" --also-passfile="$T/pw" --also-passfile="$T/pw2" "$v"
	rekey_after "$v" "$kind, rekeyed twice"
done

# ---- a kill at every step, then a run with one secret finishes it ----
# Every step on the default volume; every third on aes-xts with names (the
# steps are the same code, rekey knows no format: the kinds differ only in
# the layers it copies through, which the full runs above check, and each
# step costs a copy, two rekeys, an fsck and a mount in CI's sanitizer pass).
SMALL=small
for kind in default "--cipher=aes-xts --encrypt-names"; do
	# shellcheck disable=SC2086
	new_source $kind
	cp -a "$T/v0" "$T/pristine"
	stride=1
	[ "$kind" = default ] || stride=3
	n=1
	while :; do
		rm -rf "$T/v"
		cp -a "$T/pristine" "$T/v"
		SC_REKEY_FAULT=$n "$SC_BIN" rekey --passfile="$T/pw" "$T/v" >"$T/out" 2>&1 </dev/null
		RC=$?
		[ $RC = 0 ] && break
		CHECKS=$((CHECKS + 1))
		[ $RC = 137 ] || { fail "$kind: rekey with fault $n exited $RC: $(cat "$T/out")"; break; }
		# marked as under way (SC_FEAT_REKEYING, 0x80): fsck refuses it
		if (($(sed -n 's/^features = //p' "$T/v/.stackcrypt.conf") & 0x80)); then
			[ $((n % 4)) = 1 ] &&
				expect $E_FAIL "stackcrypt rekey was stopped" \
					"$SC_BIN" fsck --passfile="$T/pw" "$T/v"
		fi
		expect $E_OK "" "$SC_BIN" rekey --passfile="$T/pw" "$T/v"
		expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
		# the modes and times too: a file is made under its own name, and
		# a kill between its data and its attributes is one of the steps
		[ $((n % 2)) = 1 ] && same_tree "$T/v" "$kind, killed at step $n" --passfile="$T/pw"
		check "$kind, killed at step $n: nothing left: $(ls -A "$T/v")" \
			bash -c "! ls -A '$T/v' | grep -q rekey"
		n=$((n + stride))
	done
	check "$kind: the kill loop reached the steps (got to $n)" test "$n" -gt 20
	echo "$kind: killed at one step in $stride, up to step $((n - 1))"
	rekey_after "$T/v" "$kind, the run with no fault"
	rm -rf "$T/pristine"
done

# ---- while a rekey is stopped, no other command opens the volume; any
# one slot's secret finishes it ----
new_source default
expect $E_OK "added slot 1" "$SC_BIN" key add --passfile="$T/pw" --new-keyfile="$T/key" "$T/v0"
SC_REKEY_FAULT=12 "$SC_BIN" rekey --passfile="$T/pw" --also-keyfile="$T/key" "$T/v0" >"$T/out" 2>&1 </dev/null
check "fault 12 killed the rekey (exit $?) after it marked the config" \
	test $(($(sed -n 's/^features = //p' "$T/v0/.stackcrypt.conf") & 0x80)) = 128
expect $E_FAIL "stackcrypt rekey was stopped" "$SC_BIN" fsck --passfile="$T/pw" "$T/v0"
expect $E_FAIL "run 'stackcrypt rekey $T/v0' to finish it" \
	"$SC_BIN" mount -f --passfile="$T/pw" "$T/v0" "$T/m"
expect $E_FAIL "under way" "$SC_BIN" key add --passfile="$T/pw" --new-keyfile="$T/key" "$T/v0"
expect $E_OK "going on with the rekey" "$SC_BIN" rekey --keyfile="$T/key" "$T/v0"
rekey_after "$T/v0" "resumed"
same_tree "$T/v0" "resumed, key file slot" --keyfile="$T/key"

# ---- docs/usage.md, "After a lost laptop": the slot removed, the key
# rotated; a config copy from before (a backup) opens the volume with the
# laptop's password until the rotation, and nothing after it ----
new_source default
v=$T/v0
expect $E_OK "added slot 1 (laptop)" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile="$T/pw2" --scrypt-n=1024 --label=laptop "$v"
expect $E_OK "added slot 2 (usb)" "$SC_BIN" key add --passfile="$T/pw" --new-keyfile="$T/key" \
	--label=usb "$v"
cp "$v/.stackcrypt.conf" "$T/backup.conf"
expect $E_OK "laptop" "$SC_BIN" key list "$v"
expect $E_OK "removed slot 1 (laptop)" "$SC_BIN" key remove --passfile="$T/pw" --slot=laptop "$v"
expect $E_OK "usb" "$SC_BIN" key list "$v"
check "lost laptop: key list no longer shows the slot: $(cat "$T/out")" \
	bash -c "! grep -q laptop '$T/out'"
expect $E_BADPASS "wrong password" "$SC_BIN" fsck --passfile="$T/pw2" "$v"
# thief BACKING: a copy of BACKING with the backup config, as the laptop's
# holder would have it
thief() {
	rm -rf "$T/thief"
	cp -a "$1" "$T/thief"
	cp "$T/backup.conf" "$T/thief/.stackcrypt.conf"
}
thief "$v"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw2" "$T/thief"
expect $E_OK "has a new master key; 2 key slots wrap it" \
	"$SC_BIN" rekey --passfile="$T/pw" --also-keyfile="$T/key" "$v"
rekey_after "$v" "lost laptop"
same_tree "$v" "lost laptop, usb key file slot" --keyfile="$T/key"
thief "$v"
# every header and name fails under the old key: no plaintext, and no mount
expect $E_FAIL "0 bytes (0.0 MiB) of plaintext" "$SC_BIN" fsck --passfile="$T/pw2" "$T/thief"
expect $E_CONFIG "cannot start the stack" "$SC_BIN" mount --passfile="$T/pw2" "$T/thief" "$T/m"
if is_mounted "$T/m"; then
	fail "lost laptop: the backup config mounted the rotated volume"
	fusermount3 -u "$T/m"
fi
rm -rf "$T/thief"

finish
