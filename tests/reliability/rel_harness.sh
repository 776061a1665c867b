#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# rel_harness.sh HARNESS ARGS... - runs HARNESS (tests/mount/harness.sh,
# passed by meson as mount_harness) with the image size of the form being
# run: SC_IMG_SIZE (the short form, set by meson) unless SC_REL_FULL=1 and
# SC_REL_FULL_IMG is set, which then wins.  ARGS and the exit status are
# the harness's.
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
	echo "rel_harness.sh: first argument must be the mount harness (got '${1:-}')" >&2
	exit 2
fi
harness=$1
shift
if [ "${SC_REL_FULL:-0}" = 1 ] && [ -n "${SC_REL_FULL_IMG:-}" ]; then
	SC_IMG_SIZE=$SC_REL_FULL_IMG
	export SC_IMG_SIZE
fi
exec "$harness" "$@"
