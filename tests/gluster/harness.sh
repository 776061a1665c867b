#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# harness.sh - run one command against a fresh stackcrypt mount whose backing
# directory is on a fresh GlusterFS volume, always tear both down.
#
#   tests/gluster/harness.sh [--gfapi] [--keep-going] KIND CONFIG -- COMMAND [ARGS...]
#
#   KIND    single | dist | replica   (scripts/gluster.sh up KIND)
#   CONFIG  passthrough | null | aes-xts | aes-cbc
#
# It starts a volume of its own with scripts/gluster.sh (glusterd too, if
# none runs), FUSE-mounts it, and runs the mount harness (tests/mount/
# harness.sh CONFIG tmp -- COMMAND) with its scratch directory on that mount:
# BACKING, REF (the plain directory the battery takes as the specification:
# GlusterFS itself) and MNT are all on the volume.  Everything the mount
# harness exports and checks applies (SC_BIN, SC_MOUNT_OPTS, the daemon log
# without error lines, ...); also exported: SC_GLUSTER_VOL, SC_GLUSTER_DIR
# (the volume's FUSE mount), SC_GLUSTER_WORK (scripts/gluster.sh's -w: a
# client the command mounts with it is unmounted by `down` too).  On any exit, INT, TERM, or the death of its
# parent (meson), `scripts/gluster.sh down` runs.  A missing GlusterFS fails
# the test (exit 1); it never skips.  With --gfapi, a failed run prints the
# tail of libgfapi's log (its side of the connection); SC_KEEP=1 keeps a
# copy in $TMPDIR.

set -u
say() { printf 'gluster-harness: %s\n' "$*" >&2; }

here=$(dirname "$(realpath "$0")")
top=$(realpath "$here/../..")
GL=$top/scripts/gluster.sh

# shellcheck source=../lib/with_parent.sh
. "$here/../lib/with_parent.sh"
sc_die_with_parent "$@"

GFAPI=0
KEEP=()
if [ "${1:-}" = --gfapi ]; then
	GFAPI=1
	shift
fi
if [ "${1:-}" = --keep-going ]; then
	KEEP=(--keep-going)
	shift
fi
if [ $# -lt 4 ] || [ "$3" != -- ]; then
	say "usage: harness.sh [--gfapi] [--keep-going] KIND CONFIG -- COMMAND [ARGS...]"
	exit 1
fi
KIND=$1
CONFIG=$2
shift 3

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sc-gluster.XXXXXX") || { say "mktemp failed"; exit 1; }
SC_GLUSTER_VOL=scg$$
SC_GLUSTER_DIR=$WORK/client
status=1
CHILD=
down() {
	trap '' PIPE
	if [ -n "$CHILD" ]; then
		kill -TERM "$CHILD" 2>/dev/null
		wait "$CHILD" 2>/dev/null
	fi
	# libgfapi's own log (warnings and worse): where a gluster:// mount's
	# failure shows its side of the connection (disconnects, reconnects,
	# fd reopens), which the daemon's log does not have
	if ((status)) && [ -s "$WORK/gfapi.log" ]; then
		say "---- libgfapi log ($WORK/gfapi.log), last 100 lines ----"
		tail -n 100 "$WORK/gfapi.log" | sed 's/^/gfapi: /' >&2
		say "---- end of libgfapi log ----"
	fi
	if [ "${SC_KEEP:-0}" = 1 ] && [ -e "$WORK/gfapi.log" ]; then
		cp "$WORK/gfapi.log" "${TMPDIR:-/tmp}/sc-gfapi.$SC_GLUSTER_VOL.log" &&
			say "kept ${TMPDIR:-/tmp}/sc-gfapi.$SC_GLUSTER_VOL.log"
	fi
	"$GL" -w "$WORK/gl" down || { say "scripts/gluster.sh down failed"; status=1; }
	rm -f "$WORK/gfapi.log"
	[ ! -d "$SC_GLUSTER_DIR" ] || rmdir "$SC_GLUSTER_DIR"
	rmdir "$WORK" 2>/dev/null || say "left $WORK behind"
}
trap 'down; exit $status' EXIT
trap 'say interrupted; status=1; exit 1' INT TERM HUP
# For a run SIGKILLed before `down` is done (meson's follow-up to its
# SIGTERM; tests/lib/guard.sh): the stackcrypt mount on the volume's client
# first (the mount harness's own guard may be at it too), then `down`, which
# finds what to undo in WORKDIR's lists.
# shellcheck source=../lib/guard.sh
. "$here/../lib/guard.sh"
# shellcheck disable=SC2317  # run by the guard
leftovers() {
	[ -d "$WORK" ] || return 0
	say "cleaning up after a run that was killed ($WORK)"
	sc_unmount_below "$SC_GLUSTER_DIR" fuse
	down
}
sc_guard leftovers

"$GL" -w "$WORK/gl" check >/dev/null || exit 1
"$GL" -w "$WORK/gl" up "$KIND" "$SC_GLUSTER_VOL" || exit 1
mkdir "$SC_GLUSTER_DIR" || exit 1
"$GL" -w "$WORK/gl" mount "$SC_GLUSTER_VOL" "$SC_GLUSTER_DIR" || exit 1
say "$KIND volume $SC_GLUSTER_VOL mounted on $SC_GLUSTER_DIR"
export SC_GLUSTER_VOL SC_GLUSTER_DIR SC_GLUSTER_SH=$GL SC_GLUSTER_WORK=$WORK/gl
# The stackcrypt mount point off the volume's FUSE client: a lookup there
# that fails (ENOENT) around a brick restart makes the kernel drop the
# mounts below it, and the daemon, its mount gone, exits (seen in CI:
# brick_restart_test.py, its writer getting ENOENT from the bare directory
# for 300 s).  docs/usage.md, "Where to mount".
export SC_HARNESS_MNT_DIR=${TMPDIR:-/tmp}
if ((GFAPI)); then
	export SC_BACKING_URL=gluster://127.0.0.1/$SC_GLUSTER_VOL SC_BACKING_URL_DIR=$SC_GLUSTER_DIR
	# libgfapi's log, apart from the daemon's (whose error lines fail the test)
	# the daemon's log off the volume: a restarted brick must not cost lines
	export SC_HARNESS_STATE_DIR=$WORK
	opts=${SC_MOUNT_OPTS-allow_other}
	export SC_MOUNT_OPTS=${opts:+$opts,}gluster_log=$WORK/gfapi.log
fi

# In the background, so that a signal reaches our trap at once.
TMPDIR=$SC_GLUSTER_DIR "$top/tests/mount/harness.sh" "${KEEP[@]}" "$CONFIG" tmp -- "$@" &
CHILD=$!
wait "$CHILD"
status=$?
CHILD=
exit $status
