#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# libcephfs_tools_test.sh - the volume tools and the one-mount lock over
# cephfs:// (libcephfs, no mount of the file system needed), and a kill -9
# of a cephfs:// daemon.  Run by `tests/ceph/harness.sh --libcephfs
# aes-xts`: SRC is the harness's volume (mounted by its daemon through the
# cephfs translator), SC_CEPH_URL the URL of the directory that
# SC_CEPH_DIR_MNT (a ceph-fuse mount) shows; new volumes are made beside
# SRC, damaged only through the ceph-fuse mount.
#
#  1. info over the URL; bad URLs and a missing directory: one line, and
#     the status mount and info give (2 and 13, 10);
#  2. the one-mount lock: a second mount of SRC, by URL and by the
#     ceph-fuse path, is refused while the harness's daemon holds it (the
#     same lock, taken through libcephfs and through ceph-fuse);
#  3. init, passwd (the old password refused after it, the new one
#     mounts), fsck clean (0 problems) and with one ciphertext byte XORed
#     through the ceph-fuse mount (its tag fails, exit 1), all by URL;
#     --repair refused whole (the engine offers no writes);
#  4. kill -9 of a cephfs:// daemon during a write, after an fsync of
#     another file: its MDS session keeps the one-mount lock, evicted as
#     docs/usage.md says; then the volume mounts again (the crash journal
#     replayed), every fsynced byte reads back and fsck finds 0 problems.
set -u
: "${SRC:?run me under tests/ceph/harness.sh --libcephfs}" "${SC_CEPH_URL:?}" \
	"${SC_CEPH_DIR_MNT:?}" "${CEPH_CONF:?}"
# shellcheck source=../cli/lib.sh
. "$(dirname "$(realpath "$0")")/../cli/lib.sh"

URLD=$SC_CEPH_URL
DIRD=$SC_CEPH_DIR_MNT
printf 'pw one\n' >"$T/pw"
printf 'pw two\n' >"$T/pw2"
chmod 600 "$T/pw" "$T/pw2"
mkdir "$T/m"

# 1. info, bad URLs
expect $E_OK "cipher:      aes-xts" "$SC_BIN" info "$SRC"
check "info names the URL" grep -qF "volume:      $SRC" "$T/out"
for bad in "cephfs://127.0.0.1/: no file system name" "cephfs://a@b@c/x: bad host name" \
	"cephfs://127.0.0.1:0/scfs: port must be 1-65535"; do
	expect $E_USAGE "bad URL $bad" "$SC_BIN" mount -f --passfile="$T/pw" "${bad%%: *}" "$T/m"
	expect $E_CONFIG "bad URL $bad" "$SC_BIN" info "${bad%%: *}"
done
expect $E_BACKING "No such file or directory" "$SC_BIN" info "$URLD/no-such-dir"
expect $E_BACKING "No such file or directory" "$SC_BIN" mount -f --passfile="$T/pw" "$URLD/no-such-dir" "$T/m"

# 2. the one-mount lock, against the harness's daemon
expect $E_BACKING "is in use by another stackcrypt mount" \
	"$SC_BIN" mount -f --keyfile="$KEYFILE" "$SRC" "$T/m"
expect $E_BACKING "is in use by another stackcrypt mount" \
	"$SC_BIN" mount -f --keyfile="$KEYFILE" "$BACKING" "$T/m"
check "nothing got mounted on $T/m" bash -c "! grep -qF ' $T/m ' /proc/self/mountinfo"

# 3. init, passwd, fsck by URL
mkdir "$DIRD/v" || fail "mkdir $DIRD/v"
expect $E_OK "Created a stackcrypt volume in $URLD/v" "$SC_BIN" init --passfile="$T/pw" "$URLD/v"
check "the config is on CephFS" test -s "$DIRD/v/.stackcrypt.conf"
sc_mount_fg "$URLD/v" "$T/m" --passfile="$T/pw" && {
	head -c 300000 /dev/urandom >"$T/data"
	cp "$T/data" "$T/m/file" && mkdir "$T/m/sub" && printf 'small\n' >"$T/m/sub/s" ||
		fail "filling v"
	sc_umount "$T/m"
}
expect $E_OK "password changed for $URLD/v" \
	"$SC_BIN" passwd --passfile="$T/pw" --new-passfile="$T/pw2" "$URLD/v"
expect $E_BADPASS "" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/v"
sc_mount_fg "$URLD/v" "$T/m" --passfile="$T/pw2" && {
	check "the file reads back after passwd" cmp "$T/data" "$T/m/file"
	sc_umount "$T/m"
}
expect $E_OK "; 0 problems" "$SC_BIN" fsck --passfile="$T/pw2" "$URLD/v"
big=$(find "$DIRD/v" -maxdepth 1 -type f -size +200k | head -1)
check "the file's ciphertext is on the ceph-fuse mount" test -n "$big"
check "no plaintext on CephFS" bash -c "! grep -rqF small '$DIRD/v'"
[ -n "$big" ] && flip "$big" 5000
expect $E_FAIL "fails its authentication tag" "$SC_BIN" fsck --passfile="$T/pw2" "$URLD/v"
check "one problem" grep -q "; 1 problem" "$T/out"
expect $E_USAGE "--repair cannot change a volume over cephfs:// yet" \
	"$SC_BIN" fsck --repair --passfile="$T/pw2" "$URLD/v"

# 4. kill -9 of a daemon, its session evicted, the volume back
mkdir "$DIRD/k" || fail "mkdir $DIRD/k"
expect $E_OK "" "$SC_BIN" init --passfile="$T/pw" "$URLD/k"
sc_mount_fg "$URLD/k" "$T/m" --passfile="$T/pw" && {
	dpid=${SC_PIDS[-1]}
	head -c 1000000 /dev/urandom >"$T/kdata"
	dd if="$T/kdata" of="$T/m/kept" bs=64k conv=fsync status=none || fail "writing kept"
	# the kill: mid-write of another file
	head -c 50000000 /dev/zero >"$T/m/torn" &
	writer=$!
	while [ ! -s "$T/m/torn" ]; do sleep 0.05; done
	kill -9 "$dpid"
	wait "$dpid" 2>/dev/null
	wait "$writer" 2>/dev/null
	fusermount3 -uz "$T/m"
	SC_PIDS=()
	# its session, found by the dead daemon's pid in its metadata, evicted
	id=$(timeout 60 ceph -c "$CEPH_CONF" tell mds.a client ls 2>/dev/null |
		python3 -c 'import json, sys
print(" ".join(str(c["id"]) for c in json.load(sys.stdin)
      if c.get("client_metadata", {}).get("pid") == sys.argv[1]))' "$dpid")
	check "the dead daemon's session ($dpid) is listed by the MDS" test -n "$id"
	for i in $id; do
		expect $E_OK "" timeout 60 ceph -c "$CEPH_CONF" tell mds.a client evict id="$i"
	done
	sc_mount_fg "$URLD/k" "$T/m" --passfile="$T/pw" && {
		check "every fsynced byte reads back after kill -9" cmp "$T/kdata" "$T/m/kept"
		sc_umount "$T/m"
	}
	expect $E_OK "; 0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$URLD/k"
}
finish
