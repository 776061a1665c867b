#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# handles_test.sh - files reached by file handle instead of a held O_PATH fd.
# Run under harness.sh with the mount option max_path_fds=N (N small):
#
#   SC_MOUNT_OPTS=allow_other,max_path_fds=100,entry_timeout=0 harness.sh CONFIG ext4 -- handles_test.sh
#
# (entry_timeout=0: a file is deleted behind the mount's back below.)
#
# Checks, with SC_HANDLES_FILES (default 3000) files the kernel keeps cached:
#   - the daemon holds fewer than N + 200 descriptors (without the option it
#     would hold one per file: the EMFILE seen with `cp -a` of large trees);
#   - every file reads back what was written, after a remount too; hard
#     links, renames, chmod, truncate, xattrs and unlink work on files past
#     the budget;
#   - inode number reuse: a cached file deleted behind the mount's back and a
#     new file created through the mount that gets the same inode number are
#     two objects (the new one reads its own data, the old name is gone).
# Exits 0 if all hold, 1 with a FAIL line per broken property otherwise.

set -u
N=${SC_HANDLES_FILES:-3000}
. "$(dirname "$0")/test_lib.sh"
sc_test_init handles MNT BACKING DAEMON_PID SC_REMOUNT SC_MOUNT_OPTS
budget=$(echo "$SC_MOUNT_OPTS" | sed -n 's/.*max_path_fds=\([0-9]*\).*/\1/p')
[ -n "$budget" ] || { echo "handles_test.sh: SC_MOUNT_OPTS lacks max_path_fds=N" >&2; exit 1; }

mkdir "$MNT/t" || exit 1
for i in $(seq 1 "$N"); do
	echo "file $i" >"$MNT/t/f$i" || { fail "create f$i"; break; }
done
ls -l "$MNT/t" >/dev/null || fail "ls"
fds=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
echo "handles: $N files cached, daemon holds $fds descriptors (budget $budget)"
[ "$fds" -lt $((budget + 200)) ] || fail "daemon holds $fds fds for $N cached files, budget $budget"

# Each file is read by the shell itself (read -d '': up to a NUL, false at
# EOF), not by a cat per file: N forks of a subshell and cat were most of
# the test's time.  Its whole contents must be "file $i\n": no NUL (read
# stopping early), nothing before or after.
check_all() {
	local bad=0 i got
	for ((i = 1; i <= N; i++)); do
		[ -e "$MNT/t/f$i" ] || continue
		if IFS= read -r -d '' got <"$MNT/t/f$i" || [ "$got" != "file $i"$'\n' ]; then
			bad=$((bad + 1))
		fi
	done
	[ $bad -eq 0 ] || fail "$1: $bad files read back wrong"
}
check_all "before remount"

# Operations on the last files, surely past the budget.
f=$MNT/t/f$N g=$MNT/t/f$((N - 1))
ln "$f" "$MNT/t/link" || fail "link"
[ "$(stat -c %h "$f")" = 2 ] || fail "nlink after link: $(stat -c %h "$f")"
mv "$g" "$MNT/t/moved" && [ "$(cat "$MNT/t/moved")" = "file $((N - 1))" ] || fail "rename"
mv "$MNT/t/moved" "$g" || fail "rename back"
chmod 600 "$f" && [ "$(stat -c %a "$MNT/t/link")" = 600 ] || fail "chmod"
setfattr -n user.k -v v "$g" && [ "$(getfattr --only-values -n user.k "$g")" = v ] || fail "xattr"
echo "file $((N - 1))" >>"$g" && truncate -s "$(echo "file $((N - 1))" | wc -c)" "$g" || fail "append/truncate"
rm "$MNT/t/link" && [ "$(stat -c %h "$f")" = 1 ] || fail "unlink of a link"

"$SC_REMOUNT" || { fail "remount"; exit 1; }
check_all "after remount"

# Inode number reuse.  Only a file without a held fd can lose its inode
# while the kernel still knows it, so fill the budget first.
DAEMON_PID=$(cat "$SC_HARNESS_STATE/daemon.pid")
ls -l "$MNT/t" >/dev/null
echo old >"$MNT/old"
old_ino=$(stat -c %i "$MNT/old")
rm "$BACKING/old"
reused=0
for k in $(seq 1 50); do
	echo "new $k" >"$MNT/new$k"
	if [ "$(stat -c %i "$MNT/new$k")" = "$old_ino" ]; then
		reused=1
		[ "$(cat "$MNT/new$k")" = "new $k" ] || fail "reused inode: new$k reads '$(cat "$MNT/new$k")'"
		break
	fi
done
[ $reused = 1 ] || fail "inode $old_ino was not reused in 50 creates (test needs ext4)"
# Mounted with entry_timeout=0 (meson.build): the kernel asks again for 'old'.
[ ! -e "$MNT/old" ] || fail "deleted file still visible"
[ $failed = 0 ] && echo "handles: all checks passed"
exit $failed
