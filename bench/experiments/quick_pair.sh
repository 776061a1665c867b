#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# quick_pair.sh - one short whole-stack workload on a fresh volume, for
# timing two builds against each other as whole commands:
#
#   farm-bench -n 8 --vs 'bench/experiments/quick_pair.sh OLD [INIT_OPTS...]' \
#       -- bench/experiments/quick_pair.sh NEW [INIT_OPTS...]
#
# A volume on /var/tmp with a random key file (no KDF cost), mounted; 32 MiB
# of 4 KiB writes with an fsync, read back after a cache drop (root); 2 000
# files of 2 bytes made and removed; unmounted.  Before/after checks of a
# restructure that must not move any row (docs/design.md, "Which fs/ files
# include which headers"), not a benchmark table: bench/run.sh is that.
set -euo pipefail
B=$1
shift
d=$(mktemp -d "${TMPDIR:-/var/tmp}/quick_pair.XXXXXX")
trap 'fusermount3 -u "$d/m" 2>/dev/null; rm -rf "$d"' EXIT
mkdir -p "$d/v" "$d/m"
(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$d/key")
"$B" init --keyfile="$d/key" "$@" "$d/v" >/dev/null 2>"$d/init.err" || { cat "$d/init.err" >&2; exit 1; }
XDG_STATE_HOME=$d/state "$B" mount -q --keyfile="$d/key" "$d/v" "$d/m"
dd if=/dev/zero of="$d/m/f" bs=4k count=8192 conv=fsync status=none
echo 3 >/proc/sys/vm/drop_caches
dd if="$d/m/f" of=/dev/null bs=4k status=none
mkdir "$d/m/s"
for i in $(seq 1 2000); do echo x >"$d/m/s/$i"; done
rm -rf "$d/m/s"
