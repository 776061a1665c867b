#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t_rekey_power.sh - stackcrypt rekey (issue #32) survives a power loss at
# every step: the volume sits in an ext4 whose disk is faultdev's (a loop
# device over its FUSE-served image) in power-loss mode, where what was
# written since the device's last flush is lost at a `powercut`.
#
#   t_rekey_power.sh [KIND-OPTIONS...]   (none: the default volume)
#   SC_POWER_CMD=upgrade t_rekey_power.sh   (stackcrypt upgrade of a default
#                                            volume, docs/format.md 11.12)
#
# A pristine image holds an ext4 with a volume and a small tree in it.  For
# each fault point N (every step, or every SC_POWER_STRIDE-th; the run with
# no kill ends the loop): the image is copied and served by faultdev in
# "hold" mode, attached to a loop device and mounted (commit=3600: the
# only flushes are those the rekey's own fsyncs and syncs cause, not a
# 5-second timer), the rekey is killed with SIGKILL at its Nth step
# (SC_REKEY_FAULT=N, fs/volume/rekey.c), then `powercut` throws away every
# write the device has not been asked to flush and fails every later
# request, and the ext4, the loop device and faultdev are torn down.  The
# image left is then what a disk would hold after a power loss at that
# moment (the state in which a volatile cache lost all it held: see
# faultdev.c).  It is attached again directly, mounted (the journal
# replays), and a second `stackcrypt rekey` must finish the rotation:
# fsck is then clean, the plaintext equals the source's, the old master
# key opens nothing, no rekey state is left.  A first case checks the
# model itself on the bare device: a write not synced is gone after a cut,
# a synced one is there.  The cut points are counted steps and nothing
# waits on a clock; what the kernel's own threads flush between two steps
# may differ from run to run (docs/format.md 6.5), and every such image
# must pass.
#
# With SC_POWER_CMD=upgrade the command cut off is `stackcrypt upgrade`
# (the same copy and steps, the same master key, an integrity volume's
# stack for the new tree): after the second run the volume is an
# integrity volume (features 0x11e: 0x10 and 0x100) that its master key still opens.
# Given an integrity volume without listing records (KIND-OPTIONS
# --integrity --no-dir-lists, with --unit-tree or without), upgrade gives
# it its records in place (11.12, "Adding listing records"; its steps: the
# mark, each directory), and the checks after are the same (features
# 0x13e with the unit tree).
#
# Environment: SC_BIN, SC_FAULTDEV; SC_POWER_STRIDE (default 1),
# SC_POWER_CMD (rekey, the default, or upgrade), SC_POWER_MIN_STEPS (the
# steps the loop must reach, default 20).
# shellcheck source=../cli/lib.sh
. "$(dirname "$0")/../cli/lib.sh"
# shellcheck source=../lib/faultdev.sh
. "$(dirname "$0")/../lib/faultdev.sh"
STRIDE=${SC_POWER_STRIDE:-1}
CMD=${SC_POWER_CMD:-rekey}
UPGRADED=0x11e
case " $* " in *" --unit-tree "*) UPGRADED=0x13e ;; esac
fd_mkfs "$T/pristine.img" || finish

# ---- the model: unsynced writes are lost, synced ones kept, flushes seen ----
# On the raw device, no file system on it: a sync(2) from anything else on
# the machine (other tests call sync) flushes every mounted file system,
# which on an ext4 here would make the unsynced write durable in the
# window before the cut; it flushes no bare block device (sync_bdevs
# writes back page cache, sends no flush), and dd's O_DIRECT leaves none.
truncate -s 32M "$T/model.img"
fd_serve "$T/model.img" raw || finish
head -c 1048576 /dev/urandom >"$T/synced"
head -c 1048576 /dev/urandom >"$T/unsynced"
dd if="$T/synced" of="$LOOP" bs=1M seek=8 oflag=direct conv=fsync status=none ||
	fail "dd of the synced MiB to $LOOP"
dd if="$T/unsynced" of="$LOOP" bs=1M seek=16 oflag=direct status=none ||
	fail "dd of the unsynced MiB to $LOOP"
fd_cut
CHECKS=$((CHECKS + 1))
[ "$(fd_field fsyncs)" -gt 0 ] || fail "no fsync reached faultdev: $(cat "$T/ctl.cut")"
CHECKS=$((CHECKS + 1))
[ "$(fd_field flushed_sectors)" -gt 0 ] || fail "no sector was flushed: $(cat "$T/ctl.cut")"
CHECKS=$((CHECKS + 1))
[ "$(fd_field cut_sectors)" -gt 0 ] || fail "the cut lost nothing: $(cat "$T/ctl.cut")"
echo "model: $(cat "$T/ctl.cut")"
check "model: a synced MiB is there after the cut" \
	cmp -s "$T/synced" <(dd if="$T/model.img" bs=1M skip=8 count=1 status=none)
check "model: an unsynced MiB is gone after the cut" \
	bash -c "! cmp -s '$T/unsynced' <(dd if='$T/model.img' bs=1M skip=16 count=1 status=none)"
rm -f "$T/model.img"

# ---- the pristine volume ----
LOOP=$(losetup -f --show "$T/pristine.img") || { fail "losetup"; finish; }
mount "$LOOP" "$T/fs" || { fail "mount"; finish; }
V=$T/fs/v
(umask 077; printf 'correct horse\n' >"$T/pw")
mkdir -p "$V"
if [ $# = 0 ]; then
	KIND=default
	[ "$CMD" = upgrade ] && KIND="default, upgraded"
	"$SC_BIN" init --scrypt-n=1024 --passfile="$T/pw" --save-masterkey="$T/mk" "$V" \
		>"$T/init.out" 2>&1 || { fail "init: $(cat "$T/init.out")"; finish; }
else
	KIND="$*"
	"$SC_BIN" init "$@" --scrypt-n=1024 --passfile="$T/pw" --save-masterkey="$T/mk" "$V" \
		>"$T/init.out" 2>&1 || { fail "init: $(cat "$T/init.out")"; finish; }
fi
S=$T/src
mkdir -p "$S/dir/sub" "$S/d2"
head -c 300000 /dev/urandom >"$S/dir/data"
# a hard link across directories: rekey and upgrade copy it as one inode,
# an integrity volume by its binding record (docs/format.md 11.5)
ln "$S/dir/data" "$S/hard"
ln -s dir/data "$S/link"
echo tiny >"$S/$(printf 'n%.0s' $(seq 200))"
: >"$S/empty"
for n in 17 4096 8193 65537; do head -c $n /dev/urandom >"$S/d2/sz$n"; done
truncate -s 5M "$S/sparse"
printf 'middle' | dd of="$S/sparse" bs=1 seek=3000000 conv=notrunc status=none
sc_mount_fg "$V" "$T/m" --passfile="$T/pw" || finish
cp -a "$S/." "$T/m/"
sc_umount "$T/m"
fd_teardown
# this client's freshness record (integrity volumes), which goes with the
# pristine image: put back before each run (it is on the client's disk,
# which the cut does not reach)
mkdir -p "$XDG_STATE_HOME/stackcrypt"
cp -a "$XDG_STATE_HOME/stackcrypt" "$T/s0"

# ---- a power cut at each step of the rekey, then a run finishes it ----
n=1 points=0 lost=0 dead=0 fsyncs=0
while :; do
	cp --sparse=always "$T/pristine.img" "$T/work.img"
	rm -rf "$XDG_STATE_HOME/stackcrypt"
	cp -a "$T/s0" "$XDG_STATE_HOME/stackcrypt"
	fd_serve "$T/work.img" || break
	SC_REKEY_FAULT=$n "$SC_BIN" "$CMD" --passfile="$T/pw" "$V" >"$T/out" 2>&1 </dev/null
	RC=$?
	if [ $RC = 0 ]; then
		fd_teardown
		break
	fi
	CHECKS=$((CHECKS + 1))
	[ $RC = 137 ] || { fail "$KIND: $CMD with fault $n exited $RC: $(cat "$T/out")"; fd_teardown; break; }
	fd_cut
	points=$((points + 1))
	lost=$((lost + $(fd_field cut_sectors)))
	dead=$((dead + $(fd_field eio_dead)))
	fsyncs=$((fsyncs + $(fd_field fsyncs)))
	fd_attach "$T/work.img" || break
	expect $E_OK "" "$SC_BIN" "$CMD" --passfile="$T/pw" "$V" ||
		echo "    ($KIND, power cut at step $n: $(cat "$T/ctl.cut"))" >&2
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
	if [ "$CMD" = upgrade ]; then
		expect $E_OK "0 problems" "$SC_BIN" fsck --masterkey="$T/mk" "$V"
		check "$KIND, power cut at step $n: an integrity volume ($UPGRADED)" \
			grep -qx "features = $UPGRADED" "$V/.stackcrypt.conf"
	else
		expect $E_BADPASS "does not match" "$SC_BIN" fsck --masterkey="$T/mk" "$V"
	fi
	if sc_mount_fg "$V" "$T/m" --passfile="$T/pw"; then
		check "$KIND, power cut at step $n: contents equal the source's" \
			diff -r --no-dereference "$S" "$T/m"
		check "$KIND, power cut at step $n: the hard link is one inode" \
			test "$(stat -c %i "$T/m/hard")" = "$(stat -c %i "$T/m/dir/data")"
		sc_umount "$T/m"
		check "$KIND, power cut at step $n: no error in the daemon's log: $(cat "$T/daemon.log")" \
			bash -c "! grep -qi error '$T/daemon.log'"
	fi
	check "$KIND, power cut at step $n: no rekey state left: $(ls -A "$V")" \
		bash -c "! ls -A '$V' | grep -q rekey"
	fd_teardown
	rm -f "$T/work.img"
	n=$((n + STRIDE))
done
check "$KIND: the loop reached the steps (got to $n)" test "$n" -gt "${SC_POWER_MIN_STEPS:-20}"
check "$KIND: the cuts lost writes ($lost held sectors, $dead requests after)" \
	test $((lost + dead)) -gt 0
echo "$KIND: a power cut at one step in $STRIDE, $points points up to step $((n - 1));" \
	"$fsyncs flushes reached faultdev, $lost held sectors lost at the cuts," \
	"$dead requests failed after them"
finish
