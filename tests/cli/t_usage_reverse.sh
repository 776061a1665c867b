#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The reverse-mode backup walkthrough of docs/usage.md ("Reverse mode"),
# pasted as a user would: run by bash on a pseudo-terminal with HOME in our
# temporary directory, typing the password at each prompt (init x2, mount,
# mount, fsck, mount).  The block must run to the end with the results it
# promises: the second rsync sends one file, fsck finds nothing wrong, the
# restore is the tree, the "server" holds no plaintext name.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { fail "python3 is needed to drive a pty (scripts/deps.sh installs it)"; finish; }
command -v rsync >/dev/null || { fail "rsync is needed (scripts/deps.sh test installs it)"; finish; }
[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }
DOC="$CLI_DIR/../../docs/usage.md"
awk '/^## Reverse mode/ {q=1} q && /^```sh$/ {b=1; next} b && /^```$/ {exit} b {print}' "$DOC" >"$T/walk.sh"
check "found the walkthrough block" grep -q "stackcrypt init --reverse" "$T/walk.sh"

# `stackcrypt` on PATH, as after meson install
mkdir "$T/bin"
ln -s "$SC_BIN" "$T/bin/stackcrypt"
expect $E_OK "0 problems" env HOME="$T" PATH="$T/bin:$PATH" \
	python3 "$CLI_DIR/pty_run.py" 'rev pw' 'rev pw' 'rev pw' 'rev pw' 'rev pw' 'rev pw' -- \
	bash -e "$T/walk.sh"
cp "$T/out" "$T/transcript"
check "walkthrough: the restore is the tree" grep -q "the backup restores the files" "$T/transcript"
check "walkthrough: the second rsync sent one file, grown: $(grep '^>f' "$T/transcript")" \
	test "$(grep -c '^>f' "$T/transcript") $(grep -o '^>f[^ ]*' "$T/transcript")" = "1 >f.st......"
check "walkthrough: the password was never echoed" bash -c "! grep -q 'rev pw' '$T/transcript'"
check "walkthrough: nothing is left mounted" bash -c "! grep -q ' $T/' /proc/mounts"
check "walkthrough: the server holds the volume's config" test -f "$T/server/docs.enc/.stackcrypt.conf"
check "walkthrough: the server holds no plaintext name" \
	test -z "$(comm -12 <(find "$T/docs" -mindepth 1 -printf '%f\n' | sort -u) \
		<(find "$T/server/docs.enc" -mindepth 1 -printf '%f\n' | sort -u))"
check "walkthrough: the server holds no plaintext" \
	bash -c "! grep -rqs 'GNU GENERAL PUBLIC LICENSE' '$T/server'"
# the daemons' messages (no /dev/log here: a file under XDG_STATE_HOME)
check "walkthrough: the daemons logged no error: $(cat "$T"/state/stackcrypt/* 2>/dev/null)" \
	bash -c "! grep -rqiE 'error|warning' '$T/state' 2>/dev/null"

finish
