#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package, as a user gets it: `dpkg-buildpackage -b -us -uc` on a
# copy of the source tree, lintian on the result (no error, no warning),
# `dpkg -i`, then with the installed files only: --version lists gfapi and
# io_uring, a volume mounted by the systemd user unit's own ExecStart line
# (the daemon in the foreground, stopped by PID) and by `mount -t
# stackcrypt` (/sbin/mount.stackcrypt), the bash completion loads; then
# `dpkg --purge` leaves none of the package's files.  The package is purged
# on every exit, failed checks included; a stackcrypt package installed
# before the test is refused, never replaced.
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SC_BIN=/usr/bin/stackcrypt	# lib.sh: the daemons it finds and stops
. "$SRC/tests/cli/lib.sh"

for tool in dpkg-buildpackage dh lintian fakeroot systemd-analyze mount.fuse3 fusermount3; do
	command -v "$tool" >/dev/null || PATH=$PATH:/sbin:/usr/sbin command -v "$tool" >/dev/null ||
		{ echo "FAIL: $tool missing: run 'bash scripts/deps.sh test'" >&2; exit 1; }
done
[ -c /dev/fuse ] || { echo "FAIL: no /dev/fuse" >&2; exit 1; }
if dpkg-query -W -f '${Status}' stackcrypt 2>/dev/null | grep -q 'installed'; then
	echo "FAIL: a stackcrypt package is installed already; this test installs and purges its own" >&2
	exit 1
fi
for f in /usr/bin/stackcrypt /sbin/mount.stackcrypt; do
	[ ! -e "$f" ] || { echo "FAIL: $f exists, from no package: the test would replace it" >&2; exit 1; }
done

installed=0
purge() {
	if ((installed)); then
		cleanup_mounts
		dpkg --purge stackcrypt >"$T/purge.log" 2>&1 || cat "$T/purge.log" >&2
		installed=0
	fi
}
cleanup_mounts() {
	local pids
	pids=$(daemon_pids "$T")
	sc_unmount_below "$T" 2>/dev/null
	# shellcheck disable=SC2086  # a list of pids
	[ -z "$pids" ] || { kill $pids 2>/dev/null; sc_wait_gone $pids; }
}
trap 'purge; cleanup' EXIT

# the source as a fresh clone has it (tracked and new files, no build trees)
mkdir -p "$T/src/stackcrypt"
(cd "$SRC" && git ls-files -co --exclude-standard | tar -cf - -T -) | tar -xf - -C "$T/src/stackcrypt" ||
	{ echo "FAIL: copying the source" >&2; exit 1; }
start=$(date +%s)
(cd "$T/src/stackcrypt" && dpkg-buildpackage -b -us -uc) >"$T/build.log" 2>&1
RC=$?
echo "dpkg-buildpackage: exit $RC after $(($(date +%s) - start)) s"
if [ "$RC" != 0 ]; then
	tail -40 "$T/build.log" >&2
	echo "FAIL: dpkg-buildpackage" >&2
	exit 1
fi
deb=$(ls "$T"/src/stackcrypt_*_*.deb)
check "one package built" test -f "$deb"
lintian --fail-on error,warning "$T"/src/stackcrypt_*.changes >"$T/lintian.log" 2>&1
RC=$?
CHECKS=$((CHECKS + 1))
[ "$RC" = 0 ] && ! grep -q '^[EW]: ' "$T/lintian.log" || { fail "lintian:"; cat "$T/lintian.log" >&2; }
# run-time libraries only: ${shlibs:Depends}, and fuse3 for mount.fuse3 and fusermount3
dpkg-deb -f "$deb" Depends >"$T/depends"
check "depends on the libraries it links" grep -q 'libfuse3-3.*libgfapi0.*libssl3.*liburing2' "$T/depends"
check "depends on no -dev package nor a build tool" \
	bash -c "! grep -qE -- '-dev|meson|ninja|gcc|criterion' '$T/depends'"

run dpkg -i "$deb"
[ "$RC" = 0 ] || { fail "dpkg -i: $(cat "$T/out")"; finish; }
installed=1
dpkg-query -L stackcrypt | sort >"$T/files"
expect $E_OK "+gfapi +io_uring" /usr/bin/stackcrypt --version
for f in /usr/bin/stackcrypt /sbin/mount.stackcrypt /usr/share/man/man1/stackcrypt.1.gz \
	/usr/share/man/man8/mount.stackcrypt.8.gz /usr/share/bash-completion/completions/stackcrypt \
	/usr/lib/systemd/user/stackcrypt@.service; do
	check "installed: $f" grep -qx "$f" "$T/files"
	check "present: $f" test -e "$f"
done
check "the completion loads and completes 'mount -o io_'" bash -c '
	. /usr/share/bash-completion/completions/stackcrypt
	complete -p stackcrypt | grep -q _stackcrypt || exit 1
	COMP_WORDS=(stackcrypt mount -o io_); COMP_CWORD=3; _stackcrypt
	[ "${COMPREPLY[*]}" = io_uring ]'
run systemd-analyze verify /usr/lib/systemd/user/stackcrypt@.service
CHECKS=$((CHECKS + 1))
[ "$RC" = 0 ] || fail "systemd-analyze verify of the user unit: $(cat "$T/out")"

# a volume, mounted by the unit's ExecStart line with its variables set as
# its EnvironmentFile sets them (systemd runs no user manager here)
new_keyfile "$T/key"
mkdir "$T/enc" "$T/plain"
expect $E_OK "" /usr/bin/stackcrypt init --keyfile="$T/key" "$T/enc"
unit=/usr/lib/systemd/user/stackcrypt@.service
start_line=$(sed -n 's/^ExecStart=//p' "$unit")
stop_line=$(sed -n 's/^ExecStop=//p' "$unit")
check "the unit starts the daemon in the foreground" grep -q '^ExecStart=/usr/bin/stackcrypt mount -f ' "$unit"
declare -A unit_env=([SECRET]="--keyfile=$T/key" [BACKING]="$T/enc" [MOUNTPOINT]="$T/plain")
# unit_argv LINE: the words of an Exec line, each ${VAR} one word
unit_argv() {
	local w
	ARGV=()
	for w in $1; do
		if [[ $w =~ ^\$\{([A-Z]+)\}$ ]]; then
			ARGV+=("${unit_env[${BASH_REMATCH[1]}]}")
		else
			ARGV+=("$w")
		fi
	done
}
unit_argv "$start_line"
"${ARGV[@]}" >"$T/daemon.log" 2>&1 </dev/null &
SC_PIDS+=($!)
while ! is_mounted "$T/plain"; do
	kill -0 "${SC_PIDS[-1]}" 2>/dev/null || break
	sleep 0.1
done
if is_mounted "$T/plain"; then
	head -c 65536 /dev/urandom >"$T/data"
	cp "$T/data" "$T/plain/data" || fail "write through the unit's mount"
	check "the unit's mount reads back" cmp -s "$T/data" "$T/plain/data"
	check "the backing file is not the plaintext" bash -c "! cmp -s '$T/data' '$T/enc/data'"
	unit_argv "$stop_line"
	check "the unit's ExecStop unmounts" "${ARGV[@]}"
	wait "${SC_PIDS[-1]}"
	check "the daemon exits 0 after the unmount" test $? = 0
	SC_PIDS=()
else
	fail "the unit's ExecStart did not mount: $(cat "$T/daemon.log")"
fi
check "the daemon logged no error" bash -c "! grep -qi 'error' '$T/daemon.log'"

# mount -t stackcrypt: mount(8) runs /sbin/mount.stackcrypt (the daemon
# detaches: found by its argv, stopped by PID if the unmount fails)
expect $E_OK "" mount -t stackcrypt -o nosuid,nodev,keyfile="$T/key" "$T/enc" "$T/plain"
if is_mounted "$T/plain"; then
	check "mount -t stackcrypt reads the volume" cmp -s "$T/data" "$T/plain/data"
	check "mount -t stackcrypt is type fuse.stackcrypt, nosuid,nodev" \
		awk -v m="$T/plain" '$5 == m && $6 ~ /nosuid/ && $6 ~ /nodev/ {
			for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "fuse.stackcrypt") f = 1 } END {exit !f}' \
		/proc/self/mountinfo
	pids=$(daemon_pids "$T")
	check "umount of the mount -t mount" umount "$T/plain"
	# shellcheck disable=SC2086  # a list of pids
	[ -z "$pids" ] || sc_wait_gone $pids
else
	fail "mount -t stackcrypt did not mount: $(cat "$T/out")"
fi
cleanup_mounts
expect $E_OK "0 problems" /usr/bin/stackcrypt fsck --keyfile="$T/key" "$T/enc"

run dpkg --purge stackcrypt
check "dpkg --purge" test "$RC" = 0
installed=0
check "the package is gone" bash -c "! dpkg-query -W -f '\${Status}' stackcrypt 2>/dev/null | grep -q installed"
while read -r f; do
	[ -d "$f" ] && continue	# directories shared with other packages stay
	CHECKS=$((CHECKS + 1))
	[ ! -e "$f" ] && [ ! -L "$f" ] || fail "left after purge: $f"
done <"$T/files"
check "no stackcrypt directory left" bash -c '! ls -d /usr/share/doc/stackcrypt /etc/stackcrypt 2>/dev/null | grep -q .'
finish
