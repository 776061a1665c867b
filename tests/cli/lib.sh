# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh - helpers for the command-line tests (sourced by tests/cli/t_*.sh).
#
# Every test runs the real binary ($SC_BIN) in a private temporary directory
# and asserts both the exit status and the message of each command.  Mounts
# made by a test are unmounted, and daemons it started are stopped by PID,
# by the EXIT trap, also when an assertion fails half way, and when the
# meson that runs the test dies (tests/lib/with_parent.sh: SIGTERM, then
# the same EXIT trap), and when meson SIGKILLs the test before that trap is
# done (tests/lib/guard.sh: the same cleanup, from a guard process).

set -u
# shellcheck source=../lib/with_parent.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/with_parent.sh"
sc_die_with_parent "$@"
# shellcheck source=../lib/guard.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/guard.sh"

: "${SC_BIN:?SC_BIN must point at the stackcrypt binary}"
CLI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T=$(mktemp -d /tmp/sc-cli.XXXXXX)
chmod 755 "$T"			# the nobody-user tests must reach into it
SC_PIDS=()			# daemons started in the foreground by sc_mount_fg
# A background mount with nothing on /dev/log logs to a file under
# $XDG_STATE_HOME (docs/usage.md, Messages): here, not in /var/log.
export XDG_STATE_HOME="$T/state"
FAILS=0
CHECKS=0

# Exit codes (include/sc_cmd.h).
E_OK=0 E_FAIL=1 E_USAGE=2 E_BACKING=10 E_MOUNTPOINT=11 E_BADPASS=12 E_CONFIG=13 E_SECRET=14

cleanup() {
	local pid pids
	trap '' PIPE	# a dead reader (meson killed) must not cut the cleanup short
	# Daemons that detached themselves (or whose shell was killed): found
	# by the mountpoint in their argv before the unmount below -- a daemon
	# that is exiting has no /proc/PID/exe left to be found by -- then
	# stopped and waited for.
	pids=$(daemon_pids "$T")
	# unmount everything below $T (deepest first), then stop our daemons
	sc_unmount_below "$T" 2>/dev/null
	for pid in "${SC_PIDS[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	for pid in $pids; do
		kill "$pid" 2>/dev/null
	done
	# shellcheck disable=SC2086  # a list of pids
	[ -z "$pids" ] || sc_wait_gone $pids
	rm -rf "$T"
}
trap cleanup EXIT

# The same for a test SIGKILLed before its EXIT trap is done: found by
# looking (mounts and daemons under $T), so it finds nothing after it.
# shellcheck disable=SC2317  # run by the guard
leftovers() { [ ! -d "$T" ] || cleanup; }
sc_guard leftovers

fail() {
	echo "FAIL: $*" >&2
	FAILS=$((FAILS + 1))
}

# run CMD...: runs it with no stdin, output (stdout+stderr) in $T/out, status in $RC.
run() {
	"$@" >"$T/out" 2>&1 </dev/null
	RC=$?
}

# judge RC SUBSTRING WHAT: the verdict of expect and expect_in on $RC and
# $T/out (WHAT names the command in the FAIL line).  Returns 0 if the exit
# status is RC and the output holds SUBSTRING, else 1.
judge() {
	local want=$1 msg=$2 what=$3
	if [ "$RC" != "$want" ]; then
		fail "$what exited $RC, want $want; output:"
		sed 's/^/    /' "$T/out" >&2
		return 1
	fi
	if [ -n "$msg" ] && ! grep -qiF -- "$msg" "$T/out"; then
		fail "$what output lacks '$msg'; output:"
		sed 's/^/    /' "$T/out" >&2
		return 1
	fi
	return 0
}

# expect RC SUBSTRING CMD...: runs CMD and checks its exit status and that
# its output (stdout and stderr) holds SUBSTRING (fixed string, any case).
expect() {
	local want=$1 msg=$2
	shift 2
	CHECKS=$((CHECKS + 1))
	"$@" >"$T/out" 2>&1 </dev/null
	RC=$?
	judge "$want" "$msg" "'$*'"
}

# passwd_lock_race BACKING NEW-SECRET-OPTION WANT [CMD...]: two passwd at
# once on BACKING (a directory or gluster://...: the test is the same for
# every backing), or a passwd and CMD (a stackcrypt command line, BACKING
# last); the second is refused while the first holds the config lock
# (from reading the old config to writing the new one), and the first, run
# with $T/pw and NEW-SECRET-OPTION, wins and prints WANT.  Its extpass runs
# with the lock held: it says so, then holds it until the second command has
# been refused -- no sleep decides the order.
passwd_lock_race() {
	local backing=$1 new=$2 want=$3 first
	shift 3
	[ $# -gt 0 ] || set -- passwd --passfile="$T/pw" --new-passfile="$T/wrong" "$backing"
	"$SC_BIN" passwd --extpass="touch '$T/holding'; while [ -e '$T/holding' ]; do sleep 0.05; done; cat '$T/pw'" \
		"$new" "$backing" >"$T/first" 2>&1 &
	first=$!
	while [ ! -e "$T/holding" ] && kill -0 "$first" 2>/dev/null; do sleep 0.05; done
	expect $E_FAIL "another stackcrypt command is changing the config of $backing" \
		"$SC_BIN" "$@"
	rm -f "$T/holding"
	wait "$first"
	check "first passwd succeeded: $(cat "$T/first")" grep -q "$want" "$T/first"
}

# expect_in RC SUBSTRING INPUT CMD...: as expect, with INPUT on stdin.
expect_in() {
	local want=$1 msg=$2 input=$3
	shift 3
	CHECKS=$((CHECKS + 1))
	printf '%s' "$input" | "$@" >"$T/out" 2>&1
	RC=$?
	judge "$want" "$msg" "'$*' (stdin)"
}

# check DESCRIPTION CMD...: a plain assertion.
check() {
	local what=$1
	shift
	CHECKS=$((CHECKS + 1))
	"$@" || fail "$what"
}

# SC_CLI_INIT_OPTS: more `init` options for every volume the tests make
# (split on blanks; meson's -names variants set --encrypt-names).  init_opts
# is that list, empty when the caller asks for --header-version=1, which
# names exclude (such a volume is one a names run cannot have).
read -ra SC_CLI_INIT <<<"${SC_CLI_INIT_OPTS:-}"
init_opts() {
	case " $* " in *" --header-version=1 "*) return ;; esac
	[ "${#SC_CLI_INIT[@]}" -eq 0 ] || printf '%s\n' "${SC_CLI_INIT[@]}"
}
# kind_opts [init options...]: what makes an init the volume the tests were
# written for, whatever init's default (aes-gcm with names, issue #28):
# --cipher=aes-xts unless a --cipher is given (here or in SC_CLI_INIT_OPTS),
# --plaintext-names unless --encrypt-names is.
kind_opts() {
	case " ${SC_CLI_INIT[*]} $* " in *" --cipher="*) ;; *) echo --cipher=aes-xts ;; esac
	case " ${SC_CLI_INIT[*]} $* " in *" --encrypt-names "*) ;; *) echo --plaintext-names ;; esac
}
# names_on: true when the volumes of this run encrypt names.
names_on() {
	case " ${SC_CLI_INIT[*]} " in *" --encrypt-names "*) return 0 ;; esac
	return 1
}

# new_volume DIR [init options...]: a fresh volume with password file $T/pw
# (password "correct horse") and a cheap scrypt cost; its master key in $T/mk.
# SC_CLI_INIT_OPTS are added (see init_opts).  What the tests were written
# for stays what they get: aes-xts unless a --cipher is given, names in the
# clear unless --encrypt-names is (init's default is aes-gcm with names).
new_volume() {
	local dir=$1 extra
	shift
	mkdir -p "$dir"
	[ -f "$T/pw" ] || (umask 077; printf 'correct horse\n' >"$T/pw")
	rm -f "$T/mk"
	mapfile -t extra < <(init_opts "$@"; kind_opts "$@")
	"$SC_BIN" init --scrypt-n=1024 --passfile="$T/pw" --save-masterkey="$T/mk" \
		"${extra[@]}" "$@" "$dir" \
		>"$T/init.out" 2>"$T/init.err" ||
		{ fail "init $dir failed: $(cat "$T/init.err")"; return 1; }
}

# backing_of PATH BACKING: the backing file of PATH (a path in a mount of
# BACKING), found by inode: the mount reports the backing file's st_ino, so
# this works whatever the names look like in BACKING (encrypted or not).
# Prints every backing path of that inode (one per hard link); fails if none.
backing_of() {
	local ino
	ino=$(stat -c %i -- "$1") || return 1
	find "$2" -xdev -inum "$ino" | grep . || { echo "no backing file for $1 (inode $ino)" >&2; return 1; }
}

# backing_map MNT BACKING REL...: BK[REL] = the backing path of MNT/REL
# (backing_of; the first link of a hard-linked file), for tests that damage
# or inspect backing files and must work whether names are encrypted or not.
declare -A BK=()
backing_map() {
	local m=$1 b=$2 rel
	shift 2
	for rel; do
		BK[$rel]=$(backing_of "$m/$rel" "$b" | head -n1) ||
			fail "no backing file for $rel"
	done
}

# in_mount REL: what fsck adds to a message about the file at REL in the
# mount when names are encrypted (nothing otherwise).
in_mount() {
	names_on && printf ' (in the mount: /%s)' "$1"
	return 0
}

# flip FILE OFF...: XOR the byte at each OFF with 0x01, in place.  Damage
# is made by XOR, never by writing a fixed value, which leaves the byte as
# it was once in 256 runs (and the test then fails by chance).
flip() {
	python3 - "$@" <<'EOF'
import sys
path, offs = sys.argv[1], [int(o) for o in sys.argv[2:]]
with open(path, "r+b") as f:
    for o in offs:
        f.seek(o)
        b = f.read(1)
        if len(b) != 1:
            sys.exit(f"flip: {path}: no byte at offset {o}")
        f.seek(o)
        f.write(bytes([b[0] ^ 1]))
EOF
}

# read_eio PATH WHAT: reading PATH fails with EIO (one check), then once more
# (a second read of the same damage: the daemon must not log it again).
read_eio() {
	local out
	CHECKS=$((CHECKS + 1))
	if out=$(cat "$1" 2>&1 >/dev/null); then
		fail "$2: $1 reads"
	elif [[ "$out" != *"Input/output error"* ]]; then
		fail "$2: $1: $out, want EIO"
	fi
	cat "$1" >/dev/null 2>&1
}

# new_keyfile FILE: 64 hex digits from the CSPRNG.
new_keyfile() {
	head -c32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$1"
	echo >>"$1"
}

is_mounted() {
	awk -v m="$(realpath -m "$1")" '$5 == m {f=1} END {exit !f}' /proc/self/mountinfo
}

# sc_mount_fg BACKING MNT [options...]: mounts in the foreground (-f) in the
# background of this shell, remembers the PID, waits for the mount.  With
# SC_TEST_IO_URING=1 (tests/mount/harness.sh) over FUSE over io_uring: adds
# -o io_uring, and sc_umount fails the test if the daemon fell back.
sc_mount_fg() {
	local b=$1 m=$2
	shift 2
	[ "${SC_TEST_IO_URING:-}" = 1 ] && set -- "$@" -o io_uring
	"$SC_BIN" mount -f "$@" "$b" "$m" >"$T/daemon.log" 2>&1 </dev/null &
	SC_PIDS+=($!)
	# No deadline of our own: the mount is up, or the daemon has exited
	# (meson's timeout bounds a hang); a loaded machine only makes it slower.
	while ! is_mounted "$m"; do
		kill -0 "${SC_PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	is_mounted "$m" && return 0
	fail "mount of $b on $m did not come up: $(cat "$T/daemon.log")"
	return 1
}

# sc_umount MNT: unmounts and waits for the foreground daemons to exit.
sc_umount() {
	local pid i
	# A mount that stays busy (EBUSY) is a failure, never a hang: five
	# tries, then the holders named, the mount detached and its daemons
	# killed, so that the wait below ends.  (Seen once in eight runs of
	# cli-powerloss-xts beside other tests, holder unknown.)
	for i in 1 2 3 4 5; do
		fusermount3 -u "$1" 2>"$T/umount.err" && break
		is_mounted "$1" || break
		sleep 0.2
	done
	if is_mounted "$1"; then
		fail "fusermount3 -u $1: $(cat "$T/umount.err"); held by: $(fuser -vm "$1" 2>&1 | tr '\n' ' ')"
		fusermount3 -uz "$1" 2>/dev/null || umount -l "$1"
		kill -KILL "${SC_PIDS[@]}" 2>/dev/null
	fi
	for pid in "${SC_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	SC_PIDS=()
	if [ "${SC_TEST_IO_URING:-}" = 1 ] && grep -q 'serving over /dev/fuse' "$T/daemon.log"; then
		fail "SC_TEST_IO_URING=1, but the daemon fell back to /dev/fuse: $(cat "$T/daemon.log")"
	fi
}

# kill_with_writer PID FLAG: once the writer PID has made FLAG (its writes
# done, its handles open), the daemon of the last sc_mount_fg (on $T/m) is
# killed -9; then the writer is stopped and the dead mount detached.
kill_with_writer() {
	local writer=$1 flag=$2
	until [ -e "$flag" ]; do
		kill -0 "$writer" 2>/dev/null || { fail "the writer died"; break; }
		sleep 0.1
	done
	kill -9 "${SC_PIDS[-1]}"
	wait "${SC_PIDS[-1]}" 2>/dev/null
	kill "$writer" 2>/dev/null
	wait "$writer" 2>/dev/null
	SC_PIDS=()
	fusermount3 -u "$T/m" 2>/dev/null || umount -l "$T/m"
}

# ---- for the rekey tests (t_rekey.sh, t_rekey_integrity.sh) ----
# Their source tree is $T/src, its tree_listing $T/want; password file
# $T/pw, the master key before the rekey in $T/mk.

# tree_listing DIR: what must survive a rekey: type, mode, size, mtime, links,
# targets, xattrs (names are relative).
tree_listing() {
	(cd "$1" && find . -mindepth 1 -printf '%p %y %m %s %T@ %n %l\n' | sort &&
		find . -mindepth 1 -type f -print0 | sort -z |
		xargs -0 getfattr -d -m '^user\.' 2>/dev/null)
}

# same_tree BACKING WHAT SECRET...: mounted with SECRET, the tree equals $T/src.
same_tree() {
	local b=$1 what=$2
	shift 2
	sc_mount_fg "$b" "$T/m" "$@" || return 1
	check "$what: contents equal the source's" diff -r --no-dereference -x fifo "$T/src" "$T/m"
	tree_listing "$T/m" >"$T/got"
	check "$what: modes, sizes, times, links equal the source's: $(diff "$T/want" "$T/got" | head -5 | tr '\n' ' ')" \
		cmp -s "$T/want" "$T/got"
	sc_umount "$T/m"
	check "$what: no error in the daemon's log: $(cat "$T/daemon.log")" \
		bash -c "! grep -qi error '$T/daemon.log'"
}

# rekey_after BACKING WHAT: the checks that follow every finished rekey.
rekey_after() {
	local b=$1 what=$2
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$b"
	same_tree "$b" "$what" --passfile="$T/pw"
	expect $E_BADPASS "does not match" "$SC_BIN" fsck --masterkey="$T/mk" "$b"
	check "$what: no rekey state or directory left: $(ls -A "$b")" \
		bash -c "! ls -A '$b' | grep -q rekey"
}

# append_killed BACKING REL: BACKING mounted on $T/m, 5003 random bytes
# appended to REL by a writer that keeps its handle open, then the daemon
# killed -9 with it (kill_with_writer); what REL must hold after is in
# $T/ap.want (rekey and upgrade of a volume whose last mount was killed).
append_killed() {
	local b=$1 rel=$2
	sc_mount_fg "$b" "$T/m" --passfile="$T/pw" || finish
	head -c 5003 /dev/urandom >"$T/chunk"
	cat "$T/m/$rel" "$T/chunk" >"$T/ap.want"
	python3 - "$T/m/$rel" "$T/chunk" "$T/wrote" <<'EOF' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, open(sys.argv[2], "rb").read())
open(sys.argv[3], "w").close()
time.sleep(600)	# the handle stays open: killed with the daemon
EOF
	kill_with_writer $! "$T/wrote"
}

# append_kept BACKING REL WHAT: after append_killed and the command WHAT
# (rekeyed, upgraded), REL holds every byte written and a mount logs no
# warning or error.
append_kept() {
	local b=$1 rel=$2 what=$3
	sc_mount_fg "$b" "$T/m" --passfile="$T/pw" || finish
	check "killed while appending: the $what file holds every byte written" \
		cmp -s "$T/m/$rel" "$T/ap.want"
	sc_umount "$T/m"
	check "killed while appending: no warning or error once $what: $(cat "$T/daemon.log")" \
		bash -c "! grep -qi -e error -e warning -e 'no freshness record' '$T/daemon.log'"
}

# killed_at N [CMD...]: the volume $T/pristine copied to $T/v (and this
# client's freshness records $T/sd0, when there are any, into the state
# directory; else none), then `stackcrypt upgrade` (or CMD, the volume
# last) run on it with a kill at its Nth step (SC_REKEY_FAULT=N, no
# timing): true if it was killed there; false if it finished (there is no
# step N) or failed (a FAIL line).
killed_at() {
	local n=$1 sd=$XDG_STATE_HOME/stackcrypt
	shift
	[ $# -gt 0 ] || set -- upgrade --passfile="$T/pw"
	rm -rf "$T/v" "$sd"
	cp -a "$T/pristine" "$T/v"
	[ ! -d "$T/sd0" ] || cp -a "$T/sd0" "$sd"
	run env SC_REKEY_FAULT="$n" "$SC_BIN" "$@" "$T/v"
	CHECKS=$((CHECKS + 1))
	[ "$RC" = 137 ] && return 0
	[ "$RC" = 0 ] || fail "$1 with fault $n exited $RC: $(cat "$T/out")"
	return 1
}

# finish: prints a summary and exits 1 if any check failed.
finish() {
	echo "$CHECKS checks, $FAILS failed"
	[ "$FAILS" -eq 0 ] || exit 1
	[ "$CHECKS" -gt 0 ] || { echo "no checks ran" >&2; exit 1; }
	exit 0
}

# hooks_kind SCRIPT NAME: for the tests run by stackcrypt-testhooks on each
# volume kind (t_steps.sh, t_powerloss.sh): checks SC_HOOKS_BIN, sets
# kind_name and kind (the init options of integrity, unit-tree: integrity
# with the unit tree and listing records, gcm: the default, or xts); a
# usage line and exit 2 for another NAME.
hooks_kind() {
	[ -x "${SC_HOOKS_BIN:-}" ] || { fail "SC_HOOKS_BIN (stackcrypt-testhooks) is not set"; finish; }
	kind_name=${2:-}
	case $kind_name in
	integrity) kind=(--cipher=aes-gcm --encrypt-names --integrity) ;;
	unit-tree) kind=(--cipher=aes-gcm --encrypt-names --integrity --unit-tree) ;;
	gcm) kind=(--cipher=aes-gcm --encrypt-names) ;;
	xts) kind=(--cipher=aes-xts) ;;
	*) echo "usage: $1 integrity|unit-tree|gcm|xts" >&2; exit 2 ;;
	esac
}

# hooks_armed_run WHAT N CMD...: a fresh copy of the volume (HOOKS_COPY, a
# command, when set; else $T/v0 copied to $T/v) and of the freshness
# record $T/s0, then HOOKS_PREPARE (a command, when set: before the mount),
# then the volume (HOOKS_VOL, default $T/v) mounted on $T/m by
# stackcrypt-testhooks armed to die before its Nth change to the backing
# store (SC_TEST_KILL_STEP; more hook variables may come in the caller's
# environment), CMD run on it, and the unmount.  Returns 0 when the daemon
# was killed, 1 when CMD and the unmount ran to the end, 2 when the daemon
# exited otherwise (recorded as a failure of WHAT).  For t_steps.sh and
# t_powerloss.sh.
hooks_copy_dir() { rm -rf "$T/v" && cp -a "$T/v0" "$T/v"; }
hooks_armed_run() {
	local what=$1 n=$2 rc
	shift 2
	rm -rf "$XDG_STATE_HOME/stackcrypt" "$T/arm"
	${HOOKS_COPY:-hooks_copy_dir} && cp -a "$T/s0" "$XDG_STATE_HOME/stackcrypt" &&
		${HOOKS_PREPARE:-true} || { fail "copy"; finish; }
	SC_BIN=$SC_HOOKS_BIN SC_TEST_KILL_STEP=$n SC_TEST_KILL_ARM=$T/arm \
		sc_mount_fg "${HOOKS_VOL:-$T/v}" "$T/m" --passfile="$T/pw" || finish
	touch "$T/arm"
	# the command's errors and status, and a daemon's log that was not
	# killed, kept for the caller's message (t_steps.sh: "ran to the end")
	"$@" 2>"$T/armed.err"
	echo "exit status $?" >>"$T/armed.err"
	fusermount3 -u "$T/m" 2>/dev/null || umount -l "$T/m"
	wait "${SC_PIDS[-1]}" 2>/dev/null
	rc=$?
	SC_PIDS=()
	[ "$rc" = 0 ] && { cp "$T/daemon.log" "$T/armed.log"; return 1; }
	CHECKS=$((CHECKS + 1))
	[ "$rc" = 137 ] && return 0
	fail "$what, step $n: the daemon exited $rc: $(cat "$T/daemon.log")"
	return 2
}
