#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# vg_bin.sh - stands in for the stackcrypt binary (SC_BIN) in harness.sh
# runs: `vg_bin.sh mount ARGS...` runs the real binary ($SC_VG_REAL) under
# valgrind memcheck; any other command (init, ...) runs it directly.
#
# memcheck fails the daemon with exit status 99 on any error (invalid read
# or write, use of uninitialised memory in a branch or a syscall, bad free)
# and on any definitely lost block at exit; harness.sh fails a run whose
# daemon exits non-zero and prints the daemon's log, where -q leaves only
# the reports themselves.  Possible leaks (pointers into the middle of a
# block, common with libfuse's and OpenSSL's own caches) are not errors.
# SC_VG_OPTS adds valgrind options (e.g. --track-origins=yes to find where
# an uninitialised value came from).  SC_VG_PRELOAD is put in LD_PRELOAD of
# the daemon alone (the self-tests preload inject.c's library).

: "${SC_VG_REAL:?SC_VG_REAL (the real stackcrypt binary) is not set}"
if [ "${1:-}" != mount ]; then
	exec "$SC_VG_REAL" "$@"
fi
if [ -n "${SC_VG_PRELOAD:-}" ]; then
	LD_PRELOAD=$SC_VG_PRELOAD
	export LD_PRELOAD
fi
# shellcheck disable=SC2086  # SC_VG_OPTS is a list of options
exec valgrind --tool=memcheck -q --error-exitcode=99 \
	--leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
	--num-callers=30 \
	${SC_VG_OPTS:-} "$SC_VG_REAL" "$@"
