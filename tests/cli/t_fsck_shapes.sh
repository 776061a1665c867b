#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck finds nothing wrong in files of every shape the mount makes: sizes
# around the 16-byte and unit boundaries and the 1 MiB read chunk, sparse
# files, growing and shrinking truncates, appends, unaligned overwrites,
# writes past EOF, fallocate; for every cipher at block sizes 512, 4096 and
# 65536.  (A false alarm would make --repair quarantine a good file.)  The
# content must also survive the unmount and remount.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }

for spec in "null 512" "aes-xts 512" "aes-cbc 512" "aes-xts 4096" "aes-cbc 4096" \
	    "aes-xts 65536" "aes-cbc 65536"; do
	set -- $spec
	cipher=$1 bs=$2
	v="$T/v-$cipher-$bs" m="$T/m-$cipher-$bs"
	mkdir -p "$m"
	new_volume "$v" --cipher="$cipher" --block-size="$bs" || continue
	sc_mount_fg "$v" "$m" --passfile="$T/pw" || continue
	for n in 1 15 16 17 $((bs - 1)) $bs $((bs + 1)) $((bs + 15)) $((bs + 16)) \
		 $((2 * bs + 17)) $((1048576 - bs + 7)) $((1048576 + 5)) $((1048576 + bs + 3)); do
		head -c $n /dev/urandom >"$m/f$n"
	done
	dd if=/dev/urandom of="$m/sparse" bs=1 count=1 seek=$((3 * bs + 100)) status=none
	head -c $((bs + 5)) /dev/urandom >"$m/grow"
	truncate -s $((5 * bs + 3)) "$m/grow"
	head -c 7 /dev/urandom >"$m/growtiny"
	truncate -s $((2 * bs)) "$m/growtiny"
	head -c $((4 * bs)) /dev/urandom >"$m/shrink"
	truncate -s $((bs + 9)) "$m/shrink"
	for i in $(seq 20); do head -c 333 /dev/urandom >>"$m/append"; done
	head -c $((3 * bs)) /dev/urandom >"$m/mid"
	dd if=/dev/urandom of="$m/mid" bs=1 count=100 seek=$((bs - 50)) conv=notrunc status=none
	head -c 10 /dev/urandom >"$m/past"
	dd if=/dev/urandom of="$m/past" bs=1 count=10 seek=$((2 * bs + 1)) conv=notrunc status=none
	fallocate -l $((4 * bs)) "$m/falloc" 2>/dev/null && echo x >>"$m/falloc"
	(cd "$m" && md5sum -- * | sort) >"$T/sum.before"
	sc_umount "$m"

	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$v"
	check "$cipher/$bs: every file checked" grep -qE ": 2[01] files" "$T/out"

	sc_mount_fg "$v" "$m" --passfile="$T/pw" || continue
	(cd "$m" && md5sum -- * | sort) >"$T/sum.after"
	sc_umount "$m"
	check "$cipher/$bs: contents survive the remount" cmp -s "$T/sum.before" "$T/sum.after"
done

finish
