#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fio_verify.sh - fio write+verify load over a mounted stackcrypt volume, then
# a verify-only pass after a remount, so every byte comes back through the
# decryption path and not from the kernel's page cache.
#
#   fio_verify.sh [--corrupt] FIO CHECKER
#
# Runs inside tests/mount/harness.sh (needs MNT, BACKING, SC_REMOUNT).
# FIO is the fio binary, CHECKER is fio_check.py.  Two job groups of
# numjobs=4, one file per job: sequential writes, then random writes; block
# sizes mixed 4k / 3000 (unaligned, bs_unaligned) / 128k; verify=xxhash with
# do_verify=1 and verify_fatal=1.  After a clean unmount and mount the same
# job file runs again with --verify_only (fio regenerates the same offsets
# and sizes from its fixed seeds and checks every block).
#
# A third group of 4 jobs writes randomly with O_DIRECT (aligned 4k/64k
# blocks): those writes and the verify reads bypass the page cache on the
# FUSE side and are passed to the daemon one request each.
#
# Size per job: 8 MiB buffered, 2 MiB direct (CI: 72 MiB written per
# config), or 512 MiB and 64 MiB with SC_LOAD_FULL=1 (4.25 GiB per config);
# SC_LOAD_FIO_SIZE and SC_LOAD_FIO_DSIZE override them.
#
# --corrupt  self-test: between the two passes, overwrite 16 bytes in the
#            middle of one backing file (the passthrough stack stores the
#            plaintext as is) -- the verify-only pass must then fail, which
#            proves a bad block does fail this test.  Registered with
#            should_fail; so that a broken setup cannot pass as the expected
#            failure, in this mode everything before the verify pass must
#            work and the verify pass must fail with fio's EILSEQ (84, a
#            verify mismatch) -- otherwise the script exits 0, which turns
#            the should_fail test red.
#
# Exit 0 only if fio exits 0 twice and fio_check.py finds every job clean.

set -u
corrupt=0
if [ "${1:-}" = --corrupt ]; then corrupt=1; shift; fi
[ $# -eq 2 ] || { echo "usage: $0 [--corrupt] FIO CHECKER" >&2; exit 2; }
FIO=$1 CHECKER=$2
: "${MNT:?run me under tests/mount/harness.sh}" "${BACKING:?}" "${SC_REMOUNT:?}"

if [ "${SC_LOAD_FULL:-0}" = 1 ]; then size=512m dsize=64m
else size=8m dsize=2m
fi
size=${SC_LOAD_FIO_SIZE:-$size} dsize=${SC_LOAD_FIO_DSIZE:-$dsize}

work=$(mktemp -d "${TMPDIR:-/tmp}/sc-load-fio.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$MNT/fio" || exit 1

# verify_state_save=0: fio would otherwise drop state files into the cwd.
cat >"$work/load.fio" <<JOB
[global]
directory=$MNT/fio
ioengine=psync
numjobs=4
size=$size
bs_unaligned=1
bssplit=4k/40:3000/20:128k/40
verify=xxhash
do_verify=1
verify_fatal=1
verify_state_save=0
randrepeat=1
[seqwrite]
rw=write
[randwrite]
rw=randwrite
stonewall
[directwrite]
rw=randwrite
direct=1
size=$dsize
bs_unaligned=0
bssplit=4k/50:64k/50
stonewall
JOB

# setup failures: 1 normally, 0 (= a visibly broken self-test) with --corrupt
bad() { echo "fio_verify: $*"; [ $corrupt = 1 ] && echo "fio_verify: self-test INVALID"; exit $((1 - corrupt)); }

cd "$work" || bad "cd $work"
start=$(date +%s.%N)
echo "fio_verify: $CONFIG: write+verify, 4 jobs x $size seq, x $size random, x $dsize random O_DIRECT"
"$FIO" --output-format=json --output="$work/write.json" "$work/load.fio"
rc=$?
"$CHECKER" "$work/write.json" || bad "write run not clean"
[ $rc -eq 0 ] || bad "fio write run exited $rc"

if [ $corrupt = 1 ]; then
	victim=$BACKING/fio/seqwrite.1.0
	[ -f "$victim" ] || bad "no backing file $victim"
	half=$(( $(stat -c %s "$victim") / 2 ))
	printf 'CORRUPTCORRUPT!!' |
		dd of="$victim" bs=1 seek="$half" conv=notrunc status=none || bad "dd failed"
	echo "fio_verify: self-test: corrupted 16 bytes at $half of $victim"
fi

"$SC_REMOUNT" || bad "remount failed"
sync
echo 3 >/proc/sys/vm/drop_caches 2>/dev/null

echo "fio_verify: $CONFIG: verify-only pass after remount"
"$FIO" --output-format=json --output="$work/verify.json" --verify_only "$work/load.fio"
rc=$?
if [ $corrupt = 1 ]; then
	"$CHECKER" "$work/write.json" "$work/verify.json" && bad "corruption not detected"
	grep -q '"error" : 84,' "$work/verify.json" || bad "verify pass failed, but not with EILSEQ"
	echo "fio_verify: self-test: the corrupted block failed verification, as it must"
	exit 1
fi
"$CHECKER" "$work/write.json" "$work/verify.json" || exit 1
[ $rc -eq 0 ] || { echo "fio_verify: fio verify run exited $rc"; exit 1; }
end=$(date +%s.%N)
echo "fio_verify: $CONFIG: clean, $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}') s"
rm -rf "$MNT/fio"
