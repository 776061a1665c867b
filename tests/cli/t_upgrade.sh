#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# stackcrypt upgrade (issue #29, docs/format.md 11.12): a default volume
# (bare init: aes-gcm, bound encrypted names) converted into an integrity
# volume, offline, by rekey's copy through two stacks with the same master
# key.  The tree: many files in nested directories, long names, symlinks
# (one with a long target), files with holes (in the middle, at the end),
# empty files, files around the unit boundaries, megabytes of random data,
# extended attributes, odd modes and times, hard links (a file with three
# names in two directories: each later name a link through the new stack,
# which writes its binding record, format.md 11.5).  After the upgrade: the config
# has 0x10 and not 0x40, fsck is clean, the plaintext, modes, times, links
# and xattrs equal the source's, the master key still opens it (unchanged),
# no rekey state or directory is left, this client's freshness record is
# the new volume's and a mount takes it without a notice; then the
# integrity checks fire on it: two backing files swapped, one cut to its
# bare header, and one put back from the volume before the upgrade (a
# version 1 file) are EIO, logged, and named by fsck (exit 1); the whole
# backing put back from before the upgrade is refused by this client's
# mount and named by its fsck (it holds the volume's freshness record,
# which only an integrity volume makes), and --allow-rollback accepts it.  Refusals,
# each one line, nothing changed: a mounted volume, one whose config
# another command holds, a wrong password, aes-xts, names in
# the clear, an integrity volume already, --masterkey on a format 3
# config, bad command lines, an upgrade while a rekey is under way and a
# rekey (mount, fsck, key) while an upgrade is.  A volume whose last mount
# was killed -9 during an append is upgraded with every byte written.
# Last, a kill -9 at every step (SC_REKEY_FAULT=N, rekey's step hook: the
# Nth step, no timing): while the config carries 0x40 no mount or fsck
# opens the volume, saying to run upgrade; a second run finishes it and
# fsck is clean at every step, and at one step in three the tree equals the
# source's.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/m"
SD=$XDG_STATE_HOME/stackcrypt
(umask 077; printf 'wrong horse\n' >"$T/wrong")
new_keyfile "$T/key"

features() { sed -n 's/^features = //p' "$1/.stackcrypt.conf"; }

# fill DIR [small]: the tree the volume holds (a plain directory).
fill() {
	local d=$1 long i n
	long=$(printf 'n%.0s' $(seq 200))
	mkdir -p "$d/a/b/c/d/e" "$d/$long.d/sub"
	head -c 70000 /dev/urandom >"$d/a/b/c/d/e/deep"
	head -c 5000 /dev/urandom >"$d/$long.d/sub/inlong"
	echo tiny >"$d/$long"
	ln -s "$(printf 't%.0s' $(seq 900))/x" "$d/longlink"
	ln -s a/b/c/d/e/deep "$d/link"
	ln -s "../../a" "$d/$long.d/sub/up"
	: >"$d/empty"
	: >"$d/a/b/empty2"
	truncate -s 3M "$d/sparse"	# a hole, data in its middle
	printf 'middle' | dd of="$d/sparse" bs=1 seek=1500000 conv=notrunc status=none
	head -c 5000 /dev/urandom >"$d/a/tailhole"
	truncate -s 300000 "$d/a/tailhole"	# a hole at the end
	setfattr -n user.colour -v blue "$d/a/b/c/d/e/deep"
	ln "$d/a/tailhole" "$d/a/b/tailhole2"
	ln "$d/a/tailhole" "$d/tailhole3"
	chmod 0751 "$d/a/b"
	[ "${2:-}" = small ] && return
	head -c 4000000 /dev/urandom >"$d/a/big"
	for n in 15 4095 4096 4097 8191 8192 8193 65537; do
		head -c $n /dev/urandom >"$d/a/b/sz$n"
	done
	# many files, twenty to a directory (so that a directory's size, which
	# tree_listing compares, is one block in the backing as in the source)
	for i in $(seq 1 120); do
		mkdir -p "$d/a/b/c/m$((i % 6))"
		head -c $((i * 97)) /dev/urandom >"$d/a/b/c/m$((i % 6))/many$i"
	done
	chmod 0400 "$d/a/b/sz15"
	touch -d '2001-02-03 04:05:06' "$d/a/b/sz4096"
}

# new_source [small]: a default volume $T/v0 (bare init) filled from $T/src
# (its listing in $T/want), its master key in $T/mk.
new_source() {
	rm -rf "$T/v0" "$T/src" "$SD" "$T/mk"
	mkdir -p "$T/v0" "$T/src"
	(umask 077; printf 'correct horse\n' >"$T/pw")
	"$SC_BIN" init --scrypt-n=1024 --passfile="$T/pw" --save-masterkey="$T/mk" "$T/v0" \
		>"$T/init.out" 2>&1 || { fail "init: $(cat "$T/init.out")"; finish; }
	check "bare init makes aes-gcm with bound names (0xe): $(features "$T/v0")" \
		test "$(features "$T/v0")" = 0xe
	fill "$T/src" "${1:-}"
	sc_mount_fg "$T/v0" "$T/m" --passfile="$T/pw" || finish
	cp -a "$T/src/." "$T/m/"
	touch -d '2001-02-03 04:05:06' "$T/m/a" "$T/src/a"	# after its entries were made
	sc_umount "$T/m"
	tree_listing "$T/src" >"$T/want"
}

# upgraded BACKING WHAT [nomount]: the checks that follow every finished upgrade.
upgraded() {
	local b=$1 what=$2
	check "$what: the config has 0x10 and 0x100, not 0x40: $(features "$b")" test "$(features "$b")" = 0x11e
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$b"
	check "$what: no rekey state or directory left: $(ls -A "$b")" \
		bash -c "! ls -A '$b' | grep -q rekey"
	check "$what: one freshness record, none staged: $(ls -A "$SD" 2>&1 | tr '\n' ' ')" \
		bash -c "[ \$(ls -A '$SD' | wc -l) = 1 ] && ls '$SD' | grep -q '\\.state\$'"
	[ "${3:-}" = nomount ] && return
	same_tree "$b" "$what" --passfile="$T/pw"
	check "$what: the record opens, kept, no notice: $(cat "$T/daemon.log")" \
		bash -c "! grep -qi -e 'no freshness record' -e warning '$T/daemon.log'"
	expect $E_OK "0 problems" "$SC_BIN" fsck --masterkey="$T/mk" "$b"
}

# ---- refusals: one line, nothing changed ----
expect $E_USAGE "BACKING" "$SC_BIN" upgrade
expect $E_USAGE "unknown option '--cipher'" "$SC_BIN" upgrade --cipher=aes-xts "$T"
mkdir -p "$T/notvol"
expect $E_CONFIG "" "$SC_BIN" upgrade --passfile=/dev/null "$T/notvol"
check "a directory that is no volume: one line: $(cat "$T/out")" test "$(wc -l <"$T/out")" = 1
new_volume "$T/xts" --cipher=aes-xts --encrypt-names || finish
new_volume "$T/clear" --cipher=aes-gcm --plaintext-names || finish
new_volume "$T/integ" --cipher=aes-gcm --encrypt-names --integrity || finish
for v in xts clear; do
	cp "$T/$v/.stackcrypt.conf" "$T/conf.before"
	expect $E_FAIL "integrity needs cipher aes-gcm and encrypted names: make a new volume with 'stackcrypt init --integrity'" \
		"$SC_BIN" upgrade --passfile="$T/pw" "$T/$v"
	check "$v: one line: $(cat "$T/out")" test "$(wc -l <"$T/out")" = 1
	check "$v: the config unchanged" cmp -s "$T/conf.before" "$T/$v/.stackcrypt.conf"
done
expect $E_FAIL "is an integrity volume already" "$SC_BIN" upgrade --passfile="$T/pw" "$T/integ"
rm -rf "$T/xts" "$T/clear" "$T/integ" "$T/notvol"

new_source
cp "$T/v0/.stackcrypt.conf" "$T/conf.before"
expect $E_BADPASS "" "$SC_BIN" upgrade --passfile="$T/wrong" "$T/v0"
expect $E_SECRET "not with the master key" "$SC_BIN" upgrade --masterkey="$T/mk" "$T/v0"
sc_mount_fg "$T/v0" "$T/m" --passfile="$T/pw" || finish
expect $E_BACKING "is mounted" "$SC_BIN" upgrade --passfile="$T/pw" "$T/v0"
sc_umount "$T/m"
check "the refusals left the config alone" cmp -s "$T/conf.before" "$T/v0/.stackcrypt.conf"
check "the refusals left no rekey state or directory: $(ls -A "$T/v0")" \
	bash -c "! ls -A '$T/v0' | grep -q rekey"
sc_mount_fg "$T/v0" "$T/m" --passfile="$T/pw" || finish
backing_map "$T/m" "$T/v0" a/b/sz65537
OLD65537=$T/before${BK[a/b/sz65537]#"$T/v0"}
sc_umount "$T/m"
cp -a "$T/v0" "$T/before"		# the volume before the upgrade
# the config lock held by another command (a passwd, on a copy)
cp -a "$T/v0" "$T/locked"
passwd_lock_race "$T/locked" --new-keyfile="$T/key" "key file changed" \
	upgrade --passfile="$T/pw" "$T/locked"
rm -rf "$T/locked"

# ---- a rekey under way refuses an upgrade; an upgrade under way refuses all else ----
cp -a "$T/v0" "$T/v"
SC_REKEY_FAULT=2 "$SC_BIN" rekey --passfile="$T/pw" "$T/v" >"$T/out" 2>&1 </dev/null
check "fault 2 stopped the rekey after it marked the config: $(features "$T/v")" \
	test $(($(features "$T/v") & 0x80)) = 128
expect $E_FAIL "run 'stackcrypt rekey $T/v' to finish it" \
	"$SC_BIN" upgrade --passfile="$T/pw" "$T/v"
rm -rf "$T/v"
cp -a "$T/v0" "$T/v"
SC_REKEY_FAULT=2 "$SC_BIN" upgrade --passfile="$T/pw" "$T/v" >"$T/out" 2>&1 </dev/null
check "fault 2 stopped the upgrade after it marked the config: $(features "$T/v")" \
	test "$(features "$T/v")" = 0x4e
for c in "mount -f --passfile=$T/pw $T/v $T/m" "fsck --passfile=$T/pw $T/v" \
	"rekey --passfile=$T/pw $T/v" "key add --passfile=$T/pw --new-keyfile=$T/key $T/v"; do
	# shellcheck disable=SC2086  # a command line
	expect $E_FAIL "run 'stackcrypt upgrade $T/v' to finish it" "$SC_BIN" $c
	check "under way: $c refused in one line: $(cat "$T/out")" \
		test "$(grep -vc 'warning:' "$T/out")" = 1
done
check "under way: no mount came up" bash -c "! grep -q ' $T/m ' /proc/mounts"
expect $E_OK "upgrade:     under way, stopped" "$SC_BIN" info "$T/v"
expect $E_OK "going on with the upgrade" "$SC_BIN" upgrade --passfile="$T/pw" "$T/v"
upgraded "$T/v" "resumed"
rm -rf "$T/v" "$SD"

# ---- the upgrade ----
expect $E_OK "is an integrity volume now" "$SC_BIN" upgrade --passfile="$T/pw" "$T/v0"
upgraded "$T/v0" "upgraded"
expect $E_FAIL "is an integrity volume already" "$SC_BIN" upgrade --passfile="$T/pw" "$T/v0"

# ---- the integrity checks fire on the upgraded volume ----
sc_mount_fg "$T/v0" "$T/m" --passfile="$T/pw" || finish
backing_map "$T/m" "$T/v0" a/b/sz4097 a/b/sz8192 a/big a/b/sz65537 a/b/c/d/e/deep
sc_umount "$T/m"
mv "${BK[a/b/sz4097]}" "$T/swap" && mv "${BK[a/b/sz8192]}" "${BK[a/b/sz4097]}" &&
	mv "$T/swap" "${BK[a/b/sz8192]}"
truncate -s 88 "${BK[a/big]}"			# cut to its bare header
cp "$OLD65537" "${BK[a/b/sz65537]}" ||	# put back from before the upgrade
	fail "no file $OLD65537"
sc_mount_fg "$T/v0" "$T/m" --passfile="$T/pw" || finish
for f in a/b/sz4097 a/b/sz8192 a/big a/b/sz65537; do
	check "tampered $f is EIO" bash -c "! cat '$T/m/$f' >/dev/null 2>&1"
done
check "an untouched file reads" cmp -s "$T/m/a/b/c/d/e/deep" "$T/src/a/b/c/d/e/deep"
sc_umount "$T/m"
TAMPERED=("a/b/sz4097|bound to another entry" "a/b/sz8192|bound to another entry"
	"a/big|cut or extended" "a/b/sz65537|default volume")
for c in "${TAMPERED[@]}"; do
	IFS='|' read -r f cause <<<"$c"
	check "the mount logs $f ($cause): $(cat "$T/daemon.log")" \
		grep -q -- "/m/$f: .*$cause" "$T/daemon.log"
done
expect $E_FAIL "bound to another entry" "$SC_BIN" fsck --passfile="$T/pw" "$T/v0"
for c in "${TAMPERED[@]}"; do
	IFS='|' read -r f cause <<<"$c"
	check "fsck names $f ($cause): $(cat "$T/out")" \
		grep -q -- "$cause.*(in the mount: /$f)" "$T/out"
done
# the whole backing put back from before the upgrade, config included: a
# default volume again, refused by this client, which holds its record
rm -rf "$T/v0" && cp -a "$T/before" "$T/v0"
expect $E_FAIL "put back from before 'stackcrypt upgrade'" "$SC_BIN" mount --passfile="$T/pw" \
	"$T/v0" "$T/m"
check "refused: not mounted" bash -c "! grep -q ' $T/m ' /proc/mounts"
expect $E_FAIL "put back from before 'stackcrypt upgrade'" "$SC_BIN" fsck --passfile="$T/pw" "$T/v0"
expect $E_OK "accepted (--allow-rollback)" "$SC_BIN" fsck --allow-rollback --passfile="$T/pw" "$T/v0"
sc_mount_fg "$T/v0" "$T/m" --passfile="$T/pw" --allow-rollback || finish
check "--allow-rollback: the old tree reads" cmp -s "$T/m/a/b/c/d/e/deep" "$T/src/a/b/c/d/e/deep"
sc_umount "$T/m"
check "--allow-rollback: one warning: $(cat "$T/daemon.log")" \
	grep -q "was an integrity volume on this machine .*accepted (--allow-rollback)" "$T/daemon.log"
rm -rf "$T/v0" "$T/before" "$SD"

# ---- the last mount killed -9 while a file was appended to ----
# The old stack opens the volume's journal as a mount does (its records
# applied, a torn unit put back), so the upgraded file holds every byte
# written before the kill.
new_source small
append_killed "$T/v0" a/b/c/d/e/deep
expect $E_OK "is an integrity volume now" "$SC_BIN" upgrade --passfile="$T/pw" "$T/v0"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v0"
append_kept "$T/v0" a/b/c/d/e/deep upgraded
rm -rf "$T/v0" "$SD"

# ---- a kill -9 at every step, then a second run finishes it ----
new_source small
cp -a "$T/v0" "$T/pristine"
# killed_at N (lib.sh): $T/pristine (no record) upgraded in $T/v, killed at step N
n=1
while killed_at $n; do
	if (($(features "$T/v") & 0x40)); then
		expect $E_FAIL "run 'stackcrypt upgrade $T/v' to finish it" \
			"$SC_BIN" mount -f --passfile="$T/pw" "$T/v" "$T/m"
		check "killed at step $n: no mount came up" bash -c "! grep -q ' $T/m ' /proc/mounts"
		expect $E_FAIL "stackcrypt upgrade was stopped" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
	fi
	expect $E_OK "" "$SC_BIN" upgrade --passfile="$T/pw" "$T/v"
	# the tree compared through a mount at one step in three, as
	# cli-rekey_integrity does (CI time); config, fsck and record at each
	if ((n % 3 == 0)); then
		upgraded "$T/v" "killed at step $n"
	else
		upgraded "$T/v" "killed at step $n" nomount
	fi
	n=$((n + 1))
done
check "the kill loop reached the steps (got to $n)" test "$n" -gt 20
echo "killed at every step, up to step $((n - 1))"
upgraded "$T/v" "the run with no fault"

finish
