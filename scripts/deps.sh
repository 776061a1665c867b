#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs everything stackcrypt needs to build, test and benchmark on
# Debian 12.  Run as root (CI does); uses sudo when it is not root.
set -euo pipefail

pkgs=(
	build-essential meson ninja-build pkg-config
	libfuse3-dev fuse3 libssl-dev openssl libxxhash-dev libcriterion-dev
	e2fsprogs xfsprogs util-linux attr fio gnuplot-nox xxd tar
	dmsetup clang libclang-rt-14-dev valgrind python3 strace groff-base
)

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update
"${as_root[@]}" apt-get install -y --no-install-recommends "${pkgs[@]}"
