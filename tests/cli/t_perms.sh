#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Permission checks of a mount only its user reaches (no allow_other): the
# mount goes without default_permissions (fs/cli/cmd_mount.c), every call
# runs as that user below, and access(2) and chdir(2) reach the daemon
# (op_access).  Checked here, each answer the one POSIX gives:
#  - root's mount: /proc/mounts shows no default_permissions, allow_other
#    and -o default_permissions bring it back; root reads and writes a file
#    of mode 0000 and enters a directory of mode 0000, but executes no file
#    without an x bit (access(2) and execve); test -x on one with an x bit;
#  - a mount made by an ordinary user (uid 65534 through fusermount3): that
#    user's access(2) and calls against its own files as the backing file
#    system answers them (a file of mode 0444 not opened for writing, one
#    of 0000 not read, a directory of 0555 gets no new name, one of 0600
#    is not entered); root is kept out of it (EACCES), as without
#    allow_root; a directory of mode 0000 is listed by its parent after a
#    remount (its record is read at its first use), and its mode can be
#    given back.
. "$(dirname "$0")/lib.sh"

U=65534
mount_opts() { awk -v m="$(realpath -m "$1")" '$2 == m {print $4}' /proc/mounts; }
has_dp() { grep -q default_permissions <<<"$(mount_opts "$1")"; }
mnt() { sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" "$@"; }
no_error() { check "$1: the daemon logged no error: $(cat "$T/daemon.log")" \
	bash -c "! grep -qi error '$T/daemon.log'"; }

mkdir -p "$T/m"
new_volume "$T/v" --cipher=aes-gcm --encrypt-names || finish

# --- root's own mount ------------------------------------------------------
mnt || finish
check "no default_permissions without allow_other: $(mount_opts "$T/m")" \
	eval '! has_dp "$T/m"'
printf 'secret\n' >"$T/m/none" && chmod 0000 "$T/m/none"
printf '#!/bin/sh\necho ran\n' >"$T/m/plain" && chmod 0644 "$T/m/plain"
cp "$T/m/plain" "$T/m/tool" && chmod 0755 "$T/m/tool"
mkdir "$T/m/shut" && chmod 0000 "$T/m/shut"
check "root reads a file of mode 0000" test "$(cat "$T/m/none")" = secret
check "root writes it" bash -c "echo more >>'$T/m/none'"
check "access(R_OK|W_OK) of it as root" test -r "$T/m/none" -a -w "$T/m/none"
check "access(X_OK) of it as root: refused" test ! -x "$T/m/none"
check "access(X_OK) of a 0644 file as root: refused" test ! -x "$T/m/plain"
check "execve of a 0644 file as root: EACCES" \
	bash -c "! '$T/m/plain' 2>'$T/exec.err' && grep -q 'Permission denied' '$T/exec.err'"
check "access(X_OK) of a 0755 file as root" test -x "$T/m/tool"
check "execve of it" test "$("$T/m/tool")" = ran
check "root enters a directory of mode 0000" bash -c "cd '$T/m/shut' && touch inside"
check "access(X_OK) of that directory as root" test -x "$T/m/shut"
check "access(F_OK) of a name that exists" test -e "$T/m/shut/inside"
chmod 0755 "$T/m/shut"
sc_umount "$T/m"
no_error "root's mount"
mnt -o allow_other || finish
check "allow_other brings default_permissions: $(mount_opts "$T/m")" has_dp "$T/m"
sc_umount "$T/m"
mnt -o default_permissions || finish
check "-o default_permissions is kept: $(mount_opts "$T/m")" has_dp "$T/m"
check "with it, root still executes no 0644 file" test ! -x "$T/m/plain"
sc_umount "$T/m"
no_error "the mounts with default_permissions"

# --- an ordinary user's mount ----------------------------------------------
# as U, with no supplementary groups, in the test's directory.  libfuse
# opens /dev/fuse itself before it asks fusermount3, so a user's mount
# needs the device open to all (crw-rw-rw-, what Debian's udev rule gives
# it); a machine that has it 0600 gets that for the test, put back at exit.
as_u() { setpriv --reuid=$U --regid=$U --clear-groups -- "$@"; }
fuse_mode=$(stat -c %a /dev/fuse)
if [ "$fuse_mode" != 666 ]; then
	trap 'chmod "$fuse_mode" /dev/fuse; cleanup' EXIT
	chmod 0666 /dev/fuse || { fail "chmod 0666 /dev/fuse"; finish; }
fi
mkdir "$T/u" "$T/u/m" "$T/u/v"
chown -R $U:$U "$T/u"
cp "$T/pw" "$T/u/pw" && chown $U:$U "$T/u/pw" && chmod 0600 "$T/u/pw"
as_u "$SC_BIN" init --scrypt-n=1024 --passfile="$T/u/pw" "$T/u/v" >"$T/uinit.out" 2>&1 ||
	{ fail "init as uid $U: $(cat "$T/uinit.out")"; finish; }
M=$T/u/m
mount_u() {
	as_u "$SC_BIN" mount -f --passfile="$T/u/pw" "$T/u/v" "$M" >>"$T/daemon.log" 2>&1 </dev/null &
	SC_PIDS+=($!)
	while ! is_mounted "$M"; do
		kill -0 "${SC_PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	is_mounted "$M" || { fail "the mount as uid $U did not come up: $(cat "$T/daemon.log")"; finish; }
}
: >"$T/daemon.log"
mount_u
check "the user's mount has no default_permissions: $(mount_opts "$T/u/m")" \
	eval '! has_dp "$T/u/m"'
as_u sh -c "echo data >'$M/ro' && chmod 0444 '$M/ro' && echo data >'$M/none' &&
	chmod 0000 '$M/none' && mkdir '$M/rx' '$M/shut' && chmod 0555 '$M/rx' &&
	chmod 0600 '$M/shut' && echo x >'$M/mine'" 2>"$T/u.err" ||
	fail "the user's files: $(cat "$T/u.err")"
check "access(W_OK) of the user's 0444 file: refused" as_u test ! -w "$M/ro"
check "access(R_OK) of it" as_u test -r "$M/ro"
check "opening it for writing: EACCES" \
	bash -c "! setpriv --reuid=$U --regid=$U --clear-groups -- sh -c 'echo y >>\"$M/ro\"' 2>'$T/e' && grep -q 'Permission denied' '$T/e'"
check "it is unchanged" test "$(as_u cat "$M/ro")" = data
check "reading the user's 0000 file: EACCES" \
	bash -c "! setpriv --reuid=$U --regid=$U --clear-groups -- cat '$M/none' 2>'$T/e' && grep -q 'Permission denied' '$T/e'"
check "access(R_OK) of it: refused" as_u test ! -r "$M/none"
check "a new name in the user's 0555 directory: EACCES" \
	bash -c "! setpriv --reuid=$U --regid=$U --clear-groups -- touch '$M/rx/new' 2>'$T/e' && grep -q 'Permission denied' '$T/e'"
check "access(W_OK) of that directory: refused" as_u test ! -w "$M/rx"
check "the user stats its 0600 directory: $(as_u stat -c %a "$M/shut" 2>&1)" \
	test "$(as_u stat -c %a "$M/shut")" = 600
check "chdir into it: EACCES" \
	bash -c "! setpriv --reuid=$U --regid=$U --clear-groups -- /usr/bin/python3 -c 'import os, sys; os.chdir(sys.argv[1])' '$M/shut' 2>'$T/e' && grep -q PermissionError '$T/e'"
check "access(X_OK) of it: refused" as_u test ! -x "$M/shut"
check "access(R_OK) of it" as_u test -r "$M/shut"
check "the user writes its own 0644 file" as_u sh -c "echo y >>'$M/mine'"
# a directory the daemon (the user) may not read or search when the mount
# first looks it up: the lookup still answers (its record is read at its
# first use), so the parent lists and the user can give the mode back
as_u sh -c "mkdir '$M/lock' && echo inside >'$M/lock/f' && chmod 0000 '$M/lock'" ||
	fail "the user's directory /lock"
sc_umount_u() {
	for i in 1 2 3 4 5; do
		fusermount3 -u "$M" 2>"$T/umount.err" && break
		sleep 0.2
	done
	is_mounted "$M" && fail "fusermount3 -u $M as root: $(cat "$T/umount.err")"
	wait "${SC_PIDS[@]}" 2>/dev/null
	SC_PIDS=()
}
sc_umount_u
mount_u
check "ls -l of the parent lists the user's 0000 directory: $(as_u ls -l "$M" 2>&1 | tr '\n' ' ')" \
	bash -c "setpriv --reuid=$U --regid=$U --clear-groups -- ls -l '$M' | grep -q ' lock\$'"
check "listing it: EACCES" \
	bash -c "! setpriv --reuid=$U --regid=$U --clear-groups -- ls '$M/lock' 2>'$T/e' && grep -q 'Permission denied' '$T/e'"
check "the user gives it its mode back" as_u chmod 0755 "$M/lock"
check "then its file reads back" test "$(as_u cat "$M/lock/f")" = inside
check "root is kept out of the user's mount (no allow_root)" \
	bash -c "! ls '$M' 2>'$T/e' && grep -q 'Permission denied' '$T/e'"
as_u chmod 0755 "$M/shut" "$M/rx"
sc_umount_u
no_error "the user's mount"
finish
