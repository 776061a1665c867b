#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# gfapi_cli_test.sh - gluster:// on the command line, run by
# `tests/gluster/harness.sh --gfapi single passthrough`: MNT is a passthrough
# mount of gluster://127.0.0.1/VOL/.../backing through the gluster
# translator, BACKING that directory on the volume's FUSE mount.
#
#  1. What the passthrough mount writes is what the volume holds, under the
#     same inode numbers (the translator's identity is the GFID, as the FUSE
#     client's), and what the volume holds shows through the mount.
#  2. Bad URLs, a missing volume, a port nothing listens on, a missing PATH,
#     a second init, a non-empty directory, a wrong key: init and mount say
#     so in one line and exit with the documented status (2 usage, 10
#     BACKING, 12 wrong key, 13 no config).
#  3. An fstab line with a gluster:// source: mount(8) runs mount.fuse3, which
#     runs `stackcrypt gluster://... MNT -o ...` (mount(8)'s fixed PATH: our
#     binary first in PATH, as tests/cli/t_fstab.sh does); the daemon detaches
#     and connects after its fork.  While it runs, a second mount of the
#     volume is refused (one mount per volume, a lock on the config held
#     through libgfapi); once it has gone, a mount works again.
set -u
# shellcheck source=../lib/guard.sh
. "$(dirname "$0")/../lib/guard.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${MNT:?run me under tests/gluster/harness.sh --gfapi}" "${SC_GLUSTER_VOL:?}" "${BACKING:?}" "${SRC:?}"
URL=gluster://127.0.0.1/$SC_GLUSTER_VOL
# off the volume's FUSE client, where TMPDIR points: mount points there can
# be dropped by the kernel, and mount warns of them (docs/usage.md)
T=$(mktemp -d "${SC_HARNESS_MNT_DIR:-/tmp}/sc-gfapi-cli.XXXXXX") || fail "mktemp"
trap 'findmnt -rn --mountpoint "$T/fmnt" >/dev/null && fusermount3 -u "$T/fmnt"; rm -rf "$T"' EXIT

# 1. Through the translator and back.
printf 'through gfapi\n' >"$MNT/p" || fail "write through the mount"
mkdir "$MNT/d" && ln -s p "$MNT/d/s" || fail "mkdir/symlink through the mount"
[ "$(cat "$BACKING/p")" = "through gfapi" ] || fail "the volume holds '$(cat "$BACKING/p")'"
[ "$(readlink "$BACKING/d/s")" = p ] || fail "symlink on the volume: '$(readlink "$BACKING/d/s")'"
[ "$(stat -c %i "$MNT/p")" = "$(stat -c %i "$BACKING/p")" ] ||
	fail "inode numbers differ: mount $(stat -c %i "$MNT/p"), volume $(stat -c %i "$BACKING/p")"
printf 'from fuse\n' >"$BACKING/q" || fail "write on the volume"
[ "$(cat "$MNT/q")" = "from fuse" ] || fail "the mount reads '$(cat "$MNT/q")'"

# 2. One line and the right status.
expect() {	# STATUS PATTERN COMMAND...
	local want=$1 pat=$2 out rc
	shift 2
	out=$(timeout 60 "$@" 2>&1 </dev/null)
	rc=$?
	[ "$rc" = "$want" ] || fail "$*: exit $rc, want $want ($out)"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$*: not one line: $out"
	case $out in *$pat*) ;; *) fail "$*: '$out' does not say '$pat'" ;; esac
}
head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$T/key"
head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$T/other"
chmod 600 "$T/key" "$T/other"
mkdir "$T/mnt"
I=("$SC_BIN" init --cipher=aes-xts --plaintext-names --keyfile="$T/key")
# libgfapi's log in T, not /var/log/glusterfs (the default)
M=("$SC_BIN" mount -f --keyfile="$T/key" -o gluster_log="$T/gl.log")
expect 2 "bad URL" "${I[@]}" gluster://127.0.0.1
expect 2 "bad URL" "${I[@]}" gluster:///vol
expect 2 "port must be 1-65535" "${I[@]}" gluster://127.0.0.1:0/vol
expect 2 "bad volume name" "${I[@]}" "gluster://127.0.0.1/a b"
expect 10 "cannot connect to volume scnovol" "${I[@]}" gluster://127.0.0.1/scnovol
expect 10 "cannot connect to volume v on nosuchhost.invalid:24007" "${I[@]}" gluster://nosuchhost.invalid/v
expect 10 "cannot connect to volume $SC_GLUSTER_VOL on 127.0.0.1:1" "${I[@]}" gluster://127.0.0.1:1/"$SC_GLUSTER_VOL"
expect 10 "directory /nope of volume $SC_GLUSTER_VOL: No such file" "${I[@]}" "$URL/nope"
expect 10 "is not empty" "${I[@]}" "$URL"
expect 2 "bad URL" "${M[@]}" gluster://127.0.0.1 "$T/mnt"
expect 10 "cannot connect to volume scnovol" "${M[@]}" gluster://127.0.0.1/scnovol "$T/mnt"
expect 10 "cannot connect to volume scnovol" "$SC_BIN" mount -f --stack=passthrough \
	-o gluster_log="$T/gl.log" gluster://127.0.0.1/scnovol "$T/mnt"
expect 13 "no stackcrypt volume in $SRC/d" "${M[@]}" "$SRC/d" "$T/mnt"

# A volume made through libgfapi: its config where the FUSE client sees it;
# a second init and a wrong key refused.
mkdir "$BACKING/v" || fail "mkdir v"
"${I[@]}" "$SRC/v" >"$T/init.out" 2>&1 || fail "init $SRC/v: $(cat "$T/init.out")"
[ -f "$BACKING/v/.stackcrypt.conf" ] || fail "no config on the volume after init"
[ "$(stat -c %a "$BACKING/v/.stackcrypt.conf")" = 600 ] || fail "config mode $(stat -c %a "$BACKING/v/.stackcrypt.conf")"
[ -z "$(find "$BACKING/v" -name '.stackcrypt.conf.tmp-*')" ] || fail "init left a temporary file"
expect 10 "already holds a stackcrypt volume" "${I[@]}" "$SRC/v"
expect 12 "" "$SC_BIN" mount -f --keyfile="$T/other" -o gluster_log="$T/gl.log" "$SRC/v" "$T/mnt"
"$SC_BIN" info "$SRC/v" >"$T/info.out" 2>&1 || fail "info: $(cat "$T/info.out")"
grep -q "^cipher: *aes-xts" "$T/info.out" || fail "info: $(cat "$T/info.out")"
findmnt -rn --mountpoint "$T/mnt" >/dev/null && fail "a refused mount left $T/mnt mounted"
# fsck reads over gluster:// (gfapi_fsck_test.sh), --repair is refused in one
# line, not as a path error (passwd and recovery: gfapi_tools_test.sh)
expect 0 "; 0 problems" "$SC_BIN" fsck --keyfile="$T/key" "$SRC/v"
expect 2 "--repair cannot change a volume over gluster:// yet" \
	"$SC_BIN" fsck --repair --keyfile="$T/key" "$SRC/v"

# 3. fstab: gluster://127.0.0.1/VOL/.../v  /mnt  fuse.stackcrypt  nosuid,nodev,keyfile=KEY
mkdir "$T/bin" "$T/fmnt" && ln -s "$SC_BIN" "$T/bin/stackcrypt" || fail "mkdir"
out=$(env PATH="$T/bin:$PATH" timeout 60 mount.fuse3 "$SRC/v" "$T/fmnt" -t fuse.stackcrypt \
	-o rw,nosuid,nodev,keyfile="$T/key",gluster_log="$T/fstab.log" 2>&1) ||
	fail "mount.fuse3 $SRC/v: $out"
awk -v m="$T/fmnt" -v s="$SRC/v" '$5 == m { for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 2) == s) f = 1; break } }
	END { exit !f }' /proc/self/mountinfo || fail "no fstab mount of $SRC/v at $T/fmnt"
printf 'fstab\n' >"$T/fmnt/f" && [ "$(cat "$T/fmnt/f")" = fstab ] || fail "write/read through the fstab mount"
# one mount per volume: a second one is refused while the first runs ...
expect 10 "in use by another stackcrypt mount" "${M[@]}" "$SRC/v" "$T/mnt"
# umount_gone DIR: unmounts DIR and waits for its daemon to exit.  The
# daemon detached, and it lets the volume's lock go with its connection
# after fusermount3 has returned: a mount right after was refused, seen in
# a CI run.
umount_gone() {
	local pids
	pids=$(daemon_pids "$1")
	[ -n "$pids" ] || fail "no daemon of the mount at $1"
	fusermount3 -u "$1" || fail "fusermount3 -u $1"
	# shellcheck disable=SC2086  # a list of pids
	sc_wait_gone $pids
}
umount_gone "$T/fmnt"
# ... and allowed once it is gone (the lock went with its connection)
"$SC_BIN" mount --keyfile="$T/key" -o gluster_log="$T/fstab.log" "$SRC/v" "$T/fmnt" >"$T/m2.out" 2>&1 ||
	fail "mount after the first one ended: $(cat "$T/m2.out")"
[ "$(cat "$T/fmnt/f")" = fstab ] || fail "second mount reads '$(cat "$T/fmnt/f")'"
umount_gone "$T/fmnt"
[ "$(stat -c %s "$BACKING/v/f")" != 6 ] || [ "$(cat "$BACKING/v/f")" != fstab ] ||
	fail "the fstab mount stored plaintext"
for f in /var/log/glusterfs/stackcrypt-"$SC_GLUSTER_VOL".log /var/log/glusterfs/stackcrypt-scnovol.log; do
	[ ! -e "$f" ] || fail "a mount given gluster_log= logged to $f"
done
echo "gfapi-cli: all checks passed"
