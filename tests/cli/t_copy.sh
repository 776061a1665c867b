#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t_copy.sh - a copy of a volume made without extended attributes (cp -r,
# rsync without -X, tar without --xattrs) has no file headers on the
# ciphers that keep them in xattrs: its mount says so in one line at once,
# pointing at the backup section of docs/usage.md, instead of letting the
# first read fail with EIO (issue #28).  A good copy, an empty volume and
# an aes-gcm copy (headers inside the files) mount without that line.
. "$(dirname "$0")/lib.sh"

LINE="files sampled in"
mkdir -p "$T/m"
head -c 20000 /dev/urandom >"$T/data"

# fill DIR: a file in the root and files in a subdirectory, through a mount.
fill() {
	sc_mount_fg "$1" "$T/m" --passfile="$T/pw" || finish
	cp "$T/data" "$T/m/top"
	mkdir "$T/m/sub"
	for i in 1 2 3; do cp "$T/data" "$T/m/sub/f$i"; done
	sc_umount "$T/m"
}

for kind in "--cipher=aes-xts" "--cipher=aes-cbc"; do
	V="$T/v"
	rm -rf "$V" "$T/copy" "$T/good"
	# shellcheck disable=SC2086  # the words are init options
	new_volume "$V" $kind || finish
	sc_mount_fg "$V" "$T/m" --passfile="$T/pw" || finish
	sc_umount "$T/m"
	check "$kind: an empty volume mounts without the line" bash -c "! grep -q '$LINE' '$T/daemon.log'"
	fill "$V"
	sc_mount_fg "$V" "$T/m" --passfile="$T/pw" || finish
	sc_umount "$T/m"
	check "$kind: the volume itself mounts without the line" bash -c "! grep -q '$LINE' '$T/daemon.log'"
	cp -a "$V" "$T/good"
	sc_mount_fg "$T/good" "$T/m" --passfile="$T/pw" || finish
	check "$kind: a copy with xattrs reads" cmp -s "$T/data" "$T/m/sub/f2"
	sc_umount "$T/m"
	check "$kind: a copy with xattrs mounts without the line" bash -c "! grep -q '$LINE' '$T/daemon.log'"

	# cp -r keeps no xattrs
	cp -r "$V" "$T/copy"
	check "$kind: cp -r dropped the headers" \
		bash -c "! getfattr -R -d -m user.stackcrypt '$T/copy' 2>/dev/null | grep -q ."
	sc_mount_fg "$T/copy" "$T/m" --passfile="$T/pw"
	# said before anything was read: the line is in the log of a mount nobody used yet
	check "$kind: the mount of the copy says it at once" grep -q "$LINE" "$T/daemon.log"
	check "$kind: one line, naming the count, the cause and the docs" \
		grep -qE "stackcrypt mount: warning: 4 of the 4 $LINE $T/copy carry no header \(e\.g\. '[^']+'\): a copy made without extended attributes .*\"Backups\" in docs/usage.md$" "$T/daemon.log"
	check "$kind: said once" [ "$(grep -c "$LINE" "$T/daemon.log")" = 1 ]
	is_mounted "$T/m" && sc_umount "$T/m"
done

# aes-gcm keeps its headers inside the files: a cp -r copy reads, no line
rm -rf "$T/v" "$T/copy"
new_volume "$T/v" --cipher=aes-gcm || finish
fill "$T/v"
cp -r "$T/v" "$T/copy"
sc_mount_fg "$T/copy" "$T/m" --passfile="$T/pw" || finish
check "aes-gcm: the cp -r copy reads" cmp -s "$T/data" "$T/m/sub/f3"
sc_umount "$T/m"
check "aes-gcm: no line" bash -c "! grep -q '$LINE' '$T/daemon.log'"

finish
