#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# gfapi_keys_test.sh - stackcrypt key list|add|remove over gluster://
# (issue #32), as tests/cli/t_keys.sh checks them over a directory: a
# format 3 volume made beside SRC gets a password, a key file and an
# Argon2id slot (format 4 from the first one), each of them mounts the
# volume through libgfapi and reads its files; a duplicate label, a wrong
# password, a full table, a tampered slot and the last slot are refused
# with their line and the config left as it was; a slot removed opens
# the volume no more; passwd changes one slot; two key commands at once:
# the second is refused while the first holds the config lock (taken
# through libgfapi).  Run by `tests/gluster/harness.sh --gfapi single
# aes-xts`; the volume's FUSE mount (DIRD) is used only to read and damage
# the config.
set -u
: "${SRC:?run me under tests/gluster/harness.sh --gfapi}" "${BACKING:?}"
# shellcheck source=../cli/lib.sh
. "$(dirname "$(realpath "$0")")/../cli/lib.sh"
# shellcheck source=gfapi_lib.sh
. "$(dirname "$(realpath "$0")")/gfapi_lib.sh"
new_keyfile "$T/key"
(umask 077; printf 'second pass\n' >"$T/pw2"; printf 'third pass\n' >"$T/pw3")

# readback SECRET-OPTION: mounts URLD/k with it and checks files a and b
readback() {
	local f
	sc_mount_fg "$URLD/k" "$T/m" "$1" "${M[@]}" || return 1
	for f in a b; do
		check "$f reads back with $1" cmp -s <(yes "$f" | head -c 5000) "$T/m/$f"
	done
	sc_umount "$T/m"
}

nv k || finish
fill k a b || finish
C="$DIRD/k/.stackcrypt.conf"
expect $E_OK "config format 3: one slot" "$SC_BIN" key list "$URLD/k"
expect $E_OK "from format 3 to 4" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile="$T/pw2" --label=phone --scrypt-n=1024 "$URLD/k"
expect $E_OK "added slot 2 (usb)" "$SC_BIN" key add --passfile="$T/pw2" \
	--new-keyfile="$T/key" --label=usb "$URLD/k"
expect $E_OK "added slot 3 (argon)" "$SC_BIN" key add --keyfile="$T/key" \
	--new-passfile="$T/pw3" --argon2-t=1 --argon2-m=8192 --label=argon "$URLD/k"
expect $E_OK "" "$SC_BIN" key list "$URLD/k"
check "key list shows 4 slots: $(cat "$T/out")" [ "$(grep -cE '^[0-9] ' "$T/out")" = 4 ]
check "the config is format 4" grep -qx 'format = 4' "$C"
for sec in --passfile="$T/pw" --passfile="$T/pw2" --keyfile="$T/key" --passfile="$T/pw3"; do
	readback "$sec"
done

# bad inputs leave the config as it was
cp "$C" "$T/before"
expect $E_FAIL "labelled 'phone' already" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile="$T/pw3" --label=phone "$URLD/k"
expect $E_BADPASS "wrong password" "$SC_BIN" key add --passfile="$T/wrong" \
	--new-passfile="$T/pw3" --label=x --scrypt-n=1024 "$URLD/k"
expect $E_FAIL "has no key slot 'tablet'" "$SC_BIN" key remove --passfile="$T/pw" \
	--slot=tablet "$URLD/k"
check "no bad input changed the config" cmp -s "$T/before" "$C"
# a slot's label changed behind our back, checksum recomputed: refused
grep -v '^checksum = ' "$T/before" | sed 's/^slot1.label = phone$/slot1.label = phony/' >"$T/edit"
echo "checksum = $(sha256sum "$T/edit" | cut -d' ' -f1)" >>"$T/edit"
cp "$T/edit" "$C"
expect $E_CONFIG "was tampered with" "$SC_BIN" key add --passfile="$T/pw" \
	--new-passfile="$T/pw3" --label=x --scrypt-n=1024 "$URLD/k"
expect $E_CONFIG "was tampered with" "$SC_BIN" mount --passfile="$T/pw2" "${M[@]}" \
	"$URLD/k" "$T/m"
cp "$T/before" "$C"

# two key commands at once: the second waits for nothing, it is refused
"$SC_BIN" key add --passfile="$T/pw" --label=slow --scrypt-n=1024 \
	--new-extpass="touch '$T/holding'; while [ -e '$T/holding' ]; do sleep 0.05; done; cat '$T/pw3'" \
	"$URLD/k" >"$T/first" 2>&1 &
first=$!
while [ ! -e "$T/holding" ] && kill -0 "$first" 2>/dev/null; do sleep 0.05; done
expect $E_FAIL "another stackcrypt command is changing the config of $URLD/k" \
	"$SC_BIN" key remove --passfile="$T/pw" --slot=usb "$URLD/k"
rm -f "$T/holding"
wait "$first"
check "the first key add went through: $(cat "$T/first")" grep -q "added slot 4 (slow)" "$T/first"

# a full table
for i in 5 6 7; do
	new_keyfile "$T/k$i"
	expect $E_OK "added slot $i" "$SC_BIN" key add --keyfile="$T/key" --new-keyfile="$T/k$i" \
		--label="k$i" "$URLD/k"
done
expect $E_FAIL "are full (8)" "$SC_BIN" key add --passfile="$T/pw" --new-passfile="$T/pw3" \
	--label=ninth "$URLD/k"

# remove: the slot opens no more, the others do; passwd changes one slot
expect $E_OK "removed slot 1" "$SC_BIN" key remove --passfile="$T/pw" --slot=phone "$URLD/k"
expect $E_BADPASS "wrong password" "$SC_BIN" fsck --passfile="$T/pw2" "$URLD/k"
for s in slow k5 k6 k7 usb argon; do
	expect $E_OK "removed slot" "$SC_BIN" key remove --passfile="$T/pw" --slot="$s" "$URLD/k"
done
expect $E_FAIL "the last key slot of $URLD/k" "$SC_BIN" key remove --passfile="$T/pw" \
	--slot=0 "$URLD/k"
expect $E_OK "password changed for $URLD/k (slot 0, password)" "$SC_BIN" passwd \
	--passfile="$T/pw" --new-passfile="$T/pw2" "$URLD/k"
readback --passfile="$T/pw2"
check "no temporary config left behind" \
	bash -c "[ -z \"\$(find '$DIRD/k' -name '.stackcrypt.conf.tmp-*')\" ]"

finish
