#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Symlinks on a volume with encrypted names (issue 28): targets up to
# PATH_MAX - 1 = 4095 bytes (those over 3008 kept in side files), bound to
# their entry (finding 6).  rename, RENAME_NOREPLACE, RENAME_EXCHANGE and
# moves across directories keep short and long links readable, after a
# remount too, and leave one side file per long link; link(2) of a symlink
# makes a copy.  A target copied onto another link reads as EIO with one
# log line and fsck exits 1 naming it; the state a crash inside a rename
# leaves (the link moved, not yet rebound) likewise, and fsck --repair
# rebinds it.  A damaged long target's side file, and one no link uses,
# are reported (the second removed by --repair).  Damage is by XOR.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: this test needs FUSE"; finish; }
LINKS="$CLI_DIR/links.py"
mkdir -p "$T/m"

# log_has TEXT: the daemon logged TEXT on exactly one line.
log_has() {
	check "daemon logged one line with '$1': $(cat "$T/daemon.log")" \
		test "$(grep -cF -- "$1" "$T/daemon.log")" = 1
}
log_quiet() {
	check "daemon logged only the mounted line: $(cat "$T/daemon.log")" \
		test "$(grep -vc -e '^stackcrypt: mounted ' -e 'password file' "$T/daemon.log")" = 0
}
# bpath MNTPATH: the backing path of MNTPATH, by the inode the mount reports.
bpath() { find "$T/v" -inum "$(stat -c %i "$T/m/$1")"; }
nside() { find "$T/v" -name 'sc.*.link' | wc -l; }

new_volume "$T/v" --encrypt-names --cipher=aes-gcm || finish
expect $E_OK "symlink targets too, bound to their entry, up to 4095 bytes" "$SC_BIN" info "$T/v"

# ---- lengths, renames, exchange, link(2) ----------------------------------
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
expect $E_OK "" python3 "$LINKS" make "$T/m"
expect $E_OK "" python3 "$LINKS" move "$T/m"
sc_umount "$T/m"
log_quiet
check "one side file per long link: $(nside), want $(python3 "$LINKS" long)" \
	test "$(nside)" = "$(python3 "$LINKS" long)"
check "no side file is left being replaced" \
	test "$(find "$T/v" -name 'sc.*.link.new' -o -name 'sc.new.*' | wc -l)" = 0
check "no backing symlink target is longer than 4095 bytes" \
	test "$(find "$T/v" -type l -printf '%l\n' | awk 'length > 4095' | wc -l)" = 0
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
expect $E_OK "" python3 "$LINKS" verify "$T/m"

# ---- a target copied onto another link ------------------------------------
ln -s /usr/bin/python3 "$T/m/py"
ln -s /tmp/attacker/payload "$T/m/evil"
py=$(bpath py) evil=$(bpath evil)
sc_umount "$T/m"
ln -sfn -- "$(readlink "$evil")" "$py"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
expect $E_FAIL "Input/output error" readlink -v "$T/m/py"
expect $E_FAIL "Input/output error" stat "$T/m/py/"
check "the other link still reads" test "$(readlink "$T/m/evil")" = /tmp/attacker/payload
sc_umount "$T/m"
log_has "has a target bound to another entry (a crash during a rename, or a copied target); readlink returns EIO"
expect $E_FAIL "bound to another entry: a crash during a rename, or a copied target" \
	"$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "fsck names the link" grep -qF "$py: symlink target bound to another entry" "$T/out"
check "fsck names it in the mount" grep -qF "(in the mount: /py)" "$T/out"

# ---- the crash inside a rename: moved, not rebound ------------------------
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
ln -s "target of a" "$T/m/a"
ln -s "target of b" "$T/m/d/b"
a=$(bpath a) b=$(bpath d/b)
sc_umount "$T/m"
mv "$a" "$b"	# the backing rename of a onto d/b, the rebind not done
expect $E_FAIL "bound to another entry" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "fsck names the moved link" grep -qF "(in the mount: /d/b)" "$T/out"
check "fsck offers the rebind" grep -qF "rebind the symlinks bound to other entries" "$T/out"
expect $E_FAIL "rebound: $b (its target is now bound to this entry)" \
	"$SC_BIN" fsck --repair --passfile="$T/pw" "$T/v"
check "--repair rebound the copied target too" grep -qF "rebound: $py" "$T/out"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
check "the moved link reads its target" test "$(readlink "$T/m/d/b")" = "target of a"
check "the old name is gone" test ! -L "$T/m/a"
check "the rebound copy reads the copied target" \
	test "$(readlink "$T/m/py")" = /tmp/attacker/payload
expect $E_OK "" python3 "$LINKS" verify "$T/m" py evil d/b
sc_umount "$T/m"
log_quiet

# ---- the same crash with a long target ---------------------------------------
# crash_long DIR NEW: a long link renamed from DIR/A to DIR/B through the
# mount, then its backing link given the marker it had as A (the rebind not
# done); NEW=1: its new side file not yet moved into place either
# (L(E).link.new, format.md 9.5).  fsck --repair finishes the rename.
crash_long() {
	local dir=$1 new=$2 bd mark_a blink side long
	long=$(python3 -c 'print("L" * 3333)')
	sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
	mkdir "$T/m/$dir"
	ln -s "$long" "$T/m/$dir/A"
	mark_a=$(readlink "$(bpath "$dir/A")")
	bd=$(dirname "$(bpath "$dir/A")")
	mv "$T/m/$dir/A" "$T/m/$dir/B"
	sc_umount "$T/m"
	log_quiet
	blink=$(find "$bd" -maxdepth 1 -type l)
	side=$(find "$bd" -maxdepth 1 -name 'sc.*.link')
	check "$dir: one link and one side file: $blink $side" \
		test "$(echo "$blink" | wc -l):$(echo "$side" | wc -l)" = 1:1
	ln -sfn -- "$mark_a" "$blink"
	[ "$new" = 1 ] && mv "$side" "$side.new"
	expect $E_FAIL "a rename's new side file is ready; --repair points the link at it" \
		"$SC_BIN" fsck --passfile="$T/pw" "$T/v"
	check "$dir: fsck names the link" grep -qF "(in the mount: /$dir/B)" "$T/out"
	expect $E_FAIL "rebound: $blink" "$SC_BIN" fsck --repair --passfile="$T/pw" "$T/v"
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
	sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
	check "$dir: the long link reads after the repair" test "$(readlink "$T/m/$dir/B")" = "$long"
	rm -r "$T/m/$dir"
	sc_umount "$T/m"
	log_quiet
}
crash_long c1 0
crash_long c2 1

# ---- a damaged long target's side file, and one no link uses ---------------
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
m4095=$(bpath d/m4095) n3025=$(bpath d/n3025)
sc_umount "$T/m"
side=$(find "$(dirname "$m4095")" -name 'sc.*.link' | while read -r s; do
	[ "$(stat -c %s "$s")" -gt 5000 ] && echo "$s"; done | head -1)
check "the 4095-byte target's side file: $side" test -f "$side"
python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
	f.seek(200); b = f.read(1); f.seek(200); f.write(bytes([b[0] ^ 0x01]))' "$side"
rm "$n3025"	# its side file stays: what a crash inside unlink leaves
expect $E_FAIL "this symlink's long target is missing, unusable or holds another target" \
	"$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "fsck names the damaged link" grep -qF "(in the mount: /d/m4095)" "$T/out"
check "fsck reports the orphan side file" \
	grep -qF "side file of a long symlink target that no link uses (left by a crash)" "$T/out"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
expect $E_FAIL "Input/output error" readlink -v "$T/m/d/m4095"
copy=$(readlink "$T/m/e/copy4095")
check "the copy of it still reads: ${#copy} bytes" test "${#copy}" = 4095
sc_umount "$T/m"
log_has "has a long target whose side file is unusable; readlink returns EIO"
expect $E_FAIL "" "$SC_BIN" fsck --repair --passfile="$T/pw" "$T/v"
check "--repair quarantined the damaged side file (the file checks)" \
	grep -q "^quarantined: .*\.link -> " "$T/out"
check "--repair removed the orphan side file: $(nside) side files left" \
	test "$(nside)" = "$(($(python3 "$LINKS" long) - 2))"
finish
