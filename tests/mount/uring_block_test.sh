#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# uring_block_test.sh - no io_uring queue waits behind a long request
# (fs/fuse/uring.c: the leader, standby and server roles of a queue).
# Runs in a harness mount with -o io_uring (through uring_test.sh) whose
# daemon has the test hook on: SC_TEST_BLOCK_XATTR=user.sc_block holds a
# getxattr of that name until SC_TEST_BLOCK_FIFO, a FIFO, has been opened
# for writing and closed.
#
# Two callers pinned to CPU 0 (so the kernel puts both requests on queue
# 0): the first's getxattr is held; the open(2) of the FIFO returns only
# once the daemon serves it, so no sleep is needed to know it.  Then a
# second caller creates, stats and reads a file: with one request at a
# time per queue it waits forever (the test hangs until meson's timeout
# fails it); here it must complete.  Then the first is released.  Last, a
# SIGTERM to the daemon while a getxattr is held: the daemon must finish
# that request and exit 0.
set -u

fifo=${SC_TEST_BLOCK_FIFO:?SC_TEST_BLOCK_FIFO is not set}
fail() { echo "uring_block_test: $*" >&2; exit 1; }

echo a >"$MNT/a" || fail "cannot write $MNT/a"
rm -f "$fifo"
mkfifo "$fifo" || fail "mkfifo $fifo failed"
# However this ends (a hang killed by meson included), release the hook
# (a read-write open of a FIFO never blocks), so the daemon can unmount.
trap 'exec 4<>"$fifo" 4>&-; rm -f "$fifo"' EXIT
trap 'exit 1' TERM INT
taskset -c 0 getfattr -n user.sc_block "$MNT/a" >/dev/null 2>&1 &
held=$!
# Blocks until the daemon's hook opens the FIFO: the getxattr is held.
exec 3>"$fifo"
taskset -c 0 sh -c 'echo b >"$MNT/b" && stat "$MNT/b" >/dev/null && grep -qx b "$MNT/b"' ||
	fail "a create, stat and read on CPU 0 failed while a getxattr was held"
kill -0 "$held" 2>/dev/null || fail "the held getxattr ended before its release"
exec 3>&-
# getfattr fails (the attribute does not exist): only its end counts.
wait "$held"
echo "uring_block_test: a create, stat and read on CPU 0 passed a held getxattr"

# A clean stop with a request in flight: SIGTERM while a getxattr is
# held; the daemon must answer it once released, then exit 0 ($SC_REMOUNT
# checks the exit status of the daemon it replaces, and mounts again).
getfattr -n user.sc_block "$MNT/a" >/dev/null 2>&1 &
held=$!
exec 3>"$fifo"
kill -TERM "$(cat "$SC_HARNESS_STATE/daemon.pid")" || fail "cannot signal the daemon"
exec 3>&-
wait "$held"
"$SC_REMOUNT" || fail "the daemon stopped with a request in flight did not exit cleanly"
rm -f "$MNT/a" "$MNT/b" || fail "cleanup failed"
echo "uring_block_test: SIGTERM with a getxattr in flight: answered, clean exit"
