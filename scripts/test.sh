#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds stackcrypt twice and runs every test under meson, at least once,
# in the two builds:
#   build-ci    warnings are errors; pass 1: what the sanitizer pass does
#               not take (mounts over /dev/fuse, full sizes, fuzz, tools,
#               valgrind, the variants)
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer, every mount
#               over io_uring; pass 2, whose gluster suite starts beside
#               pass 1 as soon as this tree is built
# The release build with warnings as errors is package-configure's (suite
# package, pass 1): the tree it builds without gluster://, then rebuilds
# with it, is release mode with -Werror (tests/package/configure_test.sh);
# the test programs are built with -Werror in the two trees here.
# Mount tests need root, /dev/fuse and loop devices (CI has all three); a
# missing /dev/fuse fails them, it never skips them.  The tools come from
# `bash scripts/deps.sh test`; one missing is reported here, before an hour
# of tests fails on it.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for tool in meson ninja cc clang valgrind fio mkfs.ext4 mkfs.xfs getfattr setfattr \
	dmsetup losetup python3 fusermount3 strace setpriv; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
pkg-config --exists criterion || missing+=("criterion (pkg-config)")
if [ ${#missing[@]} -gt 0 ]; then
	echo "scripts/test.sh: missing ${missing[*]}: run 'bash scripts/deps.sh test' first" >&2
	exit 1
fi

# Two tests per core: a mount test waits on FUSE round trips, fsync and
# the loop device much of its time (its processes' CPU time is about 0.6
# of its duration in CI), so at one per core the cores idle.  A test that
# fails only with more running beside it is a bug in that test.
jobs=$((2 * $(nproc)))

bg_build=
bg_gluster=
uring_param=/sys/module/fuse/parameters/enable_uring
uring_old=
pydir=
on_exit() {
	if [ -n "$bg_build" ]; then kill -- -"$bg_build" 2>/dev/null || true; fi
	# meson stops the tests it runs on SIGTERM; the uring parameter goes
	# back once they are gone
	if [ -n "$bg_gluster" ]; then
		kill -- -"$bg_gluster" 2>/dev/null || true
		wait "$bg_gluster" 2>/dev/null || true
	fi
	if [ -n "$uring_old" ]; then echo "$uring_old" >"$uring_param"; fi
	if [ -n "$pydir" ]; then rm -rf "$pydir"; fi
}
trap on_exit EXIT

echo "== build with -Werror"
rm -rf build-ci build-asan
meson setup build-ci -Dwerror=true -Dbuildtype=debugoptimized >/dev/null
ninja -C build-ci

# The ASan tree compiles during pass 1, at the tests' own priority: the
# sanitizer pass's gluster suite starts on it as soon as it is built
# (below); until then this job holds build-asan/.sc-building (fd 8, which
# ninja does not inherit), and its status is in build-asan/ninja-bg.rc.
# Its output is printed after pass 1.
echo "== the ASan + UBSan build, beside pass 1"
# UBSan's checks trap (-fsanitize-undefined-trap-on-error) instead of
# calling libubsan, which is then not loaded at all: every sanitized start
# and exit costs 0.087 CPU-seconds instead of 0.15, most of the difference
# LeakSanitizer's exit scan faulting in libubsan's 6 MB of untouched .bss
# (docs/design.md, "CI time"), and the pass starts the binary thousands of
# times.  A failed check still ends the process with a report and a stack:
# ASan's handler of the trap's SIGILL (handle_sigill=1 below), shown by
# ubsan-selftest-trap.
ub_trap=-fsanitize-undefined-trap-on-error
meson setup build-asan -Dwerror=true -Dbuildtype=debugoptimized \
	-Db_sanitize=address,undefined -Db_lundef=false \
	-Dc_args="$ub_trap" -Dc_link_args="$ub_trap" >/dev/null
exec 8>build-asan/.sc-building
flock 8
setsid bash -c 'rc=0; ninja -C build-asan 8>&- || rc=$?
	echo "$rc" >build-asan/ninja-bg.rc' >build-asan/ninja-bg.log 2>&1 &
bg_build=$!
exec 8>&-

# The tests start python3 by PATH hundreds of times (the guard of every
# mount and command-line test, the Python tests, the helpers).  A version
# manager's shim first on PATH (pyenv's) finds the interpreter anew at
# every start, for five times the CPU of the start itself (docs/design.md,
# "CI time"); an interpreter found once here goes first on PATH (after
# every tree is configured: none records it).  Debian's own, when it has
# the tests' one module beyond the standard library (python3-cryptography,
# scripts/deps.sh test): it starts in half the CPU of pyenv's, whose
# site-packages the start reads (0.07 s against 0.14 s, docs/design.md).
pydir=$(mktemp -d /tmp/stackcrypt-python.XXXXXX)
py=/usr/bin/python3
if ! "$py" -c 'import cryptography' 2>/dev/null; then
	py=$(python3 -c 'import sys; print(sys.executable)')
fi
ln -s "$py" "$pydir/python3"
"$pydir/python3" -c 'pass' || { echo "scripts/test.sh: python3 does not start from $pydir" >&2; exit 1; }
export PATH="$pydir:$PATH"

# The tests that set enable_uring themselves (suite 'uring-param': they
# turn it on, or off for the fallback, and back, one at a time under
# /tmp/stackcrypt-enable_uring.lock) run first, alone (they take seconds);
# from then on this script holds that lock and the parameter at Y, for the
# io_uring mounts of the sanitizer pass (below).  The mounts of pass 1 ask
# for no io_uring (no -o io_uring): the parameter does not change them.
echo "== pass 1: the io_uring parameter's tests"
meson test -C build-ci --no-rebuild --print-errorlogs --num-processes "$jobs" --suite uring-param
[ -w "$uring_param" ] || { echo "scripts/test.sh: $uring_param is missing or not writable" >&2; exit 1; }
exec 9>/tmp/stackcrypt-enable_uring.lock
flock 9
uring_old=$(cat "$uring_param")
echo Y >"$uring_param"

asan_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:handle_sigill=1
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 SC_TEST_IO_URING=1)
# The sanitizer pass's gluster suite runs beside pass 1 and the rest of
# its own pass, in a meson of its own (log: build-asan/meson-logs/gluster.txt,
# output printed at the end), as soon as the ASan tree is built: a GlusterFS
# test spends most of its time waiting -- on glusterd's transactions, which
# scripts/gluster.sh serializes under its lock, on the brick processes and
# on the network round trips of every call -- so in the passes' own slots
# it held them while the cores idled (docs/design.md, "CI time").  Every
# mount of it goes over FUSE over io_uring (SC_TEST_IO_URING, as in pass 2).
gl_jobs=$(nproc)
env "${asan_env[@]}" GL_JOBS="$gl_jobs" setsid bash -c 'flock build-asan/.sc-building true
	[ "$(cat build-asan/ninja-bg.rc 2>/dev/null)" = 0 ] ||
		{ echo "scripts/test.sh: no gluster suite: the ASan + UBSan build failed"; exit 1; }
	exec meson test -C build-asan --no-rebuild --logbase gluster --print-errorlogs \
		--num-processes "$GL_JOBS" --timeout-multiplier 4 --suite gluster' \
	>build-asan/gluster-tests.log 2>&1 9>&- &
bg_gluster=$!

# The gluster suite (a real GlusterFS volume on loopback) runs once, in the
# sanitizer pass (above), where the posix layer's fallbacks
# for a FUSE backing are also checked for memory errors; but for its
# 'gluster-variant' test (the aes-gcm battery through the translator),
# which runs here instead: tests/gluster/meson.build says why.  Suite
# 'variant' (skipped by the sanitizer pass) also holds bigdir-ext4-aes-xts,
# whose steps the run with names takes (tests/mount/meson.build), the
# power-loss runs under a real ext4 (cli-powerloss-disk-*: their recovery
# paths are the sanitizer pass's shadow runs'; tests/cli/meson.build), and
# six of the cli tests' -names twins, crypt's three XFS data runs and
# three rel-full runs, which reach no line of fs/ or crypto/ that the
# sanitizer pass's other runs miss (gcov; tests/cli, crypt and
# reliability/meson.build): they run here only.
# Suites crypto, unit, cli, crypt, reliability, load and crash (but those
# variants) run in the sanitizer pass only: the same tests, with the same
# inputs, under ASan + UBSan.  Pass 1 would add only the /dev/fuse transport; gcov (a
# -Db_coverage build, each suite over /dev/fuse and over io_uring) showed
# that it reaches nothing more in fs/ and crypto/ but fs/fuse/loop.c and
# the -s buffer release in handlers.c, which cli-mount's -s and loop=lifo
# mounts take: cli-mount runs here too (suite 'pass1'), and so does
# cli-init, whose mlock-warning checks an ASan build skips.  Of suites
# mount and exerciser (the sanitizer pass runs them all, over io_uring),
# this pass keeps the runs of suite 'pass1' over /dev/fuse: the ext4
# batteries of the five configs, with names, with loop=lifo, and two
# concur runs on /dev/fuse's threads; gcov found every line the others
# reach over /dev/fuse reached by them over io_uring and by these
# (tests/mount/meson.build).  Suite package (the Debian package built, installed, used and
# purged; the README's install line configured, a build without gluster://)
# runs here only: it builds the tree again, without sanitizers, and its
# mounts are the installed binary's.
echo "== pass 1"
meson test -C build-ci --no-rebuild --print-errorlogs --num-processes "$jobs" \
	--suite variant --suite fuzz --suite tools \
	--suite valgrind --suite pass1 --suite package --no-suite uring-param 9>&-

echo "== the ASan + UBSan build"
bg_rc=0
wait "$bg_build" || bg_rc=$?
bg_build=
cat build-asan/ninja-bg.log
if [ "$bg_rc" != 0 ] || [ "$(cat build-asan/ninja-bg.rc)" != 0 ]; then
	echo "scripts/test.sh: the ASan + UBSan build failed (above)" >&2
	exit 1
fi
# The second pass runs every suite again except fuzz (its targets are built
# with clang's ASan+UBSan in both passes), 'variant' (the tree runs but
# the one with encrypted names, and battery, fsx and concur runs on
# another backing filesystem or cipher, whose daemon code paths other
# runs of the pass already take, tests/mount/meson.build; and the two io_uring
# batteries of suite uring-param, which over this pass's io_uring mounts
# are its plain ext4 batteries again) and tools (the exercisers on a plain
# directory, checking the tools' models: the same tools run sanitized
# here through the mount, suites exerciser and crash); in this build the valgrind suite
# holds the LeakSanitizer self-test instead of memcheck.
# Every mount of this pass goes over FUSE over io_uring (SC_TEST_IO_URING,
# tests/mount/harness.sh; pass 1 stays on /dev/fuse): enable_uring at Y
# (above), the old value back on exit.  Suite ceph (a one-node Ceph
# cluster, scripts/ceph.sh, issue #34) is not run by CI yet: its packages
# (bash scripts/deps.sh ceph, 222 MB) and ~7 minutes join with the
# cephfs:// translator; run it with meson test -C build --suite ceph.
echo "== pass 2 (ASan + UBSan, io_uring) but its gluster suite"
rc=0
env "${asan_env[@]}" meson test -C build-asan --no-rebuild --print-errorlogs --num-processes "$jobs" \
	--timeout-multiplier 4 --no-suite fuzz --no-suite variant --no-suite tools \
	--no-suite package --no-suite gluster --no-suite ceph 9>&- || rc=$?
gl_rc=0
wait "$bg_gluster" || gl_rc=$?
bg_gluster=
echo "== pass 2's gluster suite (beside pass 1 and the rest of pass 2)"
cat build-asan/gluster-tests.log
if [ "$rc" != 0 ] || [ "$gl_rc" != 0 ]; then
	echo "scripts/test.sh: pass 2 failed (above): the gluster suite exit $gl_rc, the rest exit $rc" >&2
	exit 1
fi
