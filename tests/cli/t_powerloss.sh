#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A simulated power loss at every step of a small-file and append workload
# (issue #29), on the volume kind $1: integrity, unit-tree (integrity with
# the unit tree and listing records), gcm (the default) or xts,
# under the power model $2:
#  - shadow (the default): stackcrypt-testhooks keeps a copy of each file
#    at each of its fsyncs (SC_TEST_SHADOW); after the kill,
#    tests/lib/powerloss.py puts every file back as its last fsync left it
#    (never fsynced: empty), the directory tree staying as the kill left
#    it.  File contents only, on any backing.
#  - disk: the volume sits in an ext4 whose disk is faultdev's in
#    power-loss mode (tests/lib/faultdev.sh, as rel-rekey-power): after the
#    kill, every write the disk was not asked to flush is lost, and the
#    ext4's journal replays at the next mount.  Directory changes too
#    (names made or removed since their directory's last fsync, the names
#    layer's nonce and side files), as a real ext4 loses them; ext4 only.
# stackcrypt-testhooks kills itself before the Nth change it makes to the
# backing store (SC_TEST_KILL_STEP, as t_steps.sh); for N = 1, 2, ... (one
# in SC_POWER_STRIDE, default 1) until the workload and the unmount run to
# the end:
#  - fsck exits 0, or 1 naming only the workload's files;
#  - the next mount reads back exactly what the workload saw acknowledged
#    as durable (powerloss_work.py: written, fsynced, directory fsynced;
#    an atomic replace, the directory fsynced after the rename; a hard
#    link, its directory fsynced),
#    everything else as a state it passed through, its own bytes or zeros,
#    absent, or refused and named by fsck (powerloss_check.py); keep as it
#    was;
#  - the mount logs no error about another file, and fsck --repair then
#    leaves a volume on which fsck is clean.
. "$(dirname "$0")/lib.sh"

hooks_kind t_powerloss.sh "${1:-}"
model=${2:-shadow}
BS=4096
here=$(dirname "$(realpath "$0")")
PL=$here/../lib/powerloss.py
STRIDE=${SC_POWER_STRIDE:-1}
case $model in
shadow)
	V=$T/v0 ;;
disk)
	# shellcheck source=../lib/faultdev.sh
	. "$here/../lib/faultdev.sh"
	fd_mkfs "$T/pristine.img" || finish
	fd_attach "$T/pristine.img" || finish
	V=$T/fs/v ;;
*)
	echo "usage: t_powerloss.sh integrity|unit-tree|gcm|xts [shadow|disk]" >&2
	exit 2 ;;
esac
# random contents: compared files are long, no match by chance
rnd() { head -c "$2" /dev/urandom >"$1"; }

mkdir -p "$T/m" "$T/p"
new_volume "$V" "${kind[@]}" || finish
rnd "$T/p/keep" $((BS + 1))
rnd "$T/p/t" $((3 * BS + 100))
rnd "$T/p/ap" $((BS + 5))
rnd "$T/p/s1" 5000
rnd "$T/p/s2" $((2 * BS + 7))
rnd "$T/p/s3" 3000
rnd "$T/p/s4" 6000
rnd "$T/p/s5" 4500
rnd "$T/p/w" $((2 * BS))
rnd "$T/p/c1" 3000
rnd "$T/p/c2" 5000
rnd "$T/p/tail" 100
sc_mount_fg "$V" "$T/m" --passfile="$T/pw" || finish
mkdir "$T/m/d" || fail "mkdir d"
for f in keep t ap; do
	cp "$T/p/$f" "$T/m/$f" || fail "write $f"
done
sc_umount "$T/m"
mkdir -p "$XDG_STATE_HOME/stackcrypt"	# integrity volumes keep their freshness record there
cp -a "$XDG_STATE_HOME/stackcrypt" "$T/s0" || finish
if [ "$model" = disk ]; then fd_teardown; else V=$T/v; fi

# shadow: the copy hooks_armed_run made, every file as durable as it is.
baseline() { python3 "$PL" baseline "$T/v" "$T/shadow"; }
# disk: a fresh image of the volume, served by faultdev, mounted.
disk_copy() { cp --sparse=always "$T/pristine.img" "$T/work.img" && fd_serve "$T/work.img"; }

# workload_killed N: the workload on a fresh copy of the volume, the daemon
# armed to die at step N, then the power loss.  Returns 0 if it was killed
# (the volume at $V then, as the loss left it), 1 if the workload and the
# unmount ran to the end, 2 if the power loss could not be made.
workload_killed() {
	local n=$1 rc
	: >"$T/dur" || { fail "reset"; finish; }
	if [ "$model" = shadow ]; then
		rm -rf "$T/shadow"
		HOOKS_PREPARE=baseline SC_TEST_SHADOW=$T/shadow \
			hooks_armed_run workload "$n" python3 "$here/powerloss_work.py" "$T/m" "$T/p" "$T/dur"
		case $? in 1) return 1 ;; 2) return 2 ;; esac
		python3 "$PL" revert "$V" "$T/shadow" >"$T/reverted" || { fail "step $n: revert"; return 2; }
		[ -s "$T/reverted" ] && LOST=$((LOST + 1))
		return 0
	fi
	HOOKS_COPY=disk_copy HOOKS_VOL=$V \
		hooks_armed_run workload "$n" python3 "$here/powerloss_work.py" "$T/m" "$T/p" "$T/dur"
	rc=$?
	[ "$rc" = 0 ] || { fd_teardown; return "$rc"; }
	fd_cut
	# held by the disk, or still in the page cache (failed after the cut)
	[ $(($(fd_field cut_sectors) + $(fd_field eio_dead))) -gt 0 ] && LOST=$((LOST + 1))
	echo "the cut: $(cat "$T/ctl.cut")" >"$T/reverted"
	fd_attach "$T/work.img" || return 2
}

# armed_run N: workload_killed N, then the checks.  Returns 0 if it was
# killed (then checked), 1 if the workload and the unmount ran to the end.
armed_run() {
	local n=$1 why
	workload_killed "$n"
	case $? in 1) return 1 ;; 2) return 0 ;; esac
	run "$SC_BIN" fsck --passfile="$T/pw" "$V"
	CHECKS=$((CHECKS + 1))
	grep -o '(in the mount[^)]*: [^)]*)' "$T/out" | sed 's/.*: //; s/)$//' >"$T/named"
	if [ "$RC" = 1 ]; then
		# (/: a hard link's binding record cut short in the root, 11.5)
		why=$(grep -v -x -e /d/s1 -e /d/s2 -e /d/s3 -e /d/tmp -e /ap -e /t -e /d -e /hl1 -e /e -e /e/s5 -e / \
			"$T/named")
		[ -z "$why" ] || fail "step $n: fsck names another file: $why ($(cat "$T/out"))"
	elif [ "$RC" != 0 ]; then
		fail "step $n: fsck exited $RC: $(cat "$T/out")"
	fi
	sc_mount_fg "$V" "$T/m" --passfile="$T/pw" || finish
	CHECKS=$((CHECKS + 1))
	why=$(python3 "$here/powerloss_check.py" "$T/m" "$T/p" "$T/dur" "$T/named") ||
		fail "step $n: $why (acknowledged: $(tr '\n' ' ' <"$T/dur"); put back: $(tr '\n' ';' <"$T/reverted"); fsck: $(cat "$T/out"))"
	sc_umount "$T/m"
	CHECKS=$((CHECKS + 1))
	# (a directory whose listing record the loss put behind its entries: format.md 11.7)
	grep -i error "$T/daemon.log" | grep -v -e '/d/s[123]' -e '/d/tmp' -e '/ap\b' -e '/t\b' -e '/e/s5' \
		-e 'a power loss can leave a directory so' | grep -q . &&
		fail "step $n: the mount logged an error about another file: $(grep -i error "$T/daemon.log")"
	run "$SC_BIN" fsck --repair --accept-unclean --passfile="$T/pw" "$V"
	run "$SC_BIN" fsck --passfile="$T/pw" "$V"
	CHECKS=$((CHECKS + 1))
	[ "$RC" = 0 ] || fail "step $n: fsck after --repair exited $RC: $(cat "$T/out")"
	[ "$model" = disk ] && fd_teardown
	return 0
}

n=1
LOST=0
while armed_run "$n"; do
	n=$((n + STRIDE))
	[ "$n" -le 400 ] || { fail "the workload never ran to the end"; break; }
done
CHECKS=$((CHECKS + 1))
[ "$n" -gt 1 ] || fail "step 1 already ran to the end: the hook did not arm"
# the run that was not killed: everything acknowledged, and all of it read back
[ "$model" = disk ] && { fd_attach "$T/work.img" || finish; }
sc_mount_fg "$V" "$T/m" --passfile="$T/pw" || finish
: >"$T/named"
check "the unkilled run acknowledged every fsync" test "$(tr '\n' ' ' <"$T/dur")" = "s1 ap1 s2 t ap2 replace link mkdir "
why=$(python3 "$here/powerloss_check.py" "$T/m" "$T/p" "$T/dur" "$T/named")
check "the unkilled run reads back: $why" test -z "$why"
sc_umount "$T/m"
echo "t_powerloss.sh: $kind_name, $model: power losses at one step in $STRIDE up to step $((n - 1)), $LOST of them losing writes"
# the model is not idle: shadow, some steps after a write and before its
# fsync put the file back; disk, some cuts dropped what the disk held or
# failed the writes after them (as rel-rekey-power checks)
check "some power losses lost writes ($LOST)" test "$LOST" -gt 0
finish
