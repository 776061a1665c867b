#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds stackcrypt in release mode (warnings are errors; built only), then
# twice more and runs every test under meson in each build:
#   build-ci    warnings are errors
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer
# Mount tests need root, /dev/fuse and loop devices (CI has all three); a
# missing /dev/fuse fails them, it never skips them.  The tools come from
# `bash scripts/deps.sh test`; one missing is reported here, before an hour
# of tests fails on it.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for tool in meson ninja cc clang valgrind fio mkfs.ext4 mkfs.xfs getfattr setfattr \
	dmsetup losetup python3 fusermount3; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
pkg-config --exists criterion || missing+=("criterion (pkg-config)")
if [ ${#missing[@]} -gt 0 ]; then
	echo "scripts/test.sh: missing ${missing[*]}: run 'bash scripts/deps.sh test' first" >&2
	exit 1
fi

jobs=$(nproc)

# A release build (-O2, no assertions) sees warnings the others do not
# (-Wmaybe-uninitialized): it must build warning-free too.  Built, not run.
echo "== release build with -Werror"
rm -rf build-rel
meson setup build-rel -Dwerror=true -Dbuildtype=release >/dev/null
ninja -C build-rel

echo "== build with -Werror"
rm -rf build-ci
meson setup build-ci -Dwerror=true -Dbuildtype=debugoptimized >/dev/null
ninja -C build-ci
# The gluster suite (a real GlusterFS volume on loopback, about 2-3 minutes)
# runs once, in the sanitizer pass below, where the posix layer's fallbacks
# for a FUSE backing are also checked for memory errors; but for its
# 'gluster-variant' test (the aes-gcm battery through the translator),
# which runs here instead: tests/gluster/meson.build says why.  Suite
# 'variant' (skipped by the sanitizer pass) also holds bigdir-ext4-aes-xts,
# whose steps the run with names takes (tests/mount/meson.build).
meson test -C build-ci --print-errorlogs --num-processes "$jobs" --no-suite gluster

echo "== build with ASan + UBSan"
rm -rf build-asan
meson setup build-asan -Dwerror=true -Dbuildtype=debugoptimized \
	-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The second pass runs every suite again except fuzz (its targets are built
# with clang's ASan+UBSan in both passes) and 'variant' (tree and fsx runs
# on another backing filesystem or cipher whose daemon code paths other
# runs of the pass already take); in this build the valgrind suite
# holds the LeakSanitizer self-test instead of memcheck.  fsx runs 20 000 operations per
# configuration here instead of 100 000, to keep CI within its budget.
export SC_FSX_OPS=20000
# The same for the 100 000-entry directory tests: 20 000 entries here.
export SC_BIGDIR_N=20000
# Every mount of this pass goes over FUSE over io_uring (SC_TEST_IO_URING,
# tests/mount/harness.sh; pass 1 stays on /dev/fuse): enable_uring at Y,
# the old value back on exit, under the lock the io_uring tests take.
uring_param=/sys/module/fuse/parameters/enable_uring
[ -w "$uring_param" ] || { echo "scripts/test.sh: $uring_param is missing or not writable" >&2; exit 1; }
exec 9>/tmp/stackcrypt-enable_uring.lock
flock 9
uring_old=$(cat "$uring_param")
trap 'echo "$uring_old" >"$uring_param"' EXIT
echo Y >"$uring_param"
SC_TEST_IO_URING=1 meson test -C build-asan --print-errorlogs --num-processes "$jobs" \
	--timeout-multiplier 4 --no-suite fuzz --no-suite variant 9>&-
