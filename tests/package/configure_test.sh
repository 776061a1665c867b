#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's install gives every advertised feature (issue #31):
#  - its `bash scripts/deps.sh` line installs libgfapi's and liburing's
#    headers (checked with --print and dpkg-query);
#  - its `meson setup` line configures gluster:// in (configure only);
#  - without libgfapi's headers, meson stops with a line that says what to
#    install, unless -Dgfapi=disabled asks for a build without gluster://;
#  - such a build says so in --version and refuses gluster:// with the
#    exact rebuild command, and that command, run, gives +gfapi; built
#    with -Dcephfs=disabled too, it refuses cephfs:// with its own line.
# That build is also CI's release build with warnings as errors
# (scripts/test.sh builds no other): release mode (-O3) sees warnings the
# debugoptimized builds do not (-Wmaybe-uninitialized), and -Werror makes
# the binary without gluster:// (gluster_none.c) build warning-free there,
# then the rebuild everything the install builds, with gluster://.  The
# test programs are left out as the install leaves them out: the two
# debugoptimized builds of CI compile them with -Werror.
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SC_BIN=${SC_BIN:-$SRC/build/fs/stackcrypt}
. "$SRC/tests/cli/lib.sh"

README="$SRC/README.md"
awk '/^## Install/ {q=1} q && /^```sh$/ {b=1; next} b && /^```$/ {exit} b {print}' "$README" >"$T/install.sh"
deps_line=$(grep -m1 '^bash scripts/deps.sh' "$T/install.sh" | sed 's/ *#.*//')
setup_line=$(grep -m1 '^meson setup build' "$T/install.sh" | sed 's/ *#.*//')
check "README's install runs scripts/deps.sh" test -n "$deps_line"
check "README's install runs meson setup" test -n "$setup_line"
read -ra deps_args <<<"${deps_line#bash scripts/deps.sh}"
bash "$SRC/scripts/deps.sh" --print "${deps_args[@]}" | tr ' ' '\n' >"$T/pkgs"
for p in libglusterfs-dev liburing-dev libfuse3-dev; do
	check "'$deps_line' installs $p" grep -qx "$p" "$T/pkgs"
	check "$p is installed here" bash -c "dpkg-query -W -f '\${Status}' $p | grep -q 'install ok installed'"
done

# the README's meson setup line, in a build directory of our own
read -ra setup_args <<<"${setup_line#meson setup build}"
expect $E_OK "" meson setup "$T/readme-build" "$SRC" "${setup_args[@]}"
check "the README's build has gfapi" grep -Eq 'gfapi *: *[0-9]' "$T/out"

# pkg-config without glusterfs-api.pc: the headers missing, as on a
# machine where libglusterfs-dev is not installed
mkdir "$T/pc"
IFS=: read -ra pcdirs <<<"$(pkg-config --variable pc_path pkg-config)"
for d in "${pcdirs[@]}"; do
	[ -d "$d" ] || continue
	for f in "$d"/*.pc; do
		[ -e "$f" ] && [ "${f##*/}" != glusterfs-api.pc ] && ln -sf "$f" "$T/pc/"
	done
done
expect $E_FAIL "install libglusterfs-dev" env PKG_CONFIG_LIBDIR="$T/pc" \
	meson setup "$T/nogfapi" "$SRC" --buildtype=release -Dtests=false
check "...and names -Dgfapi=disabled" grep -q -- '-Dgfapi=disabled' "$T/out"
rm -rf "$T/nogfapi"
expect $E_OK "" env PKG_CONFIG_LIBDIR="$T/pc" \
	meson setup "$T/nogfapi" "$SRC" --buildtype=release -Dtests=false -Dgfapi=disabled
check "summary says gfapi is out" grep -Eq 'gfapi *: *no' "$T/out"

# a build with -Dgfapi=disabled (libgfapi present: as after installing it),
# warnings as errors (see above)
rm -rf "$T/nogfapi"
start=$(date +%s)
expect $E_OK "" meson setup "$T/nogfapi" "$SRC" --buildtype=release -Dtests=false -Dwerror=true \
	-Dgfapi=disabled -Dcephfs=disabled
expect $E_OK "" ninja -C "$T/nogfapi" fs/stackcrypt
expect $E_OK "features: -gfapi +io_uring -cephfs" "$T/nogfapi/fs/stackcrypt" --version
# cephfs:// too (the same build, so no build more): refused with its rebuild line
run "$T/nogfapi/fs/stackcrypt" info cephfs://127.0.0.1/scfs/dir
check "cephfs:// refused" test "$RC" != 0
check "...saying the build lacks CephFS and how to rebuild with it" grep -qF \
	"built without CephFS support (no libcephfs): install libcephfs-dev, then rebuild with \`meson configure $T/nogfapi -Dcephfs=enabled" "$T/out"
run "$T/nogfapi/fs/stackcrypt" info gluster://127.0.0.1/novolume/dir
check "gluster:// refused" test "$RC" != 0
check "...naming the build option" grep -q 'built without GlusterFS support (-Dgfapi=disabled)' "$T/out"
rebuild=$(sed -n 's/.*rebuild with `\(.*\)`.*/\1/p' "$T/out")
check "...and the exact rebuild command for this tree" \
	test "$rebuild" = "meson configure $T/nogfapi -Dgfapi=enabled && ninja -C $T/nogfapi && sudo meson install -C $T/nogfapi"
# run it, but for the install, from elsewhere than the source tree
run bash -c "cd / && ${rebuild% && sudo meson install*}"
check "the rebuild command runs: $(tail -3 "$T/out")" test "$RC" = 0
[ "$RC" = 0 ] || grep -E -m 40 -A 3 'error|warning' "$T/out" >&2
expect $E_OK "features: +gfapi +io_uring" "$T/nogfapi/fs/stackcrypt" --version
echo "the two builds took $(($(date +%s) - start)) s"

expect $E_OK "features: +gfapi +io_uring" "$SC_BIN" --version
finish
