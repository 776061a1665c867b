#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Directories' listing records on integrity volumes (docs/format.md 11.7,
# feature 0x100): every call that adds or removes an entry keeps its
# directory's record (sc.list) current, and a full listing that does not
# add up to it is EIO with one log line.  Through a mount: every kind of
# entry made, renamed within and across directories, over another, with
# RENAME_EXCHANGE, between two names of one inode, removed, a directory
# removed; after a remount every directory lists, fsck is clean and the
# daemon logged nothing.  Then the backing store is tampered with, one
# row at a time, each on a copy of the good tree: an entry removed, a
# removed file put back, a whole directory put back from an older copy,
# another directory's record copied over, the record removed or cut to
# nothing, the record damaged: each listing is EIO with one log line
# naming the directory, fsck exits 1 naming it, and the good tree lists
# again.  fsck --repair
# moving a damaged file aside keeps its directory's record right; after
# a kill -9 the mount goes on; fsck --repair --accept-unclean takes a
# directory as found after an unclean stop.  A volume made with
# --no-dir-lists (0x10 alone, as before 0x100) keeps no records.  (A kill
# -9 at every step of each call: t_steps.sh integrity; a power cut at
# each step: t_powerloss.sh integrity.)
. "$(dirname "$0")/lib.sh"

rnd() { head -c "$2" /dev/urandom >"$1"; }	# compared data is long: no match by chance
same() { cmp -s "$1" "$2"; }
backing() { "$SC_BIN" path --unlock --passfile="$T/pw" "$T/v" "$1" 2>/dev/null; }
# lists DIR: every directory under DIR lists without error
lists() { find "$1" -type d -exec ls -f {} + >/dev/null 2>"$T/ls.err"; }
rename2() {	# rename2 FROM TO FLAGS: renameat2(2)
	python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), int(sys.argv[3])) != 0:
    sys.exit(os.strerror(ctypes.get_errno()))' "$@"
}
SD=$T/sd
mnt() { sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" --state-dir="$SD" "$@"; }
# no_error: the daemon of the last mount logged no error
no_error() { check "$1: the daemon logged no error: $(cat "$T/daemon.log")" \
	bash -c "! grep -qi error '$T/daemon.log'"; }
# quarantine WHAT VOL STATE FILE DIR WANT MOUNT...: FILE (backing, in VOL)
# damaged, fsck --repair moves it aside and is then clean; mounted by the
# command MOUNT, every directory lists and DIR holds WANT (left mounted)
quarantine() {
	local what=$1 vol=$2 sd=$3 file=$4 dir=$5 want=$6
	shift 6
	flip "$vol/$file" 100
	expect $E_FAIL "quarantined" "$SC_BIN" fsck --repair --passfile="$T/pw" --state-dir="$sd" "$vol"
	expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$sd" "$vol"
	"$@" || finish
	check "$what: every directory lists: $(cat "$T/ls.err")" lists "$M"
	check "$what: /$dir holds $want" test "$(ls "$M/$dir" | tr '\n' ' ')" = "$want"
}

mkdir -p "$T/m" "$T/p" "$SD"
new_volume "$T/v" --cipher=aes-gcm --encrypt-names --integrity || finish
check "the config has 0x10 and 0x100: $(grep features "$T/v/.stackcrypt.conf")" \
	grep -qx 'features = 0x11e' "$T/v/.stackcrypt.conf"
expect $E_OK "directories' listings and versions" "$SC_BIN" info "$T/v"
M=$T/m

# --- every change through the mount ---------------------------------------------
mnt || finish
LONG=$(printf 'l%.0s' $(seq 230))
mkdir "$M/a" "$M/b" "$M/a/sub" "$M/gone"
for n in 1 2 3 4; do rnd "$T/p/f$n" $((n * 3000)); cp "$T/p/f$n" "$M/a/f$n"; done
cp "$T/p/f1" "$M/a/$LONG"
ln -s f1 "$M/a/link"
mkfifo "$M/a/fifo"
ln "$M/a/f2" "$M/b/hard"
mv "$M/a/f3" "$M/a/g3"				# within a directory
mv "$M/a/f4" "$M/b/f4"				# across
mv "$M/a/$LONG" "$M/b/${LONG}2"			# a long name across
cp "$T/p/f1" "$M/b/over" && mv "$M/b/f4" "$M/b/over"	# over another
expect 0 "" rename2 "$M/a/g3" "$M/b/over" 2	# RENAME_EXCHANGE
ln "$M/a/f1" "$M/a/f1b"
expect 0 "" python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$M/a/f1" "$M/a/f1b"
rm "$M/a/f1b" && rmdir "$M/gone" && mv "$M/a/sub" "$M/b/sub"
check "every directory lists: $(cat "$T/ls.err" 2>/dev/null)" lists "$M"
sc_umount "$M"
no_error "the changes"
mnt || finish
check "after a remount every directory lists: $(cat "$T/ls.err")" lists "$M"
check "a/: f1 f2 fifo link over, as made" \
	test "$(ls "$M/a" | tr '\n' ' ')" = "f1 f2 fifo g3 link "
check "b/ holds what moved there" test "$(ls "$M/b" | sort | tr '\n' ' ')" = \
	"$(printf '%s\n' hard over sub "${LONG}2" | sort | tr '\n' ' ')"
check "b/over is the file exchanged into it" same "$M/b/over" "$T/p/f3"
check "a/g3 is the file that went over b/over" same "$M/a/g3" "$T/p/f4"
sc_umount "$M"
no_error "the remount"
expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$SD" "$T/v"

# --- tampering, one row at a time, on copies of the good tree -------------------
A=$(backing /a) || { fail "no backing path of /a"; finish; }
B=$(backing /b)
F2=$(backing /a/f2)
cp -a "$T/v" "$T/good"
cp -a "$SD" "$T/sd.good"
mnt || finish
rm "$M/a/f2" "$M/b/hard"
sc_umount "$M"
cp -a "$T/v" "$T/after_rm"
# row: what is done to the tree; want: the log's words; fsck: fsck's words
tamper_row() {
	local row=$1 want=$2 fsck_want=$3
	mnt || return
	check "$row: the listing of /a is EIO" bash -c "! ls '$M/a' >/dev/null 2>&1"
	check "$row: and again (no cached answer)" bash -c "! ls '$M/a' >/dev/null 2>&1"
	check "$row: /b still lists" ls "$M/b"
	sc_umount "$M"
	check "$row: one log line naming /a: $(cat "$T/daemon.log")" \
		test "$(grep -c "directory $M/a.*$want" "$T/daemon.log")" = 1
	run "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$SD" "$T/v"
	check "$row: fsck exits 1: $(cat "$T/out")" [ "$RC" = 1 ]
	check "$row: fsck names the directory: $(cat "$T/out")" \
		grep -q -- "$A/sc.list: .*$fsck_want.*(in the mount: /a)" "$T/out"
}
reset() { rm -rf "$T/v" "$SD" && cp -a "$1" "$T/v" && cp -a "$2" "$SD"; }

reset "$T/after_rm" "$T/sd.good"
rm "$T/v/$(backing /a/g3)"
tamper_row "an entry removed" "entries differ from its listing record (3 found, 4 recorded)" \
	"entries differ from its listing record (3 found, 4 recorded)"
reset "$T/after_rm" "$T/sd.good"
cp -a "$T/good/$F2" "$T/v/$F2"
tamper_row "a removed file put back" "entries differ from its listing record (5 found, 4" \
	"entries differ"
# the whole directory from before the rm, with its record: older than the client saw
reset "$T/after_rm" "$T/sd.good"
mnt || finish
ls "$M/a" >/dev/null	# this client sees the newer record...
sc_umount "$M"
rm -rf "$T/v/$A" && cp -a "$T/good/$A" "$T/v/$A"	# ...then the older one comes back
tamper_row "the directory put back from an older copy" "was rolled back: its listing record has gen" \
	"rolled back"
reset "$T/after_rm" "$T/sd.good"
cp "$T/v/$B/sc.list" "$T/v/$A/sc.list"
tamper_row "another directory's record copied over" "listing record of another directory" \
	"another directory's"
reset "$T/after_rm" "$T/sd.good"
rm "$T/v/$A/sc.list"
tamper_row "the record removed" "entries differ from its listing record (4 found, 0 recorded)" \
	"entries differ"
reset "$T/after_rm" "$T/sd.good"
: >"$T/v/$A/sc.list"	# cut to nothing: read as none, as a power cut after its create leaves it
tamper_row "the record cut to 0 bytes" "entries differ from its listing record (4 found, 0 recorded)" \
	"entries differ"
reset "$T/after_rm" "$T/sd.good"
flip "$T/v/$A/sc.list" 200
tamper_row "the record damaged" "listing record file that is not a regular file or does not decrypt" \
	"listing record"
reset "$T/after_rm" "$T/sd.good"
mnt || finish
check "the untouched tree lists again: $(cat "$T/ls.err")" lists "$M"
sc_umount "$M"
no_error "the untouched tree"

# --- fsck --repair moving a damaged file aside keeps the record right ----------
quarantine "after the quarantine of a/g3" "$T/v" "$SD" "$(backing /a/g3)" a "f1 fifo link " mnt

# --- a kill -9, then an unclean stop taken as found by --repair --accept-unclean --
rnd "$T/p/k" 5000 && cp "$T/p/k" "$M/a/k" && mkdir "$M/a/kd"
kill -9 "${SC_PIDS[-1]}"
wait "${SC_PIDS[-1]}" 2>/dev/null
SC_PIDS=()
fusermount3 -uz "$M" 2>/dev/null
mnt || finish
check "after the kill /a lists: $(cat "$T/ls.err")" lists "$M"
check "and holds what was made before it" same "$M/a/k" "$T/p/k"
rnd "$T/p/k2" 5000 && cp "$T/p/k2" "$M/a/k2"
kill -9 "${SC_PIDS[-1]}"
wait "${SC_PIDS[-1]}" 2>/dev/null
SC_PIDS=()
fusermount3 -uz "$M" 2>/dev/null
# what a power cut can do: an entry's removal durable, its record's write
# lost (not k2, whose create the record still holds pending: a kill leaves
# that one to the name's existence, format.md 11.7)
K=$(backing /a/k) || fail "no backing path of /a/k"
rm "$T/v/$K"
run "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$SD" "$T/v"
check "after the unclean stop fsck names /a: $(cat "$T/out")" \
	grep -q -- "$A/sc.list: .*entries differ.*power was lost.*accept-unclean" "$T/out"
run "$SC_BIN" fsck --repair --accept-unclean --passfile="$T/pw" --state-dir="$SD" "$T/v"
check "--accept-unclean takes it as found: $(cat "$T/out")" \
	grep -q -- "$A/sc.list.*accepted as found after the unclean stop" "$T/out"
mnt || finish
check "then /a lists: $(cat "$T/ls.err")" lists "$M"
check "with k2 and without k" test "$(ls "$M/a" | tr '\n' ' ')" = "f1 fifo k2 kd link "
sc_umount "$M"

# --- past the posix layer's descriptor budget (-o max_path_fds): a record's
# file opened once, not at every change (each open held a descriptor: a
# cp -a of 10 000 files ran the daemon out of them) -------------------------------
sc_mount_fg "$T/v" "$M" --passfile="$T/pw" --state-dir="$SD" -o max_path_fds=4 || finish
for n in $(seq 20); do
	mkdir "$M/many$n" && for f in 1 2 3 4 5; do echo "$n$f" >"$M/many$n/f$f"; done
done
held=$(ls -l /proc/"${SC_PIDS[-1]}"/fd 2>/dev/null | grep -c '/sc\.list$')
# 21 records (the root and the 20) and at most 4 O_PATH descriptors within
# the budget; opened at every change, it would be about 120
check "20 directories changed 5 times each hold at most 25 record files open: $held" \
	test "$held" -le 25
check "and list: $(cat "$T/ls.err")" lists "$M"
sc_umount "$M"
no_error "past the descriptor budget"
expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$SD" "$T/v"

# --- with the unit tree too (init --integrity --unit-tree: 0x10, 0x20, 0x100) --
# The record file is written in place at every change and held open; on a
# tree volume each write moves its root, which its settle commits (format.md
# 11.7, "With the unit tree").  Each kind of tampering is still caught; a
# kill -9 after changes no settle followed leaves records whose roots lag,
# which the next mount (and fsck --repair) accepts from the dirty table.
BV=$T/both BSD=$T/sd.both
bmnt() { sc_mount_fg "$BV" "$M" --passfile="$T/pw" --state-dir="${1:-$BSD}"; }
bpath() { "$SC_BIN" path --unlock --passfile="$T/pw" "$BV" "$1" 2>/dev/null; }
mkdir -p "$BSD" "$T/sd.empty"
new_volume "$BV" --cipher=aes-gcm --encrypt-names --integrity --unit-tree || finish
check "the config has 0x10, 0x20 and 0x100: $(grep features "$BV/.stackcrypt.conf")" \
	grep -qx 'features = 0x13e' "$BV/.stackcrypt.conf"
bmnt || finish
mkdir "$M/a" "$M/c"
for n in 1 2 3; do cp "$T/p/f$n" "$M/a/f$n"; done
mv "$M/a/f3" "$M/c/f3" && rm "$M/a/f2" && ln -s f1 "$M/a/link"
sc_umount "$M"
no_error "both: the changes"
expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$BSD" "$BV"
BA=$(bpath /a) && BC=$(bpath /c) && BF3=$(bpath /c/f3) || { fail "both: no backing paths"; finish; }
cp -a "$BV" "$T/both.good" && cp -a "$BSD" "$T/sd.both.good"
cp "$BV/$BF3" "$T/f3.old" && cp "$BV/$BC/sc.list" "$T/list.old"
bmnt || finish
dd if="$T/p/f2" of="$M/c/f3" bs=4096 count=1 seek=1 conv=notrunc status=none	# f3's unit 1
touch "$M/c/new"	# c's record: a newer unit
sc_umount "$M"
no_error "both: the overwrite"
cp -a "$BV" "$T/both.after" && cp -a "$BSD" "$T/sd.both.after"
# breset TREE STATE: the volume and its client record as they were at TREE, STATE
breset() { rm -rf "$BV" "$BSD" && cp -a "$1" "$BV" && cp -a "$2" "$BSD"; }
# bfsck_names WHAT PATH WORDS: fsck exits 1 naming PATH with WORDS
bfsck_names() {
	run "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$BSD" "$BV"
	check "both, $1: fsck exits 1: $(cat "$T/out")" [ "$RC" = 1 ]
	check "both, $1: fsck names it: $(cat "$T/out")" grep -q -- "$2: .*$3" "$T/out"
}
# row: an entry removed behind the mount
rm "$BV/$(bpath /a/f1)"
bmnt || finish
check "both, an entry removed: the listing of /a is EIO" bash -c "! ls '$M/a' >/dev/null 2>&1"
check "both, an entry removed: /c lists" ls "$M/c"
sc_umount "$M"
check "both, an entry removed: one log line naming /a: $(cat "$T/daemon.log")" \
	test "$(grep -c "directory $M/a: its entries differ from its listing record (1 found, 2 recorded)" "$T/daemon.log")" = 1
bfsck_names "an entry removed" "$BA/sc.list" "entries differ from its listing record (1 found, 2"
# row: one unit of a file put back from its older version (its header kept)
breset "$T/both.after" "$T/sd.both.after"
dd if="$T/f3.old" of="$BV/$BF3" bs=1 skip=$((88 + 4128)) seek=$((88 + 4128)) count=4128 \
	conv=notrunc status=none
bmnt || finish
read_eio "$M/c/f3" "both, a unit rolled back"
check "both, a unit rolled back: /c still lists" ls "$M/c"
sc_umount "$M"
check "both, a unit rolled back: one log line naming c/f3: $(cat "$T/daemon.log")" \
	test "$(grep -c "$M/c/f3: its units are not the ones its unit tree records" "$T/daemon.log")" = 1
bfsck_names "a unit rolled back" "$BF3" "its units are not the ones its unit tree records"
# row: the record's unit put back from before the touch, under its newer
# header, seen by a client that never saw the newer gen: the root alone tells
breset "$T/both.after" "$T/sd.both.after"
dd if="$T/list.old" of="$BV/$BC/sc.list" bs=1 skip=88 seek=88 conv=notrunc status=none
rm -rf "$T/sd.empty" && mkdir "$T/sd.empty"
bmnt "$T/sd.empty" || finish
check "both, the record's unit rolled back: the listing of /c is EIO" \
	bash -c "! ls '$M/c' >/dev/null 2>&1"
sc_umount "$M"
check "both, the record's unit rolled back: logged for /c: $(cat "$T/daemon.log")" \
	grep -q "directory $M/c has a listing record file that is not a regular file or does not decrypt" \
	"$T/daemon.log"
run "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$T/sd.empty" "$BV"
check "both, the record's unit rolled back: fsck exits 1: $(cat "$T/out")" [ "$RC" = 1 ]
check "both, the record's unit rolled back: fsck names it: $(cat "$T/out")" \
	grep -q -- "$BC/sc.list: its units are not the ones its unit tree records" "$T/out"
# a kill -9 after directory changes no settle followed (no fsyncdir, no
# unmount, fewer records than the table lets go): every changed record's
# root lags its unit, its dirty entry pinned
breset "$T/both.after" "$T/sd.both.after"
bmnt || finish
mkdir "$M/k" && cp "$T/p/f1" "$M/k/x" && cp "$T/p/f2" "$M/a/y" && mv "$M/c/new" "$M/k/new" &&
	rm "$M/a/link" && ln -s y "$M/a/ly" || fail "both: the changes before the kill"
kill -9 "${SC_PIDS[-1]}"
wait "${SC_PIDS[-1]}" 2>/dev/null
SC_PIDS=()
fusermount3 -u "$M" 2>/dev/null || umount -l "$M"
cp -a "$BV" "$T/both.killed" && cp -a "$BSD" "$T/sd.both.killed"
expect $E_OK "was being written when the mount stopped" \
	"$SC_BIN" fsck --passfile="$T/pw" --state-dir="$BSD" "$BV"
bmnt || finish
check "both, after the kill: every directory lists: $(cat "$T/ls.err")" lists "$M"
check "both, after the kill: /a holds f1 and what was made" \
	test "$(ls "$M/a" | tr '\n' ' ')" = "f1 ly y "
check "both, after the kill: /k holds what was made" \
	test "$(ls "$M/k" | tr '\n' ' ')" = "new x "
check "both, after the kill: k/x reads as written" same "$M/k/x" "$T/p/f1"
sc_umount "$M"
no_error "both, after the kill"
expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$BSD" "$BV"
# the same with no mount: fsck --repair accepts the records, and rewrites
# one a quarantine moves a file out of with its root
breset "$T/both.killed" "$T/sd.both.killed"
quarantine "both, fsck --repair after the kill" "$BV" "$BSD" "$(bpath /k/x)" k "new " bmnt
sc_umount "$M"
no_error "both, fsck --repair after the kill"

# --- a volume without listing records (0x10 alone, as made before 0x100) -------
expect $E_USAGE "--no-dir-lists applies to --integrity only" \
	"$SC_BIN" init --no-dir-lists --passfile="$T/pw" "$T/v3"
new_volume "$T/v2" --cipher=aes-gcm --encrypt-names --integrity --no-dir-lists || finish
check "the config has 0x10 without 0x100: $(grep features "$T/v2/.stackcrypt.conf")" \
	grep -qx 'features = 0x1e' "$T/v2/.stackcrypt.conf"
sc_mount_fg "$T/v2" "$M" --passfile="$T/pw" --state-dir="$SD" || finish
mkdir "$M/d" && cp "$T/p/f1" "$M/d/x" && mv "$M/d/x" "$M/d/y"
sc_umount "$M"
check "no listing record is made" test -z "$(find "$T/v2" -name sc.list)"
rm -f "$T/v2/$("$SC_BIN" path --unlock --passfile="$T/pw" "$T/v2" /d/y)"
sc_mount_fg "$T/v2" "$M" --passfile="$T/pw" --state-dir="$SD" || finish
check "an entry removed behind the mount goes unnoticed there" ls "$M/d"
sc_umount "$M"
no_error "the volume without records"
finish
