#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# rel_harness.sh - tests/mount/harness.sh with the image size of the form
# being run: SC_IMG_SIZE (the short form, set by meson) unless
# SC_REL_FULL=1 and SC_REL_FULL_IMG is set, which then wins.  Arguments
# and exit status are the harness's.
if [ "${SC_REL_FULL:-0}" = 1 ] && [ -n "${SC_REL_FULL_IMG:-}" ]; then
	SC_IMG_SIZE=$SC_REL_FULL_IMG
	export SC_IMG_SIZE
fi
exec "$(dirname "$(realpath "$0")")/../mount/harness.sh" "$@"
