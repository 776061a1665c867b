#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The copy of a directory's nonce record in its xattr (docs/format.md 9.2),
# on the default volume (aes-gcm, encrypted names: records in nonce files).
# Over a local file system that commits metadata in order the mount does
# not fsync a new directory's nonce file (a disk flush per mkdir): it
# copies the record into the directory's xattr, which reaches the disk
# before anything made in the directory can.  Checked here: every
# directory has the copy, equal to its file's record; mkdir fsyncs nothing
# over such a backing (io-stats at the names layer's lower boundary) and
# one fsync per directory over any other; a nonce file emptied or removed
# (what a crash leaves when the file's data never reached the disk) is
# answered by the copy -- fsck notes it and exits 0, the mount lists and
# reads the directory, logs one warning, writes the file again, and fsck
# is then silent; without a copy, or with another directory's copy, the
# directory is refused as before (EIO, fsck exit 1); an empty directory
# that lost both gets a new record.  (A power cut at each step of a
# workload with a mkdir: t_powerloss.sh, both models.)
. "$(dirname "$0")/lib.sh"

XA=user.stackcrypt.names
backing() { "$SC_BIN" path --unlock --passfile="$T/pw" "$T/v" "$1" 2>/dev/null; }
xattr_hex() { getfattr --absolute-names -n "$XA" -e hex "$1" 2>/dev/null | sed -n "s/^$XA=//p"; }
no_error() { check "$1: the daemon logged no error: $(cat "$T/daemon.log")" \
	bash -c "! grep -qi error '$T/daemon.log'"; }
mnt() { sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" "$@"; }

declare -A BD=()
mkdir -p "$T/m"
new_volume "$T/v" --cipher=aes-gcm --encrypt-names || finish
mnt -o stats=all || finish
mkdir "$T/m/a" "$T/m/a/b" "$T/m/c" "$T/m/e"
for d in a a/b c; do
	head -c 5000 /dev/urandom >"$T/$(echo $d | tr / _).plain"
	cp "$T/$(echo $d | tr / _).plain" "$T/m/$d/f"
done
"$SC_BIN" stats --json "$T/m" >"$T/stats.json" || fail "stats: $(cat "$T/stats.json")"
sc_umount "$T/m"
no_error "first mount"
# the names layer's calls below it: the boundary under "...>names"'s next layer
syncs=$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
below = [l for l in j["layers"] if l["label"].startswith("names>")]
print(below[0]["ops"].get("fsync", {"count": 0})["count"] if below else "none")' "$T/stats.json")
fstype=$(stat -f -c %T "$T/v")
case $fstype in
ext2/ext3|xfs|btrfs|tmpfs|f2fs)
	check "over $fstype, four mkdirs fsync nothing below the names layer ($syncs)" \
		test "$syncs" = 0 ;;
*)
	check "over $fstype, each of four mkdirs fsyncs its nonce file ($syncs)" \
		test "$syncs" = 4 ;;
esac

# (the root's record is init's, fsynced: it needs no copy)
for d in a a/b c e; do
	b=$T/v/$(backing "/$d")
	BD[$d]=$b
	check "/$d has its nonce file" test -s "$b/sc.nonce"
	check "/$d has the copy of its record in $XA" test -n "$(xattr_hex "$b")"
done

# --- the file emptied: what a crash leaves when its data never reached the disk
: >"${BD[a]}/sc.nonce"
rm "${BD[a/b]}/sc.nonce"
expect $E_OK "" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "fsck notes /a's nonce file answered by the copy" \
	grep -qF "${BD[a]}: its nonce file sc.nonce is missing, empty or damaged (as a crash leaves it before it reached the disk); the copy in its xattr answers, and the next mount writes the file again" "$T/out"
check "fsck notes /a/b's" grep -qF "${BD[a/b]}: its nonce file sc.nonce is missing, empty or damaged" "$T/out"
check "fsck: 0 problems" grep -qF "; 0 problems" "$T/out"
mnt || finish
check "/a lists its names" test "$(ls "$T/m/a" | tr '\n' ' ')" = "b f "
check "/a/f reads back" cmp -s "$T/a.plain" "$T/m/a/f"
check "/a/b/f reads back" cmp -s "$T/a_b.plain" "$T/m/a/b/f"
mkdir "$T/m/a/new" || fail "mkdir in /a"
sc_umount "$T/m"
no_error "the mount over the lost files"
check "one warning for each directory ($(grep -c 'written again from the copy' "$T/daemon.log"))" \
	test "$(grep -c 'nonce file was missing, empty or damaged (as a crash leaves it before it reached the disk); written again from the copy in its xattr' "$T/daemon.log")" = 2
check "/a's nonce file written again" test -s "${BD[a]}/sc.nonce"
check "/a/b's nonce file written again" test -s "${BD[a/b]}/sc.nonce"
expect $E_OK "" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "fsck then notes nothing" bash -c "! grep -q 'missing, empty or damaged' '$T/out'"

# --- without the copy the directory is refused, as before ---------------------
cp -a "$T/v" "$T/v.good"
: >"${BD[a]}/sc.nonce"
setfattr -x "$XA" "${BD[a]}"
mnt || finish
check "/a without file or copy: EIO" bash -c "! ls '$T/m/a' >/dev/null 2>'$T/ls.err' && grep -q 'Input/output error' '$T/ls.err'"
sc_umount "$T/m"
expect $E_FAIL "directory has no valid name nonce file sc.nonce" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
rm -rf "$T/v" && cp -a "$T/v.good" "$T/v"

# --- another directory's copy: refused --------------------------------------
: >"${BD[a]}/sc.nonce"
setfattr -n "$XA" -v "$(xattr_hex "${BD[c]}")" "${BD[a]}"
mnt || finish
check "/a with /c's copy: EIO" bash -c "! ls '$T/m/a' >/dev/null 2>'$T/ls.err' && grep -q 'Input/output error' '$T/ls.err'"
sc_umount "$T/m"
check "the mount names /a: $(cat "$T/daemon.log")" grep -qF "names: directory $T/m/a" "$T/daemon.log"
expect $E_FAIL "the record of another directory" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
rm -rf "$T/v" && cp -a "$T/v.good" "$T/v"

# --- an empty directory that lost both gets a new record -------------------
rm "${BD[e]}/sc.nonce"
setfattr -x "$XA" "${BD[e]}"
expect $E_OK "" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
mnt || finish
echo x >"$T/m/e/g" || fail "a file made in the healed /e"
sc_umount "$T/m"
no_error "the mount that healed /e"
check "/e has a nonce file and its copy again" \
	bash -c "test -s '${BD[e]}/sc.nonce' && test -n \"\$(getfattr --absolute-names -n $XA '${BD[e]}' 2>/dev/null)\""
expect $E_OK "; 0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"

# --- the copy is read first: a directory's lookup opens no nonce file ------
# calls of op (ARG 2) at the names layer's lower boundary since the mount
below_ops() {
	"$SC_BIN" stats --json "$T/m" | python3 -c 'import json, sys
j = json.load(sys.stdin)
below = [l for l in j["layers"] if l["label"].startswith("names>")][0]
print(below["ops"].get(sys.argv[1], {"count": 0})["count"])' "$1"
}
rm -rf "$T/v" && cp -a "$T/v.good" "$T/v"
mnt -o stats=all || finish
opens=$(below_ops open)
ls -R "$T/m" >/dev/null
check "a listing of every directory opens no nonce file ($(below_ops open) opens below, $opens at the mount: the root's)" \
	test "$(below_ops open)" = "$opens"
check "it reads the copies ($(below_ops getxattr) getxattr below)" test "$(below_ops getxattr)" -ge 4
sc_umount "$T/m"
no_error "the listing"

# --- another directory's copy beside a good file: the file answers ---------
setfattr -n "$XA" -v "$(xattr_hex "${BD[c]}")" "${BD[a]}"
mnt || finish
check "/a with /c's copy and its own file lists its names" test "$(ls "$T/m/a" | tr '\n' ' ')" = "b f new "
check "/a/f reads back" cmp -s "$T/a.plain" "$T/m/a/f"
sc_umount "$T/m"
no_error "the mount over /a with /c's copy"
rm -rf "$T/v" && cp -a "$T/v.good" "$T/v"

# --- rmdir and rename over a directory that holds names: nothing lost ------
# (with a copy that opens, the nonce file goes before the backing rmdir or
# rename, which fails, and is written back)
mnt -o stats=all || finish
check "rmdir /a/b, which holds f: ENOTEMPTY" \
	bash -c "! rmdir '$T/m/a/b' 2>'$T/rmdir.err' && grep -q 'not empty' '$T/rmdir.err'"
check "/a/b still lists f" test "$(ls "$T/m/a/b")" = f
mkdir "$T/m/g"
check "rename /g over /c, which holds f: ENOTEMPTY" \
	bash -c "! mv -T '$T/m/g' '$T/m/c' 2>'$T/mv.err' && grep -q 'not empty' '$T/mv.err'"
check "/c still lists f" test "$(ls "$T/m/c")" = f
opendirs=$(below_ops opendir)
rmdir "$T/m/g" || fail "rmdir /g, empty"
check "rmdir of an empty directory with its copy lists nothing below ($(below_ops opendir) opendirs, $opendirs before)" \
	test "$(below_ops opendir)" = "$opendirs"
sc_umount "$T/m"
no_error "the refused rmdir and rename"
check "/a/b's nonce file is there" test -s "${BD[a/b]}/sc.nonce"
check "/c's nonce file is there" test -s "${BD[c]}/sc.nonce"
# the files alone must hold the records: the copies go
setfattr -x "$XA" "${BD[a/b]}" && setfattr -x "$XA" "${BD[c]}" || fail "setfattr -x"
mnt || finish
check "from its nonce file alone, /a/b/f reads back" cmp -s "$T/a_b.plain" "$T/m/a/b/f"
check "and /c/f" cmp -s "$T/c.plain" "$T/m/c/f"
sc_umount "$T/m"
no_error "the remount"
expect $E_OK "; 0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"

# --- a directory without a copy is listed before its rmdir -----------------
mnt -o stats=all || finish
mkdir "$T/m/h" "$T/m/h/i"
setfattr -x "$XA" "$T/v/$(backing /h)"
ls "$T/m/h" >/dev/null
opendirs=$(below_ops opendir)
check "rmdir /h (no copy), which holds i: ENOTEMPTY" bash -c "! rmdir '$T/m/h' 2>/dev/null"
check "it was listed below ($(below_ops opendir) opendirs, $opendirs before)" \
	test "$(below_ops opendir)" -gt "$opendirs"
rmdir "$T/m/h/i" && rmdir "$T/m/h" || fail "rmdir /h/i, /h"
check "/h is gone" test ! -e "$T/m/h"
sc_umount "$T/m"
no_error "rmdir without a copy"
expect $E_OK "; 0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
finish
