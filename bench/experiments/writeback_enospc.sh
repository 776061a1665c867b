#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What write(2) promises with and without the FUSE writeback cache when the
# backing filesystem fills up (docs/performance.md 1.1, issue #19's reserve
# question).  For each mode, a fresh ext4 image of --size MiB holds an
# aes-xts volume; one program opens one file on the empty mount and writes
# 4 KiB blocks of 'x' until write(2) fails or twice the image size is
# acknowledged, then fsyncs and closes it, drops the caches and reads the
# file back.  It prints, per mode, what write(2) acknowledged, the errors of
# write/fsync/close, the size read back, how much of it is intact, and the
# mount's dirty-page limit (/sys/class/bdi/MAJ:MIN/max_bytes).
#
#   bash bench/experiments/writeback_enospc.sh [--size=48] [STACKCRYPT]
# Root (loop devices, mounts, drop_caches).
set -euo pipefail
SIZE=48 SC=
for a in "$@"; do
	case $a in
	--size=*) SIZE=${a#*=} ;;
	-*) echo "writeback_enospc.sh: unknown option $a" >&2; exit 2 ;;
	*) SC=$a ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
[ -n "$SC" ] || SC=$here/../../build/fs/stackcrypt
[ -x "$SC" ] || { echo "writeback_enospc.sh: no stackcrypt binary at $SC (build first or name one)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "writeback_enospc.sh: needs root (loop devices)" >&2; exit 1; }
W=$(mktemp -d /tmp/sc-wbenospc.XXXXXX) PID=

cleanup()
{
	[ -n "$PID" ] && kill "$PID" 2>/dev/null || true
	mountpoint -q "$W/view" && fusermount3 -u "$W/view" 2>/dev/null || true
	[ -n "$PID" ] && wait "$PID" 2>/dev/null || true
	mountpoint -q "$W/fs" && umount "$W/fs" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

run_mode()
{
	local mode=$1 opts=()
	[ "$mode" = writeback ] && opts=(-o writeback)
	mkdir -p "$W/fs" "$W/view"
	truncate -s "${SIZE}M" "$W/img"
	mkfs.ext4 -q -F "$W/img"
	mount -o loop "$W/img" "$W/fs"
	mkdir "$W/fs/b"
	(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/key")
	# aes-xts, names in the clear: init's default before issue #28
	# shellcheck disable=SC2046  # an option or nothing
	"$SC" init --cipher=aes-xts $("$SC" init --help 2>&1 | grep -q -- --plaintext-names && echo --plaintext-names) --keyfile="$W/key" "$W/fs/b" >/dev/null 2>"$W/log" ||
		{ cat "$W/log" >&2; exit 1; }
	"$SC" mount -f -q --keyfile="$W/key" "${opts[@]}" "$W/fs/b" "$W/view" 2>"$W/log" &
	PID=$!
	while ! mountpoint -q "$W/view"; do
		kill -0 "$PID" 2>/dev/null || { cat "$W/log" >&2; exit 1; }
		sleep 0.05
	done
	local bdi; bdi=$(mountpoint -d "$W/view")
	printf '%-10s bdi max_bytes %s MiB: ' "$mode" \
		"$(( $(cat /sys/class/bdi/"$bdi"/max_bytes) >> 20 ))"
	python3 - "$W/view/f" $((2 * SIZE << 20)) <<'PY'
import errno, os, sys
path, limit = sys.argv[1], int(sys.argv[2])
def err(f, *a):
    try:
        f(*a); return 'ok'
    except OSError as e:
        return errno.errorcode[e.errno]
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
block, acked, werr = b'x' * 4096, 0, 'none'
while acked < limit:
    try:
        acked += os.write(fd, block)
    except OSError as e:
        werr = errno.errorcode[e.errno]
        break
ferr, cerr = err(os.fsync, fd), err(os.close, fd)
with open('/proc/sys/vm/drop_caches', 'w') as f:
    f.write('3')
with open(path, 'rb') as f:
    data = f.read()
intact = len(data) - len(data.lstrip(b'x'))
print(f"write(2) acknowledged {acked / 2**20:.1f} MiB (write error {werr}), "
      f"fsync {ferr}, close {cerr}; reads back {len(data) / 2**20:.1f} MiB, "
      f"intact {intact / 2**20:.1f} MiB")
PY
	fusermount3 -u "$W/view"
	wait "$PID"
	PID=
	[ -s "$W/log" ] && sed 's/^/  daemon: /' "$W/log"
	umount "$W/fs"
	rm -f "$W/img"
}

run_mode default
run_mode writeback
