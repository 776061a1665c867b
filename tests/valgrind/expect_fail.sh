#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# expect_fail.sh - a self-test verdict: passes only if COMMAND fails AND its
# output (stdout and stderr) matches REGEX (grep -E), i.e. it failed for the
# reason the test is about, not for any other.
#
#   expect_fail.sh REGEX COMMAND [ARGS...]

if [ $# -lt 2 ]; then
	echo "usage: expect_fail.sh REGEX COMMAND [ARGS...]" >&2
	exit 1
fi
regex=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then
	echo "expect_fail: FAIL: '$*' succeeded; it must fail" >&2
	exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
	echo "expect_fail: FAIL: '$*' failed (status $rc) but its output does not match /$regex/" >&2
	exit 1
fi
echo "expect_fail: ok: failed (status $rc) with /$regex/ in its output"
exit 0
