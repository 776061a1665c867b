#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# harness.sh - run one command against a fresh stackcrypt mount whose backing
# directory is on CephFS (a ceph-fuse mount), always tear both down.
#
#   tests/ceph/harness.sh [--cephx=on|off] [--libcephfs] [--keep-going] CONFIG -- COMMAND [ARGS...]
#
#   CONFIG  passthrough | null | aes-xts | aes-cbc | aes-gcm
#
# It starts the one-node cluster with scripts/ceph.sh (or joins the one
# that runs, cephx as asked: on by default), ceph-fuse mounts a directory of
# its own of the file system (scfs/sc-harness-PID) and runs the mount
# harness (tests/mount/harness.sh CONFIG tmp -- COMMAND) with its scratch
# directory on that mount: BACKING and REF (the plain directory the battery
# takes as the specification: CephFS itself) are on CephFS; MNT and the
# harness's state (the daemon's log) are local.
# Everything the mount harness exports and checks applies (SC_BIN,
# SC_MOUNT_OPTS, the daemon log without error lines, ...); also exported:
# SC_CEPH_DIR_MNT (the ceph-fuse mount), SC_CEPH_WORK (scripts/ceph.sh's
# -w), SC_CEPH_SH, and SC_LOCAL_REF: an empty directory on the local
# filesystem (mode 755), for checks where CephFS itself is not POSIX (see
# meson.build).  On any exit, INT, TERM, or the death of its parent (meson),
# `scripts/ceph.sh down` runs: the directory is removed, and the cluster
# stopped if no other test uses it.  A missing Ceph or FUSE fails the test
# (exit 1); it never skips.  Exported too: SC_CEPH_URL, the cephfs:// URL
# of the ceph-fuse mount's directory, and CEPH_CONF, the cluster's config
# file (monitor, keyring).  With --libcephfs, init and mount take BACKING
# by its URL (the cephfs translator: the ceph-fuse mount only shows the
# harness and the test the same directory).

set -u
say() { printf 'ceph-harness: %s\n' "$*" >&2; }

here=$(dirname "$(realpath "$0")")
top=$(realpath "$here/../..")
CS=$top/scripts/ceph.sh

# shellcheck source=../lib/with_parent.sh
. "$here/../lib/with_parent.sh"
sc_die_with_parent "$@"

CEPHX=--cephx=on
KEEP=()
LIBCEPHFS=0
case ${1:-} in --cephx=*) CEPHX=$1; shift ;; esac
if [ "${1:-}" = --libcephfs ]; then
	LIBCEPHFS=1
	shift
fi
if [ "${1:-}" = --keep-going ]; then
	KEEP=(--keep-going)
	shift
fi
if [ $# -lt 3 ] || [ "$2" != -- ]; then
	say "usage: harness.sh [--cephx=on|off] [--libcephfs] [--keep-going] CONFIG -- COMMAND [ARGS...]"
	exit 1
fi
CONFIG=$1
shift 2

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sc-ceph.XXXXXX") || { say "mktemp failed"; exit 1; }
chmod 755 "$WORK"	# SC_LOCAL_REF is used as uid 65534 too
SC_CEPH_DIR_MNT=$WORK/client
SC_LOCAL_REF=$WORK/local-ref
status=1
CHILD=
down() {
	trap '' PIPE
	if [ -n "$CHILD" ]; then
		kill -TERM "$CHILD" 2>/dev/null
		wait "$CHILD" 2>/dev/null
	fi
	"$CS" -w "$WORK/ceph" down || { say "scripts/ceph.sh down failed"; status=1; }
	[ ! -d "$SC_CEPH_DIR_MNT" ] || rmdir "$SC_CEPH_DIR_MNT"
	rm -rf "$SC_LOCAL_REF"
	rmdir "$WORK" 2>/dev/null || say "left $WORK behind"
}
trap 'down; exit $status' EXIT
trap 'say interrupted; status=1; exit 1' INT TERM HUP
# For a run SIGKILLed before `down` is done (tests/lib/guard.sh): the
# stackcrypt mount on the ceph-fuse mount first, then `down`.
# shellcheck source=../lib/guard.sh
. "$here/../lib/guard.sh"
# shellcheck disable=SC2317  # run by the guard
leftovers() {
	[ -d "$WORK" ] || return 0
	say "cleaning up after a run that was killed ($WORK)"
	sc_unmount_below "$SC_CEPH_DIR_MNT" fuse
	down
}
sc_guard leftovers

"$CS" -w "$WORK/ceph" check >/dev/null || exit 1
"$CS" -w "$WORK/ceph" "$CEPHX" up >/dev/null || exit 1
mkdir "$SC_CEPH_DIR_MNT" "$SC_LOCAL_REF" || exit 1
"$CS" -w "$WORK/ceph" mount "scfs/sc-harness-$$-${WORK##*.}" "$SC_CEPH_DIR_MNT" || exit 1
say "CephFS directory scfs/sc-harness-$$-${WORK##*.} mounted on $SC_CEPH_DIR_MNT ($CEPHX)"
export SC_CEPH_DIR_MNT SC_CEPH_SH=$CS SC_CEPH_WORK=$WORK/ceph SC_LOCAL_REF
# the stackcrypt mount point off the ceph-fuse mount, as for GlusterFS
# (tests/gluster/harness.sh; docs/usage.md, "Where to mount")
export SC_HARNESS_MNT_DIR=${TMPDIR:-/tmp}
# The daemon's log and the harness's state off CephFS too: a test that
# stops the OSD or the MDS (outage_test.py) must not make the log's writes
# wait for it, nor lose what the daemon said meanwhile.
export SC_HARNESS_STATE_DIR=$WORK
export CEPH_CONF=${SC_CEPH_DIR:-/var/tmp/stackcrypt-ceph}/ceph.conf
export SC_CEPH_URL=cephfs://admin@127.0.0.1:${SC_CEPH_PORT:-3301}/scfs/sc-harness-$$-${WORK##*.}
if ((LIBCEPHFS)); then
	export SC_BACKING_URL=$SC_CEPH_URL SC_BACKING_URL_DIR=$SC_CEPH_DIR_MNT
fi

# In the background, so that a signal reaches our trap at once.
TMPDIR=$SC_CEPH_DIR_MNT "$top/tests/mount/harness.sh" "${KEEP[@]}" "$CONFIG" tmp -- "$@" &
CHILD=$!
wait "$CHILD"
status=$?
CHILD=
exit $status
