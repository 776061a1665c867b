#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t_refused.sh - a call the backing refuses changes nothing: fallocate
# ZERO_RANGE over tmpfs (which answers it EOPNOTSUPP) must fail with that
# error and leave every byte of the file as it was.  The data engine once
# re-encrypted the range's partial edges with zeros before it passed the
# whole units down, so a refused ZERO_RANGE had already zeroed them (found
# over CephFS's ceph-fuse, docs/reliability.md); both formats, with and
# without KEEP_SIZE, and a PUNCH_HOLE that tmpfs takes, for contrast.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }

mkdir -p "$T/tm" "$T/m"
mount -t tmpfs -o size=64m,mode=0700 stackcrypt-test "$T/tm" ||
	{ fail "cannot mount a tmpfs on $T/tm"; finish; }

# falloc MODE OFF LEN: fallocate(2) on $T/m/f; prints the errno's name, or OK.
falloc() {
	python3 - "$T/m/f" "$@" <<'PY'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDWR)
r = libc.fallocate(fd, int(sys.argv[2], 0), int(sys.argv[3]), int(sys.argv[4]))
e = ctypes.get_errno()
print("OK" if r == 0 else "EOPNOTSUPP" if e == errno.EOPNOTSUPP else errno.errorcode.get(e, str(e)))
os.close(fd)
PY
}

# remount BACKING: what is read next comes from the backing, not from the
# pages the kernel kept of the file (a refused fallocate drops none).
remount() {
	sc_umount "$T/m"
	sc_mount_fg "$1" "$T/m" --passfile="$T/pw" || fail "remount of $1"
}

# refused INITOPTS...: a volume of those init options on the tmpfs, one file
# of random bytes written through the mount, the fallocate cases; the range
# has partial units at both edges (100 and 9100 lie inside units 0 and 2).
refused() {
	local v="$T/tm/v${1#--cipher=}" mode r
	new_volume "$v" "$@" || return
	sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || { fail "mount of $v ($*)"; return; }
	head -c 20000 /dev/urandom >"$T/orig"
	cp "$T/orig" "$T/m/f" || fail "write through the mount ($*)"
	for mode in 0x11 0x10; do	# ZERO_RANGE | KEEP_SIZE, ZERO_RANGE
		r=$(falloc $mode 100 9000)
		check "fallocate mode $mode answers EOPNOTSUPP as tmpfs does ($*; got $r)" \
			test "$r" = EOPNOTSUPP
	done
	remount "$v"
	check "the refused ZERO_RANGEs left every byte as it was ($*)" cmp -s "$T/orig" "$T/m/f"
	r=$(falloc 0x03 100 9000)	# PUNCH_HOLE | KEEP_SIZE: tmpfs takes it
	check "PUNCH_HOLE succeeds ($*; got $r)" test "$r" = OK
	remount "$v"
	{ head -c 100 "$T/orig"; head -c 9000 /dev/zero; tail -c +9101 "$T/orig"; } >"$T/want"
	check "the punched range reads as zeros, the rest as it was ($*)" cmp -s "$T/want" "$T/m/f"
	sc_umount "$T/m"
	check "the daemon logged no error ($*): $(cat "$T/daemon.log")" \
		bash -c "! grep -qi 'error' '$T/daemon.log'"
}

refused --cipher=aes-xts --plaintext-names
refused --cipher=aes-gcm --encrypt-names
finish
