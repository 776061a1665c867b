#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hard links on integrity volumes (docs/format.md 11.5: a LINKED file
# keeps the tag of its first name, every other name has a binding record).
# Through a mount: link(2) to a name in the same and in another directory,
# a write through one name read through the others, a cut to 0 and a
# rewrite, the first name unlinked (its tag goes), a name renamed (its
# record goes with it), a linked name renamed over, a rename between two
# names of one inode (nothing happens), RENAME_EXCHANGE of a linked name,
# the lock-file pattern (link, then unlink the temporary name), cp -al of
# a tree; after a remount every name reads its file, the link counts are
# right, fsck is clean and the daemon logged nothing.  Then the backing
# store is tampered with: a plain file's name made a hard link of a
# LINKED file, a record copied to another name, a name's record removed, a
# record left with no name: each file read is EIO with one log line, fsck
# exits 1 naming each, --repair moves the files aside and removes the
# record, and fsck is clean after.  A record left at a name that is gone
# goes when a file or a directory is made there.  (A kill -9 at every step of link,
# unlink and rename of linked names: t_steps.sh integrity.)
. "$(dirname "$0")/lib.sh"

BS=4096
rnd() { head -c "$2" /dev/urandom >"$1"; }	# compared data is long: no match by chance

# same A B: the same bytes
same() { cmp -s "$1" "$2"; }
# nlinks PATH: its link count
nlinks() { stat -c %h "$1"; }
# backing PATH: the backing path (relative) of PATH in the volume, by its names
backing() { "$SC_BIN" path --unlock --passfile="$T/pw" "$T/v" "$1" 2>/dev/null; }
# record PATH: the backing path of the binding record of PATH's name
record() {
	local b
	b=$(backing "$1") || return 1
	python3 - "$T/v/$b" <<'EOF'
import base64, hashlib, os, sys
d, e = os.path.split(sys.argv[1])
lf = "sc." + base64.urlsafe_b64encode(hashlib.sha256(e.encode()).digest()).decode().rstrip("=")
print(os.path.join(d, lf + ".bind"))
EOF
}

mkdir -p "$T/m" "$T/p"
new_volume "$T/v" --cipher=aes-gcm --encrypt-names --integrity || finish
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
M=$T/m

# --- links through the mount ---------------------------------------------------
rnd "$T/p/f" $((3 * BS + 100))
mkdir "$M/d" "$M/src" "$M/src/s"
cp "$T/p/f" "$M/f"
expect 0 "" ln "$M/f" "$M/g"
expect 0 "" ln "$M/f" "$M/d/h"
check "three names, link count 3" [ "$(nlinks "$M/f")" = 3 ]
for n in f g d/h; do check "$n reads the file" same "$M/$n" "$T/p/f"; done
rnd "$T/more" $((BS + 7))
cat "$T/more" >>"$M/g" && cat "$T/more" >>"$T/p/f"
for n in f g d/h; do check "$n reads what was appended through g" same "$M/$n" "$T/p/f"; done
# a cut to 0 through one name, then new contents: the file keeps its id (11.6)
: >"$M/d/h" && rnd "$T/p/f" $((2 * BS + 9)) && cat "$T/p/f" >>"$M/d/h"
for n in f g d/h; do check "$n reads what was rewritten through d/h" same "$M/$n" "$T/p/f"; done
# a long name (stored under its long form, 9.4): its record is named after that form too
LONG=$(printf 'l%.0s' $(seq 230))
expect 0 "" ln "$M/g" "$M/d/$LONG"
check "the long name reads" same "$M/d/$LONG" "$T/p/f"
expect 0 "" mv "$M/d/$LONG" "$M/d/${LONG}2"
check "the long name, renamed, reads" same "$M/d/${LONG}2" "$T/p/f"
expect 0 "" rm "$M/d/${LONG}2"
# the lock-file pattern: a temporary name, link, unlink
rnd "$T/p/lock" 1000
cp "$T/p/lock" "$M/tmp.lock" && ln "$M/tmp.lock" "$M/lock" && rm "$M/tmp.lock"
check "lock reads after its first name went" same "$M/lock" "$T/p/lock"
check "lock has one link" [ "$(nlinks "$M/lock")" = 1 ]
# cp -al of a tree: every file a second name
for n in 1 2 3; do rnd "$T/p/s$n" $((n * 1500)); cp "$T/p/s$n" "$M/src/s/f$n"; done
expect 0 "" cp -al "$M/src" "$M/copy"
for n in 1 2 3; do check "copy/s/f$n reads" same "$M/copy/s/f$n" "$T/p/s$n"; done
sc_umount "$M"

sc_mount_fg "$T/v" "$M" --passfile="$T/pw" || finish
for n in f g d/h; do check "after a remount, $n reads" same "$M/$n" "$T/p/f"; done
check "after a remount, lock reads" same "$M/lock" "$T/p/lock"
check "after a remount, three links" [ "$(nlinks "$M/g")" = 3 ]
# the first name (the one whose tag the header kept) goes: the others stay
expect 0 "" rm "$M/f"
for n in g d/h; do check "$n reads after f was unlinked" same "$M/$n" "$T/p/f"; done
# a name renamed: its record goes with it
expect 0 "" mv "$M/g" "$M/d/g2"
check "d/g2 (renamed) reads" same "$M/d/g2" "$T/p/f"
# a linked name renamed over: the file loses that name, keeps the other
rnd "$T/p/o" 3000
cp "$T/p/o" "$M/o"
RH=$(record /d/h)
check "d/h, a second name, has a record" test -L "$RH"
cp -P "$RH" "$T/rh.saved"
expect 0 "" mv "$M/o" "$M/d/h"
check "the record of d/h went with f's name" test ! -e "$RH"
check "d/h holds what was moved over it" same "$M/d/h" "$T/p/o"
check "d/g2 reads after its other name was renamed over" same "$M/d/g2" "$T/p/f"
check "d/g2 has one link" [ "$(nlinks "$M/d/g2")" = 1 ]
# a rename between two names of one inode does nothing (POSIX)
expect 0 "" ln "$M/lock" "$M/lock2"
expect 0 "" python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$M/lock" "$M/lock2"
check "rename between two names of one inode keeps both" test -e "$M/lock" -a -e "$M/lock2"
for n in lock lock2; do check "$n reads" same "$M/$n" "$T/p/lock"; done
# RENAME_EXCHANGE of a linked name (its record) and a plain file (its tag)
rnd "$T/p/q" 2500
cp "$T/p/q" "$M/q"
expect 0 "" python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2) != 0:
    sys.exit(os.strerror(ctypes.get_errno()))' "$M/lock2" "$M/q"
check "exchanged: q is the linked file" same "$M/q" "$T/p/lock"
check "exchanged: lock2 is the plain file" same "$M/lock2" "$T/p/q"
sc_umount "$M"

sc_mount_fg "$T/v" "$M" --passfile="$T/pw" || finish
check "after a remount, d/g2 reads" same "$M/d/g2" "$T/p/f"
for n in lock q; do check "after a remount, $n reads" same "$M/$n" "$T/p/lock"; done
check "after a remount, lock2 reads" same "$M/lock2" "$T/p/q"
check "after a remount, d/h reads" same "$M/d/h" "$T/p/o"
for n in 1 2 3; do check "after a remount, copy/s/f$n reads" same "$M/copy/s/f$n" "$T/p/s$n"; done
check "lock and q are one inode, two links" [ "$(nlinks "$M/q")" = 2 ]
check "no binding record shows in a listing" bash -c "! ls -a '$M' '$M/d' | grep -q bind"
sc_umount "$M"
check "no error in the daemon's log: $(cat "$T/daemon.log")" \
	bash -c "! grep -v 'mounted ' '$T/daemon.log' | grep -q ."
expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"

# --- tampering with the backing store -------------------------------------------
BQ=$(backing /lock2) BL=$(backing /lock) BG=$(backing /d/g2) BS1=$(backing /copy/s/f1)
RL=$(record /lock) RG=$(record /d/g2) RS1=$(record /copy/s/f1)
check "the backing names are found" test -n "$BQ" -a -n "$BL" -a -n "$BG" -a -n "$BS1"
# a second name has a record, the first name (src/s/f1) keeps the tag
check "linked names have records" test -L "$RL" -a -L "$RS1" -a ! -e "$(record /src/s/f1)"
# lock2, a plain file, made a hard link of the LINKED file of q and lock
ln -f "$T/v/$BL" "$T/v/$BQ"
# d/g2 gets the record of src/s/f1, its file replaced by a link of that file
cp -P "$RS1" "$RG" && ln -f "$T/v/$BS1" "$T/v/$BG"
# lock loses its record
rm "$RL"
# d/h's old record put back beside o, which d/h holds now by its tag: the
# mount removes it at the lookup (what a kill inside the rename leaves)
cp -P "$T/rh.saved" "$RH"
# a record with no name beside it
ln -s "$(readlink "$RS1")" "$(dirname "$RS1")/sc.$(head -c 32 /dev/urandom | base64 -w0 | tr '+/' '-_' | cut -c1-43).bind"

sc_mount_fg "$T/v" "$M" --passfile="$T/pw" || finish
for n in lock2 d/g2 lock; do
	CHECKS=$((CHECKS + 1))
	out=$(cat "$M/$n" 2>&1 >/dev/null) && fail "tampered $n reads"
	[[ "$out" == *"Input/output error"* ]] || fail "tampered $n: $out, want EIO"
	cat "$M/$n" >/dev/null 2>&1	# a second read: still one log line
done
check "copy/s/f1 still reads" same "$M/copy/s/f1" "$T/p/s1"
check "d/h reads beside a stale record" same "$M/d/h" "$T/p/o"
check "the stale record beside d/h is removed at its lookup" test ! -e "$RH"
sc_umount "$M"
check "one warning for the stale record: $(cat "$T/daemon.log")" \
	test "$(grep -c "/m/d/h: removed a binding record beside it" "$T/daemon.log")" = 1
for n in lock2 d/g2 lock; do
	CHECKS=$((CHECKS + 1))
	c=$(grep -c -- "/m/$n: .*bound to another entry" "$T/daemon.log")
	[ "$c" = 1 ] || fail "$c log lines for $n, want 1: $(cat "$T/daemon.log")"
done
run "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "fsck of the tampered volume exits 1: $(cat "$T/out")" [ "$RC" = 1 ]
for n in /lock2 /d/g2 /lock; do
	check "fsck names $n: $(cat "$T/out")" grep -q -- "bound to another entry.*(in the mount: $n)" "$T/out"
done
check "fsck names the record with no name: $(cat "$T/out")" \
	grep -q -- "binding record of a name that does not exist" "$T/out"
expect $E_FAIL "files quarantined" "$SC_BIN" fsck --repair --passfile="$T/pw" "$T/v"
expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
sc_mount_fg "$T/v" "$M" --passfile="$T/pw" || finish
check "after the repair, q reads" same "$M/q" "$T/p/lock"
check "after the repair, copy/s/f1 reads" same "$M/copy/s/f1" "$T/p/s1"
expect 0 "" rm "$M/d/h"
sc_umount "$M"

# a record left at a name that is gone (a kill inside an unlink): a new
# entry made there through the mount removes it, a file or a directory
for kind in file dir; do
	cp -P "$T/rh.saved" "$RH"
	sc_mount_fg "$T/v" "$M" --passfile="$T/pw" || finish
	if [ $kind = file ]; then echo new >"$M/d/h"; else mkdir "$M/d/h"; fi
	check "a new $kind at d/h removes the record left there" test ! -e "$RH"
	rm -rf "$M/d/h"
	sc_umount "$M"
	check "one warning for the record removed: $(cat "$T/daemon.log")" \
		test "$(grep -c "removed a binding record left beside a new entry" "$T/daemon.log")" = 1
done
expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
finish
