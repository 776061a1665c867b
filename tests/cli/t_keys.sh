#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# stackcrypt key list|add|remove (issue #32): a volume's key slots, on a
# local directory (tests/gluster/gfapi_keys_test.sh runs them over
# gluster://).  A format 3 config becomes format 4 when a slot is added,
# and not before; each unlocker mounts the volume and reads its file; every
# bad input (wrong password or key file, duplicate or malformed label, full
# table, last slot, unknown slot, tampered slot, a cost beyond the bounds,
# options of the wrong subcommand) is one line and a non-zero exit, and
# leaves the config as it was; a removed slot no longer opens the config,
# while a copy made before still does (docs/security.md); passwd changes
# one slot; a kill -9 at every step of a slot change (strace's SIGKILL at
# each system call of the atomic config write, and before it) leaves the
# old table or the new one; configs made by the build before slots
# (tests/cli/fixtures) open, list and upgrade.
. "$(dirname "$0")/lib.sh"

printf 'second pass\n' >"$T/pw2"
printf 'third pass\n' >"$T/pw3"
printf 'fourth pass\n' >"$T/pw4"
printf 'wrong horse\n' >"$T/wrong"
chmod 600 "$T"/pw*
new_keyfile "$T/key"
new_keyfile "$T/key2"
mkdir -p "$T/m"

# readback V SECRET-OPTION...: mounts V with the secret and checks its file
readback() {
	local v=$1
	shift
	sc_mount_fg "$v" "$T/m" "$@" || return 1
	check "$v reads back with $*" cmp -s "$T/hello" "$T/m/hello"
	sc_umount "$T/m"
	check "no error in the daemon's log ($*): $(cat "$T/daemon.log")" \
		bash -c "! grep -qi error '$T/daemon.log'"
}

# conf_edit SED-EXPR: the config $T/good (saved by the caller) edited, its
# checksum line recomputed, as someone who knows the format would.
conf_edit() {
	grep -v '^checksum = ' "$T/good" | sed "$1" >"$T/edit"
	echo "checksum = $(sha256sum "$T/edit" | cut -d' ' -f1)" >>"$T/edit"
	cp "$T/edit" "$C"
	check "edit '$1' changed the config" bash -c "! cmp -s '$T/good' '$C'"
}
# conf_flip KEY: one bit of the third hex digit of KEY's value flipped (by
# XOR: never a no-op), in $T/good, checksum recomputed.
conf_flip() {
	python3 - "$T/good" "$C" "$1" <<'PY'
import hashlib, sys
src, dst, key = sys.argv[1:]
out = []
for line in open(src).read().splitlines(keepends=True):
    if line.startswith("checksum = "):
        continue
    if line.startswith(key + " = "):
        at = len(key) + 3 + 2
        line = line[:at] + "%x" % (int(line[at], 16) ^ 1) + line[at + 1:]
    out.append(line)
text = "".join(out)
open(dst, "w").write(text + "checksum = " + hashlib.sha256(text.encode()).hexdigest() + "\n")
PY
	check "flip of $1 changed the config" bash -c "! cmp -s '$T/good' '$C'"
}

head -c 10000 /dev/urandom >"$T/hello"
new_volume "$T/v" || finish
V="$T/v"
C="$V/.stackcrypt.conf"
sc_mount_fg "$V" "$T/m" --passfile="$T/pw" || finish
cp "$T/hello" "$T/m/hello"
sc_umount "$T/m"

# ---- a format 3 config: one slot, named after its kind -----------------------------
expect $E_OK "password, scrypt N=1024" "$SC_BIN" key list "$V"
check "list names the one slot" grep -qE '^0 +password ' "$T/out"
check "list says the format" grep -q "config format 3: one slot" "$T/out"
check "the config is format 3" grep -qx 'format = 3' "$C"

# ---- add: the first one upgrades to format 4 ---------------------------------------
expect $E_OK "added slot 1 (phone) to $V: 2 key slots" "$SC_BIN" key add \
	--passfile="$T/pw" --new-passfile="$T/pw2" --label=phone --scrypt-n=1024 "$V"
check "add says the format changed" grep -q "from format 3 to 4" "$T/out"
check "the config is format 4" grep -qx 'format = 4' "$C"
expect $E_OK "added slot 2 (usb stick)" "$SC_BIN" key add --passfile="$T/pw2" \
	--new-keyfile="$T/key" --label="usb stick" "$V"
check "no second format note" bash -c "! grep -q 'from format' '$T/out'"
expect $E_OK "added slot 3 (slot3)" "$SC_BIN" key add --keyfile="$T/key" \
	--new-passfile="$T/pw3" --argon2-t=1 --argon2-m=8192 "$V"
expect $E_OK "" "$SC_BIN" key list "$V"
for want in '^0 +password .* password, scrypt N=1024 r=8 p=1$' \
	    '^1 +phone .* password, scrypt N=1024 r=8 p=1$' \
	    '^2 +usb stick .* key file$' '^3 +slot3 .* password, argon2id t=1 m=8192 p=1$'; do
	check "key list shows /$want/" grep -qE -- "$want" "$T/out"
done
check "key list has 4 slots" [ "$(grep -cE '^[0-9] ' "$T/out")" = 4 ]
expect $E_OK "key slot 3:  slot3: password, argon2id t=1 m=8192 p=1" "$SC_BIN" info "$V"
check "info says format 4" grep -qxF "format:      4 (of this config file)" "$T/out"
# every unlocker mounts the volume
for sec in --passfile="$T/pw" --passfile="$T/pw2" --keyfile="$T/key" --passfile="$T/pw3"; do
	readback "$V" "$sec"
	expect $E_OK "0 problems" "$SC_BIN" fsck "$sec" "$V"
done
expect $E_OK "0 problems" "$SC_BIN" fsck --masterkey="$T/mk" "$V"

# ---- bad inputs: one line, non-zero, the config unchanged -------------------------
cp "$C" "$T/before"
expect $E_BADPASS "wrong password" "$SC_BIN" key add --passfile="$T/wrong" \
	--new-passfile="$T/pw4" --label=x --scrypt-n=1024 "$V"
expect $E_BADPASS "wrong key file" "$SC_BIN" key add --keyfile="$T/key2" \
	--new-passfile="$T/pw4" --label=x --scrypt-n=1024 "$V"
expect $E_BADPASS "wrong password" "$SC_BIN" key remove --passfile="$T/wrong" --slot=phone "$V"
expect $E_FAIL "a slot of $V is labelled 'phone' already" "$SC_BIN" key add \
	--passfile="$T/pw" --new-passfile="$T/pw4" --label=phone "$V"
expect $E_USAGE "invalid label '123'" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile="$T/pw4" --label=123 "$V"
expect $E_USAGE "invalid label" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile="$T/pw4" --label=abcdefghijklmnopqrstuvwxyz0123456 "$V"
expect $E_USAGE "invalid label" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile="$T/pw4" --label=" lead" "$V"
expect $E_FAIL "has no key slot 'tablet'" "$SC_BIN" key remove --passfile="$T/pw" \
	--slot=tablet "$V"
expect $E_FAIL "has no key slot '7'" "$SC_BIN" key remove --passfile="$T/pw" --slot=7 "$V"
expect $E_USAGE "missing --slot" "$SC_BIN" key remove --passfile="$T/pw" "$V"
expect $E_USAGE "--slot is remove's" "$SC_BIN" key add --passfile="$T/pw" --slot=1 "$V"
expect $E_USAGE "remove takes --slot and a secret" "$SC_BIN" key remove --passfile="$T/pw" \
	--slot=1 --label=x "$V"
expect $E_USAGE "list takes no option" "$SC_BIN" key list --passfile="$T/pw" "$V"
expect $E_USAGE "unknown subcommand 'delete'" "$SC_BIN" key delete "$V"
expect $E_USAGE "missing subcommand" "$SC_BIN" key
expect $E_USAGE "missing BACKING" "$SC_BIN" key list
expect $E_USAGE "unknown KDF 'pbkdf2'" "$SC_BIN" key add --kdf=pbkdf2 "$V"
expect $E_USAGE "name two KDFs" "$SC_BIN" key add --scrypt-n=1024 --argon2-t=1 "$V"
expect $E_USAGE "--argon2-t and --argon2-m do not apply to --kdf=scrypt" "$SC_BIN" key add \
	--kdf=scrypt --argon2-m=8192 "$V"
expect $E_USAGE "invalid --argon2-m '100'" "$SC_BIN" key add --argon2-m=100 "$V"
expect $E_USAGE "invalid --argon2-t '17'" "$SC_BIN" key add --argon2-t=17 "$V"
expect $E_USAGE "more work than 4 passes" "$SC_BIN" key add --argon2-t=5 --argon2-m=4194304 "$V"
expect $E_USAGE "a key file has no KDF" "$SC_BIN" key add --new-keyfile="$T/key2" \
	--scrypt-n=1024 "$V"
expect $E_USAGE "password on the command line is refused" "$SC_BIN" key add --new-password=x "$V"
expect $E_SECRET "empty password refused" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile=/dev/null --scrypt-n=1024 "$V"
expect $E_CONFIG "no stackcrypt volume" "$SC_BIN" key list "$T"
expect $E_CONFIG "no stackcrypt volume" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile="$T/pw4" "$T"
expect $E_BACKING "" "$SC_BIN" key list "$T/nowhere"
check "no bad input changed the config" cmp -s "$T/before" "$C"
check "no temporary file left" [ -z "$(find "$V" -maxdepth 1 -name '.stackcrypt.conf.tmp-*')" ]

# ---- a full table: 8 slots, the ninth refused ---------------------------------------
for i in 4 5 6 7; do
	new_keyfile "$T/k$i"
	expect $E_OK "added slot $i (k$i)" "$SC_BIN" key add --passfile="$T/pw" \
		--new-keyfile="$T/k$i" --label="k$i" "$V"
done
expect $E_OK "" "$SC_BIN" key list "$V"
check "key list has 8 slots" [ "$(grep -cE '^[0-9] ' "$T/out")" = 8 ]
check "the full config fits 4096 bytes ($(stat -c %s "$C"))" [ "$(stat -c %s "$C")" -le 4096 ]
cp "$C" "$T/full"
expect $E_FAIL "the key slots of $V are full (8): remove one first" "$SC_BIN" key add \
	--passfile="$T/pw" --new-passfile="$T/pw4" --label=ninth "$V"
check "a full table refused left the config" cmp -s "$T/full" "$C"
readback "$V" --keyfile="$T/k7"

# ---- tampered slots: refused with a clear line --------------------------------------
# slot 1's label changed: the table no longer matches its MAC, whichever slot opens it
cp "$C" "$T/good"
conf_edit 's/^slot1.label = phone$/slot1.label = phony/'
for sec in --passfile="$T/pw" --passfile="$T/pw2" --keyfile="$T/key"; do
	expect $E_CONFIG "was tampered with: slot" "$SC_BIN" fsck "$sec" "$V"
	check "names the MAC" grep -q "fields or key slots do not match its MAC" "$T/out"
done
expect $E_CONFIG "was tampered with" "$SC_BIN" key remove --passfile="$T/pw" --slot=k7 "$V"
expect $E_CONFIG "was tampered with" "$SC_BIN" mount --passfile="$T/pw" "$V" "$T/m"
check "a refused mount mounted nothing" bash -c "! grep -qF ' $T/m ' /proc/mounts"
# slot 1's wrapped key changed: the password of slot 1 names its slot
conf_flip slot1.wrapped_key
expect $E_CONFIG "slot 1 (phone) takes the password, but its fields do not match" \
	"$SC_BIN" fsck --passfile="$T/pw2" "$V"
expect $E_CONFIG "was tampered with" "$SC_BIN" fsck --passfile="$T/pw" "$V"
# a slot removed from the text, and one moved to another number
conf_edit '/^slot2\./d'
expect $E_CONFIG "was tampered with" "$SC_BIN" fsck --passfile="$T/pw" "$V"
conf_edit 's/^slot2\./slot2x./; s/^slot7\./slot2./; s/^slot2x\./slot7./'
expect $E_CONFIG "was tampered with" "$SC_BIN" fsck --passfile="$T/pw" "$V"
# a cost beyond the bounds: refused before the KDF runs (no 64 GiB allocated)
conf_edit 's/^slot3.kdf = argon2id t=1 m=8192 p=1$/slot3.kdf = argon2id t=16 m=4194304 p=1/'
expect $E_CONFIG "more work than 4 passes over 4 GiB" "$SC_BIN" fsck --passfile="$T/pw3" "$V"
expect $E_CONFIG "more work than" "$SC_BIN" key list "$V"
conf_edit 's/^slot3.kdf = argon2id t=1 m=8192 p=1$/slot3.kdf = argon2id t=1 m=8388608 p=1/'
expect $E_CONFIG "argon2id m not in 8 MiB..4 GiB" "$SC_BIN" info "$V"
conf_edit 's/^slot1.kdf = scrypt N=1024 r=8 p=1$/slot1.kdf = scrypt N=16777216 r=32 p=1/'
expect $E_CONFIG "more than 16 GiB" "$SC_BIN" fsck --passfile="$T/pw2" "$V"
cp "$T/good" "$C"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"

# ---- remove ----------------------------------------------------------------------------
cp "$C" "$T/old.conf"
expect $E_OK "removed slot 1 (phone) from $V: 7 key slots left" "$SC_BIN" key remove \
	--passfile="$T/pw" --slot=phone "$V"
expect $E_BADPASS "wrong password" "$SC_BIN" fsck --passfile="$T/pw2" "$V"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
# every remaining unlocker still mounts it
for sec in --passfile="$T/pw" --keyfile="$T/key" --passfile="$T/pw3" --keyfile="$T/k4" \
	   --keyfile="$T/k5" --keyfile="$T/k6" --keyfile="$T/k7"; do
	readback "$V" "$sec"
done
# revocation is of this config: a copy made before still opens with the removed slot
cp "$C" "$T/new.conf"
cp "$T/old.conf" "$C"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw2" "$V"
cp "$T/new.conf" "$C"
# by number, and with the very secret of the slot removed
expect $E_OK "removed slot 3" "$SC_BIN" key remove --passfile="$T/pw3" --slot=3 "$V"
expect $E_BADPASS "wrong password" "$SC_BIN" fsck --passfile="$T/pw3" "$V"
# with the master key (format 4: its MAC vouches for the table)
expect $E_OK "removed slot 4" "$SC_BIN" key remove --masterkey="$T/mk" --slot=k4 "$V"
for k in 5 6 7; do
	expect $E_OK "removed slot $k" "$SC_BIN" key remove --keyfile="$T/key" --slot="k$k" "$V"
done
expect $E_OK "removed slot 2 (usb stick) from $V: 1 key slot left" "$SC_BIN" key remove \
	--passfile="$T/pw" --slot="usb stick" "$V"
cp "$C" "$T/last"
expect $E_FAIL "refusing to remove slot 0 (password), the last key slot" "$SC_BIN" key remove \
	--passfile="$T/pw" --slot=0 "$V"
check "the last slot stays" cmp -s "$T/last" "$C"
readback "$V" --passfile="$T/pw"

# ---- passwd changes one slot -------------------------------------------------------
expect $E_OK "added slot 1 (phone)" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile="$T/pw2" --label=phone --scrypt-n=1024 "$V"
expect $E_OK "password changed for $V (slot 1, phone)" "$SC_BIN" passwd \
	--passfile="$T/pw2" --new-passfile="$T/pw4" "$V"
expect $E_BADPASS "wrong password" "$SC_BIN" fsck --passfile="$T/pw2" "$V"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw4" "$V"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
expect $E_OK "scrypt N=1024" "$SC_BIN" key list "$V"
check "passwd kept the slot's cost and label" grep -qE '^1 +phone .*scrypt N=1024 r=8 p=1$' "$T/out"
# another slot by --slot, unlocked with this one's password; to a key file
expect $E_OK "key file changed for $V (slot 0, password)" "$SC_BIN" passwd \
	--passfile="$T/pw4" --slot=0 --new-keyfile="$T/key2" "$V"
readback "$V" --keyfile="$T/key2"
expect $E_USAGE "has 2 key slots: name the one to change with --slot" "$SC_BIN" passwd \
	--masterkey="$T/mk" --new-passfile="$T/pw" "$V"
expect $E_OK "password changed for $V (slot 0" "$SC_BIN" passwd --masterkey="$T/mk" \
	--slot=password --new-passfile="$T/pw" --scrypt-n=1024 "$V"
expect $E_FAIL "has no key slot 'nope'" "$SC_BIN" passwd --passfile="$T/pw" --slot=nope \
	--new-passfile="$T/pw" "$V"
readback "$V" --passfile="$T/pw"
readback "$V" --passfile="$T/pw4"

# ---- kill -9 at every step of a slot change ------------------------------------------
# The change is one atomic replace of the config (fs/backing/dir.c): a
# temporary file created and written, fsynced, renamed over the config, the
# directory fsynced.  strace kills the command at each of those system
# calls in turn (and --new-extpass kills it before any of them, while the
# secret is read); after each kill the config is the old table or the new,
# and the secrets of that table open it.
# kill_at WHAT CALLS WHEN CMD...: runs CMD under strace, SIGKILL at the
# WHEN-th of CALLS; checks it died so
kill_at() {
	local what=$1 calls=$2 when=$3 rc
	shift 3
	CHECKS=$((CHECKS + 1))
	{ strace -f -o /dev/null -e trace="$calls" -e inject="$calls":signal=SIGKILL:when="$when" \
		"$@" >"$T/out" 2>&1 & wait $!; } 2>/dev/null
	rc=$?
	[ $rc -eq 137 ] || fail "$what: killed at $calls:$when should die of SIGKILL, exit $rc: $(cat "$T/out")"
}
# tmp_left: whether the killed write left its temporary file
tmp_left() { [ -n "$(find "$V" -maxdepth 1 -name '.stackcrypt.conf.tmp-*')" ]; }

if command -v strace >/dev/null; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	# the steps, and which table each leaves: old (with its temporary file) or new
	steps=("write:1:old" "fsync:1:old" "rename,renameat,renameat2:1:old" "fsync:2:new")
	for op in add remove; do
		# (remove takes away the slot add's whole run made)
		cp "$C" "$T/base"
		if [ $op = add ]; then
			cmd=("$SC_BIN" key add --passfile="$T/pw" --new-passfile="$T/pw3" --label=crash \
				--scrypt-n=1024 "$V")
		else
			cmd=("$SC_BIN" key remove --passfile="$T/pw" --slot=crash "$V")
		fi
		# while the new secret is read (its command kills us): nothing written
		if [ $op = add ]; then
			CHECKS=$((CHECKS + 1))
			{ "$SC_BIN" key add --passfile="$T/pw" --new-extpass='kill -9 $PPID' \
				--label=crash --scrypt-n=1024 "$V" >"$T/out" 2>&1 & wait $!; } 2>/dev/null
			rc=$?
			[ $rc -eq 137 ] || fail "add killed by its extpass: exit $rc: $(cat "$T/out")"
			check "add killed before the write: the old table" cmp -s "$T/base" "$C"
		fi
		for step in "${steps[@]}"; do
			calls=${step%:*:*}
			rest=${step#"$calls":}
			when=${rest%:*}
			want=${rest#*:}
			cp "$T/base" "$C"
			kill_at "$op" "$calls" "$when" "${cmd[@]}"
			if [ "$want" = old ]; then
				check "$op killed at $calls:$when: the old table" cmp -s "$T/base" "$C"
				check "$op killed at $calls:$when: its temporary file is left" tmp_left
			else
				check "$op killed at $calls:$when: the new table" bash -c "! cmp -s '$T/base' '$C'"
			fi
			# the table it left opens with its own secrets, and says which it is
			expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
			expect $E_OK "" "$SC_BIN" key list "$V"
			has=$(grep -cE '^[0-9] +crash ' "$T/out")
			if { [ $op = add ] && [ "$want" = new ]; } || { [ $op = remove ] && [ "$want" = old ]; }; then
				check "$op at $calls:$when: the table has the slot" [ "$has" = 1 ]
				expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw3" "$V"
			else
				check "$op at $calls:$when: the table lacks the slot" [ "$has" = 0 ]
				expect $E_BADPASS "wrong password" "$SC_BIN" fsck --passfile="$T/pw3" "$V"
			fi
		done
		# run to its end, the next write sweeps what the killed ones left
		cp "$T/base" "$C"
		expect $E_OK "$([ $op = add ] && echo added || echo removed) slot" "${cmd[@]}"
		check "$op: no temporary file left after a whole run" \
			[ -z "$(find "$V" -maxdepth 1 -name '.stackcrypt.conf.tmp-*')" ]
	done
	ASAN_OPTIONS=${ASAN_OPTIONS%detect_leaks=0}
	ASAN_OPTIONS=${ASAN_OPTIONS%:}
else
	fail "strace missing: the killed slot changes are untested"
fi
readback "$V" --passfile="$T/pw"

# ---- configs made by the build before slots (format 3) ------------------------------
# tests/cli/fixtures: made with that build's init (aes-gcm, names in the clear,
# password "correct horse"; a key file volume too), each with a file "hello"
# of 1000 bytes whose sha256 is beside it.  They open as they are, list,
# and become format 4 only when a slot is added.
FIX="$CLI_DIR/fixtures"
for kind in password keyfile; do
	o="$T/old-$kind"
	mkdir -p "$o"
	cp "$FIX/v3-$kind.conf" "$o/.stackcrypt.conf"
	cp "$FIX/v3-$kind.hello" "$o/hello"
	chmod 600 "$o/.stackcrypt.conf"
	if [ $kind = password ]; then sec=(--passfile="$T/pw"); else sec=(--keyfile="$FIX/v3-keyfile.key"); fi
	expect $E_OK "format:      3 (of this config file)" "$SC_BIN" info "$o"
	expect $E_OK "0 problems" "$SC_BIN" fsck "${sec[@]}" "$o"
	expect $E_OK "$kind" "$SC_BIN" key list "$o"
	check "the old config is untouched by reading it" cmp -s "$FIX/v3-$kind.conf" "$o/.stackcrypt.conf"
	sc_mount_fg "$o" "$T/m" "${sec[@]}" || continue
	check "$kind: the old volume's file reads back" \
		[ "$(sha256sum <"$T/m/hello" | cut -d' ' -f1)" = "$(cat "$FIX/v3-hello.sha256")" ]
	sc_umount "$T/m"
	expect $E_OK "from format 3 to 4" "$SC_BIN" key add "${sec[@]}" --new-passfile="$T/pw2" \
		--label=added --scrypt-n=1024 "$o"
	for s in "${sec[@]}" --passfile="$T/pw2"; do
		sc_mount_fg "$o" "$T/m" "$s" || continue
		check "$kind upgraded: reads back with $s" \
			[ "$(sha256sum <"$T/m/hello" | cut -d' ' -f1)" = "$(cat "$FIX/v3-hello.sha256")" ]
		sc_umount "$T/m"
	done
	expect $E_OK "slot 0 ($kind)" "$SC_BIN" key remove --passfile="$T/pw2" --slot="$kind" "$o"
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw2" "$o"
done
# with the master key, an old config cannot be upgraded (its secret must be wrapped anew)
o="$T/old-mk"
mkdir -p "$o"
cp "$FIX/v3-password.conf" "$o/.stackcrypt.conf"
cp "$FIX/v3-password.hello" "$o/hello"
expect $E_USAGE "unlock with it, not with the master key" "$SC_BIN" key add \
	--masterkey="$FIX/v3-password.mk" --new-passfile="$T/pw2" --scrypt-n=1024 "$o"
check "the refused upgrade left the old config" cmp -s "$FIX/v3-password.conf" "$o/.stackcrypt.conf"

# ---- the default KDF of a new password slot: Argon2id, its cost measured here -------
new_volume "$T/w" || finish
expect $E_OK "added slot 1 (measured)" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile="$T/pw2" --label=measured "$T/w"
expect $E_OK "" "$SC_BIN" key list "$T/w"
check "a measured Argon2id cost: $(grep measured "$T/out")" \
	grep -qE '^1 +measured .* password, argon2id t=[0-9]+ m=[0-9]+ p=1$' "$T/out"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw2" "$T/w"
# init with Argon2id, or a label of its own, writes format 4; plain scrypt 3
mkdir "$T/w4"
expect $E_OK "config format 4" "$SC_BIN" init --kdf=argon2id --argon2-t=1 --argon2-m=8192 \
	--label=first --cipher=aes-xts --plaintext-names --passfile="$T/pw" "$T/w4"
expect $E_OK "key slot 0:  first: password, argon2id t=1 m=8192 p=1" "$SC_BIN" info "$T/w4"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/w4"
mkdir "$T/w5"
expect $E_OK "config format 4" "$SC_BIN" init --label=desk --keyfile="$T/key" \
	--cipher=aes-xts --plaintext-names "$T/w5"
expect $E_OK "key slot 0:  desk: key file" "$SC_BIN" info "$T/w5"
expect $E_USAGE "a key file has no KDF" "$SC_BIN" init --scrypt-n=1024 --keyfile="$T/key" "$T/w6"

# ---- help ------------------------------------------------------------------------------
expect $E_OK "" "$SC_BIN" key --help
for opt in --passfile --extpass --keyfile --masterkey --new-passfile --new-extpass \
	   --new-keyfile --label --slot --kdf --scrypt-n --argon2-t --argon2-m; do
	check "key --help mentions $opt" grep -q -- "$opt" "$T/out"
done
expect $E_OK "Usage: stackcrypt key list" "$SC_BIN" key add --help

finish
