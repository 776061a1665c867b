#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A kill -9 at every step of the common file operations, on the volume kind
# $1: integrity (aes-gcm, names, --integrity), unit-tree (the same with
# --unit-tree: features 0x10, 0x20, 0x100), gcm (the default: aes-gcm
# with encrypted names) or xts (aes-xts, names in the clear).  The
# operations: a rename (to a new name, over a file, and a RENAME_EXCHANGE),
# two truncates (the final unit 10 and 100 bytes), an append, a write
# over two units, a create with its data, an unlink, a mkdir, a rmdir, a
# symlink, a hard link, the unlink of a hard-linked file's first name and
# the rename of its second (on integrity volumes: the tag dropped, the
# binding record moved; format.md 11.5) and a setxattr.
# stackcrypt-testhooks kills itself before the Nth change it makes to the
# backing store once the test has armed it (SC_TEST_KILL_STEP=N and
# SC_TEST_KILL_ARM, fs/xlators/posix/posix.c), for N = 1, 2, ... until the
# operation and the unmount after it complete with no kill: every crash
# point of the operation in turn, with no timing (issue #29; docs/format.md
# 10.10 and 11.8, the crash windows).  Each run starts from the same volume
# and the same freshness record.  After each kill:
#  - fsck exits 0, or 1 naming only the operation's files;
#  - the next mount reads the file old or new (an append: the old contents
#    and a prefix of what was appended; a new file: absent, or each byte
#    its own or zero, no longer than written; a rename: the file under one
#    of its two names), the other files as they were, and logs nothing but
#    the warnings of what it accepted;
#  - fsck --repair then leaves a volume on which fsck is clean.
# After the run that was not killed, the operation's result is checked.
. "$(dirname "$0")/lib.sh"

hooks_kind t_steps.sh "${1:-}"
BS=4096
# random contents: compared files are long, no match by chance
rnd() { head -c "$2" /dev/urandom >"$1"; }
LINK_TARGET=$(printf 'target%.0s' $(seq 40))	# 240 bytes: a long target on names volumes
XATTR_VALUE=$(head -c 48 /dev/urandom | base64 -w0)

mkdir -p "$T/m" "$T/p"
new_volume "$T/v0" "${kind[@]}" || finish
rnd "$T/p/a" $((3 * BS + 100))
rnd "$T/p/t" $((3 * BS + 100))
rnd "$T/p/ap" $((BS + 5))
rnd "$T/p/keep" $((BS + 1))
rnd "$T/p/r" $((2 * BS + 3))
rnd "$T/p/x" $((BS + 50))
rnd "$T/p/y" 77
rnd "$T/p/chunk" $((2 * BS + 9))
rnd "$T/p/new" $((2 * BS + 5))
rnd "$T/p/gone" $((BS + 9))
rnd "$T/p/w" $((2 * BS))
rnd "$T/p/hl" $((BS + 33))
sc_mount_fg "$T/v0" "$T/m" --passfile="$T/pw" || finish
mkdir "$T/m/d" "$T/m/e" || fail "mkdir d e"
for f in a t ap keep r x gone; do
	cp "$T/p/$f" "$T/m/$f" || fail "write $f"
done
cp "$T/p/y" "$T/m/d/y0" || fail "write d/y0"
cp "$T/p/hl" "$T/m/hl" && ln "$T/m/hl" "$T/m/d/hl2" || fail "write hl, link d/hl2"
sc_umount "$T/m"
mkdir -p "$XDG_STATE_HOME/stackcrypt"	# integrity volumes keep their freshness record there
cp -a "$XDG_STATE_HOME/stackcrypt" "$T/s0" || finish

# The operations, on a mount at $T/m (a kill makes them fail: no status).
op_rename() { mv "$T/m/a" "$T/m/d/b"; }
op_truncate() { truncate -s $((BS + 10)) "$T/m/t"; }
op_cut() { truncate -s $((BS + 100)) "$T/m/t"; }
op_append() { cat "$T/p/chunk" >>"$T/m/ap"; }
op_replace() { mv "$T/m/a" "$T/m/r"; }
op_create() { cp "$T/p/new" "$T/m/d/new"; }
op_unlink() { rm "$T/m/gone"; }
op_mkdir() { mkdir "$T/m/d/sub"; }
op_overwrite() { dd if="$T/p/w" of="$T/m/t" bs=$((2 * BS)) seek=$((BS + 100)) oflag=seek_bytes \
	conv=notrunc status=none; }
op_rmdir() { rmdir "$T/m/e"; }
op_symlink() { ln -s "$LINK_TARGET" "$T/m/d/ln"; }
op_link() { ln "$T/m/a" "$T/m/d/hl"; }
op_unlink_first() { rm "$T/m/hl"; }
op_rename_second() { mv "$T/m/d/hl2" "$T/m/hl3"; }
op_xattr() { setfattr -n user.colour -v "$XATTR_VALUE" "$T/m/t"; }
# renameat2(RENAME_EXCHANGE): coreutils 9.1 has no mv --exchange
op_exchange() {
	python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2) != 0:
    sys.exit(os.strerror(ctypes.get_errno()))' "$T/m/x" "$T/m/d/y0"
}

# same FILE MODEL [LEN]: FILE is MODEL's first LEN bytes (all of them).
same() {
	local len=${3:-$(stat -c %s "$2")}
	[ "$(stat -c %s "$1")" = "$len" ] && cmp -s -n "$len" "$1" "$2"
}

# xts_seam FILE SIZE: on aes-xts, the window of a cut to SIZE (format.md
# section 4, "A cut killed half way"): the old size, and the old bytes but
# the 32 of the two 16-byte blocks at the new end (around the unit
# boundary when the final unit is 1..15 bytes: the cross-unit tail), where
# the new end was stored and the cut was not made yet.
xts_seam() {
	local last=$(( ($2 - 1) / BS * BS )) at
	at=$(( $2 - last <= 15 ? last - 16 : last + ($2 - last) / 16 * 16 - 16 ))
	[ "$kind_name" = xts ] && [ "$(stat -c %s "$1")" = $((3 * BS + 100)) ] &&
		cmp -s -n "$at" "$1" "$T/p/t" && cmp -s -i $((at + 32)) "$1" "$T/p/t"
}

# seen_ok OP: after a kill during OP, the files read old or new (above).
seen_ok() {
	local m=$T/m k
	same "$m/keep" "$T/p/keep" || { echo "keep changed"; return 1; }
	case $1 in
	rename)
		if [ -e "$m/a" ] && [ ! -e "$m/d/b" ]; then
			same "$m/a" "$T/p/a" || { echo "a (not renamed) differs"; return 1; }
		elif [ -e "$m/d/b" ] && [ ! -e "$m/a" ]; then
			same "$m/d/b" "$T/p/a" || { echo "d/b (renamed) differs"; return 1; }
		else
			echo "a and d/b: $(ls -l "$m/a" "$m/d/b" 2>&1 | tr '\n' ' ')"
			return 1
		fi ;;
	replace)
		if same "$m/r" "$T/p/r"; then
			same "$m/a" "$T/p/a" || { echo "r not replaced, a differs"; return 1; }
		else
			same "$m/r" "$T/p/a" && [ ! -e "$m/a" ] ||
				{ echo "r is neither old r nor a, or a is still there"; return 1; }
		fi ;;
	exchange)
		{ same "$m/x" "$T/p/x" && same "$m/d/y0" "$T/p/y"; } ||
			{ same "$m/x" "$T/p/y" && same "$m/d/y0" "$T/p/x"; } ||
			{ echo "x and d/y0 are neither as they were nor exchanged"; return 1; } ;;
	create)
		[ ! -e "$m/d/new" ] || python3 -c 'import sys
got, want = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
sys.exit(len(got) > len(want) or any(g and g != w for g, w in zip(got, want)))' \
			"$m/d/new" "$T/p/new" ||
			{ echo "d/new holds bytes neither written nor zero"; return 1; } ;;
	unlink)
		[ ! -e "$m/gone" ] || same "$m/gone" "$T/p/gone" ||
			{ echo "gone is there, and differs"; return 1; } ;;
	overwrite)
		python3 -c 'import sys
got, old, new = (open(f, "rb").read() for f in sys.argv[1:4])
at = int(sys.argv[4])
want = old[:at] + new + old[at + len(new):]
sys.exit(len(got) != len(old) or any(g not in (o, w) for g, o, w in zip(got, old, want)))' \
			"$m/t" "$T/p/t" "$T/p/w" $((BS + 100)) ||
			{ echo "t holds bytes neither old nor written"; return 1; } ;;
	rmdir)
		[ ! -e "$m/e" ] || { [ -d "$m/e" ] && [ -z "$(ls -A "$m/e")" ]; } ||
			{ echo "e is there and not an empty directory"; return 1; } ;;
	symlink)
		[ ! -L "$m/d/ln" ] || [ "$(readlink "$m/d/ln")" = "$LINK_TARGET" ] ||
			{ echo "d/ln has another target"; return 1; } ;;
	link)
		same "$m/a" "$T/p/a" || { echo "a differs"; return 1; }
		[ ! -e "$m/d/hl" ] || [ "$(stat -c %i "$m/d/hl")" = "$(stat -c %i "$m/a")" ] ||
			{ echo "d/hl is not a link of a"; return 1; } ;;
	unlink_first)
		same "$m/d/hl2" "$T/p/hl" || { echo "d/hl2 differs"; return 1; }
		[ ! -e "$m/hl" ] || same "$m/hl" "$T/p/hl" || { echo "hl is there, and differs"; return 1; } ;;
	rename_second)
		same "$m/hl" "$T/p/hl" || { echo "hl differs"; return 1; }
		if [ -e "$m/d/hl2" ] && [ ! -e "$m/hl3" ]; then
			same "$m/d/hl2" "$T/p/hl" || { echo "d/hl2 (not renamed) differs"; return 1; }
		elif [ -e "$m/hl3" ] && [ ! -e "$m/d/hl2" ]; then
			same "$m/hl3" "$T/p/hl" || { echo "hl3 (renamed) differs"; return 1; }
		else
			echo "d/hl2 and hl3: $(ls -l "$m/d/hl2" "$m/hl3" 2>&1 | tr '\n' ' ')"
			return 1
		fi ;;
	xattr)
		local v
		v=$(getfattr --only-values -n user.colour "$m/t" 2>/dev/null)
		[ -z "$v" ] || [ "$v" = "$XATTR_VALUE" ] || { echo "user.colour is $v"; return 1; } ;;
	mkdir)
		[ ! -e "$m/d/sub" ] || { [ -d "$m/d/sub" ] && [ -z "$(ls -A "$m/d/sub")" ]; } ||
			{ echo "d/sub is not an empty directory"; return 1; } ;;
	truncate | cut)
		[ "$1" = truncate ] && k=$((BS + 10)) || k=$((BS + 100))
		same "$m/t" "$T/p/t" || same "$m/t" "$T/p/t" "$k" || xts_seam "$m/t" "$k" ||
			{ echo "t is neither old nor cut: $(stat -c %s "$m/t" 2>&1) bytes"; return 1; } ;;
	append)
		k=$(( $(stat -c %s "$m/ap") - BS - 5 ))
		[ "$k" -ge 0 ] && [ "$k" -le $((2 * BS + 9)) ] &&
			cmp -s -n $((BS + 5)) "$m/ap" "$T/p/ap" &&
			cmp -s -n "$k" -i $((BS + 5)):0 "$m/ap" "$T/p/chunk" ||
			{ echo "ap is not the old contents and a prefix of the chunk ($k more bytes)"; return 1; } ;;
	esac
}

# done_ok OP: after OP ran to the end, the files are the new ones.
done_ok() {
	local m=$T/m
	case $1 in
	rename) same "$m/d/b" "$T/p/a" && [ ! -e "$m/a" ] ;;
	replace) same "$m/r" "$T/p/a" && [ ! -e "$m/a" ] ;;
	exchange) same "$m/x" "$T/p/y" && same "$m/d/y0" "$T/p/x" ;;
	truncate) same "$m/t" "$T/p/t" $((BS + 10)) ;;
	cut) same "$m/t" "$T/p/t" $((BS + 100)) ;;
	append) cat "$T/p/ap" "$T/p/chunk" | cmp -s - "$m/ap" ;;
	create) same "$m/d/new" "$T/p/new" ;;
	unlink) [ ! -e "$m/gone" ] ;;
	mkdir) [ -d "$m/d/sub" ] ;;
	overwrite) python3 -c 'import sys
got, old, new = (open(f, "rb").read() for f in sys.argv[1:4])
at = int(sys.argv[4])
sys.exit(got != old[:at] + new + old[at + len(new):])' "$m/t" "$T/p/t" "$T/p/w" $((BS + 100)) ;;
	rmdir) [ ! -e "$m/e" ] ;;
	symlink) [ "$(readlink "$m/d/ln")" = "$LINK_TARGET" ] ;;
	link) [ "$(stat -c %i "$m/d/hl")" = "$(stat -c %i "$m/a")" ] && same "$m/d/hl" "$T/p/a" ;;
	unlink_first) [ ! -e "$m/hl" ] && same "$m/d/hl2" "$T/p/hl" && [ "$(stat -c %h "$m/d/hl2")" = 1 ] ;;
	rename_second) [ ! -e "$m/d/hl2" ] && same "$m/hl3" "$T/p/hl" &&
		[ "$(stat -c %i "$m/hl3")" = "$(stat -c %i "$m/hl")" ] ;;
	xattr) [ "$(getfattr --only-values -n user.colour "$m/t")" = "$XATTR_VALUE" ] ;;
	esac
}

# fsck_names_only OP: fsck's problem lines (exit 1) name only OP's files
# (its notes of what the next mount accepts are no problems).
fsck_names_only() {
	local files line
	case $1 in
	rename) files='/a|/d/b' ;;
	truncate | cut) files='/t' ;;
	append) files='/ap' ;;
	replace) files='/a|/r' ;;
	exchange) files='/x|/d/y0' ;;
	create) files='/d/new' ;;
	unlink) files='/gone' ;;
	mkdir) files='/d/sub|/d' ;;	# /d: "(in the mount's directory: /d)", a name not given yet
	overwrite | xattr) files='/t' ;;
	rmdir) files='/e|/' ;;
	symlink) files='/d/ln|/d' ;;
	link) files='/a|/d/hl|/d' ;;
	unlink_first) files='/hl|/d/hl2' ;;
	rename_second) files='/hl|/d/hl2|/hl3|/d' ;;
	esac
	while IFS= read -r line; do
		[[ $line =~ \(in\ the\ mount(\'s\ directory)?:\ ($files)\) ]] || { echo "$line"; return 1; }
	done < <(grep "^$T/v/" "$T/out" | grep -v -e ': was being written when the mount stopped' \
		-e ': was being created when the mount stopped' -e ': was being renamed when the mount stopped' \
		-e ': binding record that vouches for no file here' \
		-e ': binding record of a name that does not exist')
}

# armed_run OP N: OP on a fresh copy of the volume, the daemon armed to die
# at step N.  Returns 0 if it was killed (then checked), 1 if OP and the
# unmount after it ran to the end.
armed_run() {
	local op=$1 n=$2 why
	hooks_armed_run "$op" "$n" "op_$op"
	case $? in 1) return 1 ;; 2) return 0 ;; esac
	run "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
	CHECKS=$((CHECKS + 1))
	if [ "$RC" = 1 ]; then
		why=$(fsck_names_only "$op") || fail "$op, step $n: fsck names another file: $why"
	elif [ "$RC" != 0 ]; then
		fail "$op, step $n: fsck exited $RC: $(cat "$T/out")"
	fi
	sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
	CHECKS=$((CHECKS + 1))
	why=$(seen_ok "$op") || fail "$op, step $n: $why (fsck before the mount: $(cat "$T/out"))"
	sc_umount "$T/m"
	CHECKS=$((CHECKS + 1))
	# warnings of what was accepted; a rmdir killed between its nonce file and
	# the directory leaves one that the mount gives a new nonce, or its file
	# again from the copy in its xattr (names.c, format.md 9.2)
	grep -v -e 'mounted ' -e 'gcm: warning: ' \
		-e 'holds no names and had no usable nonce file; it has a new one$' \
		-e 'names: warning: directory .*: its nonce file was missing, empty or damaged (as a crash leaves it before it reached the disk); written again from the copy in its xattr$' \
		"$T/daemon.log" |
		grep -q . &&
		fail "$op, step $n: daemon messages: $(cat "$T/daemon.log")"
	run "$SC_BIN" fsck --repair --passfile="$T/pw" "$T/v"
	expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
	return 0
}

ops=(rename replace exchange truncate cut append overwrite create unlink mkdir rmdir symlink xattr
     link unlink_first rename_second)
for op in "${ops[@]}"; do
	n=1
	while armed_run "$op" "$n"; do
		n=$((n + 1))
		[ "$n" -le 200 ] || { fail "$op: still killed at step 200"; break; }
	done
	# the run that was not killed: the operation took effect
	sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
	check "$op ran to the end: the new files (the operation: $(tr '\n' ' ' <"$T/armed.err" 2>/dev/null); its daemon's log: $(tr '\n' ' ' <"$T/armed.log" 2>/dev/null))" \
		done_ok "$op"
	sc_umount "$T/m"
	CHECKS=$((CHECKS + 1))
	# at least the operation's own change: a kill count of 0 would mean the
	# hook never fired, and the test checked nothing
	[ "$n" -ge 2 ] || fail "$op: no step killed: is the test hook armed?"
	echo "$op: killed at each of its $((n - 1)) steps, checked after each"
done
finish
