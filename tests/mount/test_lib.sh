# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_lib.sh - sourced by the scripts harness.sh runs (tree_test.sh,
# handles_test.sh):
#
#   . "$(dirname "$0")/test_lib.sh"
#   sc_test_init NAME VAR...
#
# Checks that each VAR is set (the script runs under harness.sh), and
# defines fail MSG: prints "FAIL NAME/MSG" on stderr and sets failed=1, so
# that a script checks every property and exits $failed at the end.

sc_test_init() {
	local v
	SC_TEST_NAME=$1
	shift
	failed=0
	for v in "$@"; do
		[ -n "${!v:-}" ] || {
			echo "$SC_TEST_NAME: \$$v is not set; run me under harness.sh" >&2
			exit 1
		}
	done
}

fail() {
	echo "FAIL $SC_TEST_NAME/$1" >&2
	failed=1
}
