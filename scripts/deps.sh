#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what stackcrypt needs on Debian 12, by purpose:
#
#   scripts/deps.sh [--print] [GROUP...]   GROUP: run build test bench gluster
#                                           ceph all (or --run, --build, ...)
#
#   run    mounting and the commands: fusermount3 and the shared libraries
#   build  a compiler, meson, ninja and the headers, libgfapi's included
#          (gluster:// backings; liburing's: -o io_uring) (the default: run +
#          build, for `meson setup build --buildtype=release -Dtests=false`,
#          which builds every feature: `stackcrypt --version` lists them)
#   test   build + what `bash scripts/test.sh` uses: Criterion (the unit
#          tests; without it only -Dtests=false builds), mkfs of ext4 and
#          XFS, getfattr/setfattr, dmsetup, fio, valgrind, clang for the
#          fuzzers, strace, groff, python3 with python3-cryptography (the
#          reference computations of the aes-gcm tests), and the gluster
#          group (the tests of suite `gluster` run in CI), rsync
#          (cli-reverse and the usage.md backup walkthrough copy reverse
#          views with it), fuser and gdb (what a test that fails names:
#          who holds a busy mount, where a stuck daemon waits), and what
#          suite `package` uses: dpkg-buildpackage, debhelper, lintian,
#          systemd-analyze
#   bench  build + what `bash bench/run.sh` uses: mkfs of ext4 (--full: XFS
#          too), fio (--full), gnuplot for the charts; --full installs the
#          peer filesystems itself; and what bench/reverse_speed.sh uses:
#          rsync and gocryptfs (its -reverse is the peer)
#   gluster  build + GlusterFS for scripts/gluster.sh and the tests of suite
#          `gluster` (glusterd, the FUSE client), plus mkfs of XFS for the
#          brick images
#   ceph   build + Ceph for scripts/ceph.sh and the tests of suite `ceph`
#          (monitor, manager, OSD, MDS, ceph-fuse, libcephfs with its headers
#          and Debian's python module): 56 MB to fetch, 222 MB installed,
#          3.5 min to install on the project's 2-core machine (niced, under
#          load); not in `test`, since CI does not run suite `ceph` yet
#   all    every group
#
# --print lists the packages of the groups on standard output and installs
# nothing.  Run as root (CI does); uses sudo when it is not root.
set -euo pipefail

usage() {
	sed -n '3,39s/^# \{0,1\}//p' "$0"
}

declare -A group=(
	[run]="fuse3 libfuse3-3 libssl3 libxxhash0 liburing2 libgfapi0 libargon2-1"
	[build]="build-essential meson ninja-build pkg-config libfuse3-dev libssl-dev libxxhash-dev liburing-dev libargon2-dev
		libglusterfs-dev"
	[test]="libcriterion-dev e2fsprogs xfsprogs util-linux attr dmsetup fio python3 python3-cryptography strace
		groff-base valgrind clang libclang-rt-14-dev tar rsync psmisc gdb
		dpkg-dev debhelper fakeroot lintian systemd git"
	[bench]="e2fsprogs xfsprogs util-linux fio gnuplot-nox python3 tar rsync gocryptfs"
	[gluster]="glusterfs-server glusterfs-client xfsprogs util-linux python3"
	[ceph]="ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse ceph-common libcephfs-dev python3-cephfs
		util-linux"
)

print=0
want=()
for arg in "$@"; do
	case $arg in
	run | build | --run | --build) want+=("${arg#--}") ;;
	test | --test) want+=(run build test gluster) ;;	# suite gluster runs in CI
	bench | gluster | ceph | --bench | --gluster | --ceph) want+=(run build "${arg#--}") ;;
	all | --all) want+=(run build test bench gluster ceph) ;;
	--print) print=1 ;;
	-h | --help) usage; exit 0 ;;
	*)
		echo "scripts/deps.sh: unknown argument '$arg': groups are run, build, test," \
			"bench, gluster, ceph, all (see --help)" >&2
		exit 2
		;;
	esac
done
[ ${#want[@]} -gt 0 ] || want=(run build)

pkgs=()
for g in "${want[@]}"; do
	for p in ${group[$g]}; do
		[[ " ${pkgs[*]} " == *" $p "* ]] || pkgs+=("$p")
	done
done
if ((print)); then
	echo "${pkgs[*]}"
	exit 0
fi

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update
"${as_root[@]}" apt-get install -y --no-install-recommends "${pkgs[@]}"
