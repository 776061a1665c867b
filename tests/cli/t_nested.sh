#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Volumes inside volumes (issue 14 item 2): the crypt layer stores the
# header xattr names of the layers above it escaped (docs/format.md,
# "Extended attribute names"), so
#  - `stackcrypt init` inside a mount works, that inner volume mounts, and
#    its files round-trip (also after a remount of the inner volume); the
#    inner backing (seen through the outer mount) holds no plaintext, and
#    the outermost backing holds the inner header as user.stackcrypt! next
#    to its own user.stackcrypt;
#  - a real backing tree copied into a mount with `cp -a` mounts from
#    there, and its files read back;
#  - a volume mounted on a directory inside a mount is served, and the
#    mount warns that its mount point is on a FUSE file system (a local
#    one is not warned of).
# Every daemon runs in the foreground, is unmounted innermost first and
# waited for by PID; none may log an error.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }

HDR=user.stackcrypt
MARK=SCNESTED-marker-5b1e

# mount_fg NAME BACKING MNT: sc_mount_fg with the daemon's log kept as
# $T/NAME.log (the daemon's fd follows the renamed file); PID in $PID_<NAME>.
mount_fg() {
	sc_mount_fg "$2" "$3" --passfile="$T/pw" || return 1
	mv "$T/daemon.log" "$T/$1.log"
	printf -v "PID_$1" '%s' "${SC_PIDS[-1]}"
}

# umount_fg NAME MNT: unmounts MNT and waits for that daemon alone (the
# outer ones still run), which must exit 0.
umount_fg() {
	local pid_var="PID_$1" rc p keep=()
	fusermount3 -u "$2" || { fail "fusermount3 -u $2"; return 1; }
	wait "${!pid_var}"
	rc=$?
	check "daemon $1 exits 0 (got $rc)" test "$rc" = 0
	for p in "${SC_PIDS[@]}"; do
		[ "$p" = "${!pid_var}" ] || keep+=("$p")
	done
	SC_PIDS=("${keep[@]}")
}

# xattr_len FILE NAME: the value's length, or "none".
xattr_len() {
	python3 -c 'import os, sys
try:
    print(len(os.getxattr(sys.argv[1], sys.argv[2])))
except OSError:
    print("none")' "$1" "$2"
}

head -c 300000 /dev/urandom >"$T/rand"
{ for i in $(seq 2000); do echo "$MARK line $i"; done; } >"$T/text"

# ---- a volume initialised inside a mount of another ----------------------
new_volume "$T/outer" || finish
mkdir "$T/mo" "$T/mi"
mount_fg outer "$T/outer" "$T/mo" || finish
mkdir "$T/mo/inner"
expect 0 "" "$SC_BIN" init --scrypt-n=1024 --passfile="$T/pw" $(init_opts) $(kind_opts) "$T/mo/inner"
mount_fg inner "$T/mo/inner" "$T/mi" || finish
cp "$T/rand" "$T/mi/rand"
cp "$T/text" "$T/mi/text"
mkdir "$T/mi/d"
printf 'tiny' >"$T/mi/d/tiny"
check "inner: rand reads back" cmp -s "$T/rand" "$T/mi/rand"
check "inner: text reads back" cmp -s "$T/text" "$T/mi/text"
check "inner: tiny reads back" test "$(cat "$T/mi/d/tiny")" = tiny
check "inner backing (through the outer mount) holds no plaintext" \
	bash -c "! grep -r -a -q -F '$MARK' '$T/mo/inner'"
check "outermost backing holds no plaintext" bash -c "! grep -r -a -q -F '$MARK' '$T/outer'"
# text's backing files, by inode (names may be encrypted): every layer
# reports the inode of the file below it
backing_map "$T/mi" "$T/mo/inner" text
BK[outer:text]=$(backing_of "$T/mi/text" "$T/outer")
check "inner header reachable through the outer mount" \
	test "$(xattr_len "${BK[text]}" $HDR)" = 56
check "outermost backing: the inner header is stored as $HDR!" \
	test "$(xattr_len "${BK[outer:text]}" "$HDR!")" = 56
check "outermost backing: the outer header is its own" \
	test "$(xattr_len "${BK[outer:text]}" $HDR)" = 56
check "outermost backing: exactly the two headers" test \
	"$(python3 -c 'import os, sys; print(*sorted(os.listxattr(sys.argv[1])))' "${BK[outer:text]}")" = \
	"$HDR $HDR!"
umount_fg inner "$T/mi"
mount_fg inner2 "$T/mo/inner" "$T/mi" || finish
check "inner after remount: rand" cmp -s "$T/rand" "$T/mi/rand"
check "inner after remount: text" cmp -s "$T/text" "$T/mi/text"
check "inner after remount: tiny" test "$(cat "$T/mi/d/tiny")" = tiny
umount_fg inner2 "$T/mi"
expect 0 "" "$SC_BIN" fsck --passfile="$T/pw" "$T/mo/inner"

# ---- a real backing tree copied into a mount with cp -a ------------------
new_volume "$T/real" || finish
mkdir "$T/mr" "$T/mc"
mount_fg real "$T/real" "$T/mr" || finish
cp "$T/rand" "$T/mr/rand"
cp "$T/text" "$T/mr/text"
printf 'tiny' >"$T/mr/tiny"
umount_fg real "$T/mr"
expect 0 "" cp -a "$T/real" "$T/mo/copy"
mount_fg copy "$T/mo/copy" "$T/mc" || finish
check "copy: rand reads back" cmp -s "$T/rand" "$T/mc/rand"
check "copy: text reads back" cmp -s "$T/text" "$T/mc/text"
check "copy: tiny reads back" test "$(cat "$T/mc/tiny")" = tiny
umount_fg copy "$T/mc"

# ---- a mount point inside a mount: served, with a warning ----------------
# (docs/usage.md, "Where to mount": the kernel can drop a mount below a
# directory its FUSE file system no longer finds)
mkdir "$T/mo/mp"
mount_fg inmp "$T/real" "$T/mo/mp" || finish
check "a mount point on a FUSE file system is warned of" \
	grep -q "warning: MOUNTPOINT $(realpath "$T/mo/mp") is on a FUSE file system" "$T/inmp.log"
check "the mount inside a mount serves" cmp -s "$T/rand" "$T/mo/mp/rand"
umount_fg inmp "$T/mo/mp"
check "a local mount point is not warned of" \
	bash -c "! grep -q 'is on a FUSE file system' '$T/outer.log' '$T/real.log' '$T/copy.log'"
umount_fg outer "$T/mo"

for log in outer inner inner2 real copy inmp; do
	check "daemon $log logged no error: $(grep -i -m3 error "$T/$log.log" 2>/dev/null)" \
		bash -c "! grep -qi error '$T/$log.log'"
done
finish
