# SPDX-License-Identifier: GPL-2.0-or-later
#
# with_parent.sh - sourced by the test shells meson runs directly
# (tests/mount/harness.sh, tests/cli/lib.sh), so that they end with the
# meson that started them:
#
#   . "$(dirname "$0")/../lib/with_parent.sh"
#   sc_die_with_parent "$@"        # before anything is mounted or started
#
# Why: meson runs each test in a session of its own and bounds it with its
# timeout.  If meson itself is killed (kill -9, an OOM kill), nothing stops
# a test: a harness waits for its COMMAND as long as that takes -- forever
# if it hangs -- with the mount, the daemon and the loop device up.  So the
# script re-runs itself once under `setpriv --pdeathsig TERM`: the kernel
# sends it SIGTERM the moment its parent exits, an event, not a poll, and
# the script's TERM/EXIT handling stops its command and cleans up as after
# any interruption.  A parent that died before the signal was armed shows
# as a changed parent pid after the re-run: then the script stops at once.
# Without setpriv (util-linux) the script runs as before.

sc_die_with_parent() {
	if [ -z "${SC_WITH_PARENT:-}" ]; then
		# Already adopted by init: the parent died before we could even
		# record it (meson killed while it was starting us).
		if [ "$PPID" = 1 ]; then
			echo "$0: the process that started me is gone: not starting" >&2
			exit 1
		fi
		command -v setpriv >/dev/null || return 0
		export SC_WITH_PARENT=$PPID
		exec setpriv --pdeathsig TERM -- bash "$0" "$@"
	fi
	if [ "$PPID" != "$SC_WITH_PARENT" ]; then
		echo "$0: the process that started me ($SC_WITH_PARENT) is gone: not starting" >&2
		exit 1
	fi
	# Not for our children: a harness inside a test arms its own.
	unset SC_WITH_PARENT
}
