#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# upgrade_time.sh - one timed `stackcrypt upgrade` (docs/usage.md,
# "Upgrading to an integrity volume"; docs/format.md 11.12):
#
#   bench/experiments/upgrade_time.sh BUILD/fs/stackcrypt [cold]
#
# A default volume (bare init) on /var/tmp holding four files of 100 MiB
# and 2 000 of 10 KiB in 20 directories (random data), written through a
# mount; then the upgrade timed by /usr/bin/time (elapsed, CPU, peak RSS),
# with the page cache dropped first when "cold" is given (root); then fsck
# and a comparison of the mount with the source.  Not a benchmark loop:
# one run, for the figure the usage page quotes.
set -euo pipefail
B=$1
d=$(mktemp -d "${TMPDIR:-/var/tmp}/upgrade_time.XXXXXX")
trap 'fusermount3 -u "$d/m" 2>/dev/null || true; rm -rf "$d"' EXIT
mkdir -p "$d/v" "$d/m" "$d/src"
export XDG_STATE_HOME=$d/state
(umask 077; printf 'pw\n' >"$d/pw")
"$B" init --passfile="$d/pw" "$d/v" >/dev/null 2>&1
for i in 1 2 3 4; do head -c 100M /dev/urandom >"$d/src/big$i"; done
for i in $(seq 1 20); do
	mkdir "$d/src/d$i"
	for f in $(seq 1 100); do head -c 10240 /dev/urandom >"$d/src/d$i/f$f"; done
done
mount_fg() {
	"$B" mount -f --passfile="$d/pw" "$d/v" "$d/m" >"$d/daemon.log" 2>&1 &
	P=$!
	while ! findmnt -rn "$d/m" >/dev/null; do
		kill -0 $P 2>/dev/null || { cat "$d/daemon.log"; exit 1; }
		sleep 0.1
	done
}
mount_fg
cp -a "$d/src/." "$d/m/"
fusermount3 -u "$d/m"
wait $P
sync
[ "${2:-}" = cold ] && echo 3 >/proc/sys/vm/drop_caches
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f 'upgrade: %e s elapsed, %U s user, %S s sys, %M KiB peak RSS' \
	"$B" upgrade --passfile="$d/pw" "$d/v" 2>&1 | grep -v 'integrity volume now'
"$B" fsck --passfile="$d/pw" "$d/v" | tail -1
mount_fg
diff -r "$d/src" "$d/m" && echo "the mount equals the source"
fusermount3 -u "$d/m"
wait $P
