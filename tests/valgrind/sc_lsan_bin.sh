#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# sc_lsan_bin.sh - stands in for the stackcrypt binary (SC_BIN) in
# harness.sh runs of a sanitizer build, where valgrind cannot run: the
# `mount` command runs the real binary ($SC_VG_REAL) with SC_VG_PRELOAD in
# LD_PRELOAD (after the ASan runtime SC_ASAN_RT, when the runtime is a
# shared library: it must come first); every other command runs it as is.
# The self-test preloads inject.c's library to show that LeakSanitizer runs
# in the daemon when it exits at unmount, and that harness.sh fails on it.

: "${SC_VG_REAL:?SC_VG_REAL (the real stackcrypt binary) is not set}"
if [ "${1:-}" = mount ] && [ -n "${SC_VG_PRELOAD:-}" ]; then
	LD_PRELOAD=${SC_ASAN_RT:+$SC_ASAN_RT:}$SC_VG_PRELOAD
	export LD_PRELOAD
fi
exec "$SC_VG_REAL" "$@"
