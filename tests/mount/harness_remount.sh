#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# harness_remount.sh - $SC_REMOUNT for commands run by harness.sh:
#   "$SC_REMOUNT"         clean unmount, daemon must exit 0, mount again
#   "$SC_REMOUNT" --kill  kill -9 the daemon, detach the dead mount, mount again
# Exits 0 when the new mount is up.  See harness.sh.
exec "$(dirname "$(realpath "$0")")/harness.sh" --remount "$@"
