#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The unit tree (init --integrity --unit-tree, feature 0x20, docs/format.md
# 11.10), against an integrity volume without it.  One unit of a file is
# put back from an older version of the same file (its old stored bytes:
# nonce, ciphertext and tag) in a small file (unit 1 of 4) and in a large
# one (unit 70 of 101, past the 64 units of a tree node): without the
# tree each reads, with the old unit's plaintext; with it each read is
# EIO, the daemon logs one line naming the file and the cause, and fsck
# exits 1 naming both.  A unit zeroed behind the mount in a file that has
# a hole is EIO too, while the hole reads as zeros.  Then, on a tree
# volume: random writes, truncates (shrink, extend, holes), punched holes
# and appends across remounts read back as a model of them and fsck is
# clean; a kill -9 while files are written inside and appended to (the
# dirty table, format.md 11.8) leaves files fsck notes (exit 0), the next
# mount accepts (one warning each) and reads whole, and fsck --repair
# reconciles on a copy; a power loss there (the table zeroed, on another
# copy) leaves the file written inside refused with the unclean-stop hint
# by the mount and fsck, which fsck --repair --accept-unclean takes; rekey
# keeps the feature and every file.
. "$(dirname "$0")/lib.sh"

BS=4096
U=$((BS + 32))		# a whole stored unit
H=88			# the version 2 header
PY=python3

rnd() { head -c "$2" /dev/urandom >"$1"; }

# overwrite MNT REL UNIT: one whole unit of REL written again (random), through the mount
overwrite() {
	rnd "$T/unit" $BS
	dd if="$T/unit" of="$1/$2" bs=$BS seek="$3" count=1 conv=notrunc status=none ||
		fail "overwrite $2 unit $3"
}

# put_back OLD FILE UNIT: unit UNIT's stored bytes in FILE as they are in OLD
put_back() {
	dd if="$1" of="$2" bs=1 skip=$((H + $3 * U)) seek=$((H + $3 * U)) count=$U \
		conv=notrunc status=none || fail "put back unit $3 of $2"
}

# tree volume KIND (flat, tree): files s (4 units), l (101 units), z (a
# hole at unit 1); s and l with one unit rewritten, then put back as it was.
volume() {
	local k=$1 opts=(--cipher=aes-gcm --encrypt-names --integrity)
	[ "$k" = tree ] && opts+=(--unit-tree)
	new_volume "$T/$k" "${opts[@]}" || finish
	sc_mount_fg "$T/$k" "$T/m" --passfile="$T/pw" || finish
	rnd "$T/s" $((3 * BS + 100))
	rnd "$T/l" $((100 * BS + 5))
	cp "$T/s" "$T/m/s" && cp "$T/l" "$T/m/l" || fail "$k: write s, l"
	$PY - "$T/m/z" "$T/z" $BS <<'EOF' || fail "$k: write z"
import os, sys
path, model, bs = sys.argv[1], sys.argv[2], int(sys.argv[3])
head, tail = os.urandom(100), os.urandom(bs)
with open(path, "wb") as f:
    f.write(head)
    f.seek(2 * bs)
    f.write(tail)
open(model, "wb").write(head + b"\0" * (2 * bs - 100) + tail)
EOF
	backing_map "$T/m" "$T/$k" s l z
	sc_umount "$T/m"
	cp "${BK[s]}" "$T/$k.s.old" && cp "${BK[l]}" "$T/$k.l.old"
	sc_mount_fg "$T/$k" "$T/m" --passfile="$T/pw" || finish
	overwrite "$T/m" s 1
	overwrite "$T/m" l 70
	sc_umount "$T/m"
	put_back "$T/$k.s.old" "${BK[s]}" 1
	put_back "$T/$k.l.old" "${BK[l]}" 70
	# z: its unit 2 zeroed behind the mount (the hole at unit 1 stays)
	dd if=/dev/zero of="${BK[z]}" bs=1 seek=$((H + 2 * U)) count=$U conv=notrunc status=none
}

# --- usage and info -------------------------------------------------------------
mkdir -p "$T/m" "$T/u"
(umask 077; printf 'correct horse\n' >"$T/pw")
expect $E_USAGE "--unit-tree needs --integrity" "$SC_BIN" init --scrypt-n=1024 \
	--passfile="$T/pw" --unit-tree "$T/u"

# --- without the tree: the unit put back reads, as its old version --------------
volume flat
sc_mount_fg "$T/flat" "$T/m" --passfile="$T/pw" || finish
# the overwrite is lost: each reads as first written
check "no tree: s with its unit 1 put back reads as before the overwrite" cmp -s "$T/m/s" "$T/s"
check "no tree: l with its unit 70 put back reads as before the overwrite" cmp -s "$T/m/l" "$T/l"
sc_umount "$T/m"

# --- with the tree: EIO, one log line, fsck exit 1 ---------------------------------
volume tree
expect $E_OK "unit tree (feature 0x20" "$SC_BIN" info "$T/tree"
sc_mount_fg "$T/tree" "$T/m" --passfile="$T/pw" || finish
for rel in s l z; do
	read_eio "$T/m/$rel" "tree"
done
sc_umount "$T/m"
for rel in s l z; do
	CHECKS=$((CHECKS + 1))
	n=$(grep -c -- "/m/$rel: its units are not the ones its unit tree records" "$T/daemon.log")
	[ "$n" = 1 ] || fail "tree: $n log lines for $rel, want 1: $(cat "$T/daemon.log")"
done
check "tree: no other daemon message: $(cat "$T/daemon.log")" \
	bash -c "! grep -v -e 'returning EIO' -e 'mounted ' -e 'freshness record' '$T/daemon.log' | grep -q ."
run "$SC_BIN" fsck --passfile="$T/pw" "$T/tree"
check "fsck of the rolled-back units exits 1 (got $RC): $(cat "$T/out")" [ "$RC" = 1 ]
for rel in s l z; do
	check "fsck names $rel: $(cat "$T/out")" \
		grep -q -- "its units are not the ones its unit tree records.*(in the mount: /$rel)" "$T/out"
done
expect $E_FAIL "files quarantined" "$SC_BIN" fsck --repair --passfile="$T/pw" "$T/tree"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/tree"

# --- random changes across remounts read back as their model -------------------------
new_volume "$T/ok" --cipher=aes-gcm --encrypt-names --integrity --unit-tree || finish
mkdir -p "$T/model"
for round in 1 2 3 4; do
	sc_mount_fg "$T/ok" "$T/m" --passfile="$T/pw" || finish
	$PY "$CLI_DIR/unit_tree_ops.py" "$T/m" "$T/model" $BS ||
		fail "round $round: the changes failed"
	sc_umount "$T/m"
	sc_mount_fg "$T/ok" "$T/m" --passfile="$T/pw" || finish
	for f in "$T"/model/*; do
		check "round $round: $(basename "$f") reads back as its model after a remount" \
			cmp -s "$f" "$T/m/$(basename "$f")"
	done
	sc_umount "$T/m"
	check "round $round: no daemon error or warning: $(cat "$T/daemon.log")" \
		bash -c "! grep -qi -e error -e warning '$T/daemon.log'"
done
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/ok"

# --- kill -9 while files are written inside (v, w) and appended to (w) --------------
sc_mount_fg "$T/ok" "$T/m" --passfile="$T/pw" || finish
rnd "$T/p.w" $((80 * BS + 9))
rnd "$T/p.v" $((70 * BS + 1))
cp "$T/p.w" "$T/m/w" && cp "$T/p.v" "$T/m/v" || fail "write v, w"
sc_umount "$T/m"
sc_mount_fg "$T/ok" "$T/m" --passfile="$T/pw" || finish
$PY - "$T/m" "$T/p" "$T/wrote" $BS <<'EOF' &
import os, sys, time
mnt, model, flag, bs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
fds = []
for name, writes in (("w", ((5 * bs + 17, 3000), (66 * bs, bs), (None, 3 * bs + 11))),
                     ("v", ((3 * bs, bs), (68 * bs + 5, 100)))):
    m = bytearray(open(f"{model}.{name}", "rb").read())
    fd = os.open(f"{mnt}/{name}", os.O_RDWR)
    for off, n in writes:
        off = len(m) if off is None else off
        data = os.urandom(n)
        os.pwrite(fd, data, off)
        m[off:off + n] = data
    open(f"{model}.{name}", "wb").write(m)
    fds.append(fd)
open(flag, "w").close()
time.sleep(600)	# the handles stay open: killed with the daemon
EOF
kill_with_writer $! "$T/wrote"
# copies of the volume (and of this client's freshness record: to the
# client a copy is the volume rolled back once the original moves on)
for c in copy pl; do
	rm -rf "$T/ok$c" "$T/state$c"
	cp -a "$T/ok" "$T/ok$c" && cp -a "$XDG_STATE_HOME/stackcrypt" "$T/state$c"
done
expect $E_OK "was being written when the mount stopped" "$SC_BIN" fsck --passfile="$T/pw" "$T/ok"
sc_mount_fg "$T/ok" "$T/m" --passfile="$T/pw" || finish
check "killed while written: w reads every byte written" cmp -s "$T/m/w" "$T/p.w"
check "killed while written: v reads every byte written" cmp -s "$T/m/v" "$T/p.v"
sc_umount "$T/m"
for f in v w; do
	CHECKS=$((CHECKS + 1))
	n=$(grep -c "/m/$f: was being written when the mount stopped; accepted as found" "$T/daemon.log")
	[ "$n" = 1 ] || fail "killed while written: $n warnings for $f, want 1: $(cat "$T/daemon.log")"
done
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/ok"
# the same with no mount: fsck --repair reconciles the copy
expect $E_OK "accepted as found" "$SC_BIN" fsck --repair --passfile="$T/pw" \
	--state-dir="$T/statecopy" "$T/okcopy"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$T/statecopy" "$T/okcopy"
sc_mount_fg "$T/okcopy" "$T/m" --passfile="$T/pw" --state-dir="$T/statecopy" || finish
check "fsck --repair after the kill: w reads every byte written" cmp -s "$T/m/w" "$T/p.w"
check "fsck --repair after the kill: v reads every byte written" cmp -s "$T/m/v" "$T/p.v"
sc_umount "$T/m"
check "fsck --repair after the kill: no daemon warning: $(cat "$T/daemon.log")" \
	bash -c "! grep -qi -e error -e warning '$T/daemon.log'"

# --- a power loss instead: the dirty table lost, the units kept (format.md 11.8) -----
# Made by zeroing the table of the killed volume's other copy.  v, written
# inside only, keeps its size: its root is what tells.  Refused with the
# unclean-stop hint by the mount and fsck, taken as found by fsck --repair
# --accept-unclean, after which everything written reads back.
dd if=/dev/zero of="$T/okpl/sc.journal" bs=4096 seek=1 count=64 conv=notrunc status=none ||
	fail "zero the dirty table"
unclean_msg="its units are not the ones its unit tree records; the last mount stopped uncleanly"
expect $E_FAIL "$unclean_msg" "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$T/statepl" "$T/okpl"
check "fsck names v and the unclean stop: $(cat "$T/out")" \
	grep -q "$unclean_msg.*(in the mount: /v)$" "$T/out"
sc_mount_fg "$T/okpl" "$T/m" --passfile="$T/pw" --state-dir="$T/statepl" || finish
read_eio "$T/m/v" "power loss"
sc_umount "$T/m"
check "the mount names v and the unclean stop: $(cat "$T/daemon.log")" \
	grep -q "/m/v: its units are not the ones its unit tree records: the last mount stopped uncleanly" \
	"$T/daemon.log"
expect $E_OK "(in the mount: /v): accepted as found after the unclean stop (--accept-unclean)" \
	"$SC_BIN" fsck --repair --accept-unclean --passfile="$T/pw" --state-dir="$T/statepl" "$T/okpl"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$T/statepl" "$T/okpl"
sc_mount_fg "$T/okpl" "$T/m" --passfile="$T/pw" --state-dir="$T/statepl" || finish
check "power loss, --accept-unclean: v reads every byte written" cmp -s "$T/m/v" "$T/p.v"
check "power loss, --accept-unclean: w reads every byte written" cmp -s "$T/m/w" "$T/p.w"
sc_umount "$T/m"

# --- rekey keeps the tree (the copy goes through the mount's code) ------------------
expect $E_OK "" "$SC_BIN" rekey --passfile="$T/pw" "$T/ok"
expect $E_OK "unit tree (feature 0x20" "$SC_BIN" info "$T/ok"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/ok"
sc_mount_fg "$T/ok" "$T/m" --passfile="$T/pw" || finish
check "rekeyed: w reads as written" cmp -s "$T/m/w" "$T/p.w"
check "rekeyed: v reads as written" cmp -s "$T/m/v" "$T/p.v"
for f in "$T"/model/*; do
	check "rekeyed: $(basename "$f") reads as its model" cmp -s "$f" "$T/m/$(basename "$f")"
done
sc_umount "$T/m"
check "rekeyed: no daemon error or warning: $(cat "$T/daemon.log")" \
	bash -c "! grep -qi -e error -e warning '$T/daemon.log'"
finish
