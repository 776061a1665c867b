#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The "Quick start" block of docs/usage.md, pasted as a new user would:
# run by bash on a pseudo-terminal with HOME in our temporary directory,
# typing the passwords at the prompts (init x2, mount, passwd old/new/new,
# fsck).  The block must run to the end with the results it promises.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { fail "python3 is needed to drive a pty (scripts/deps.sh installs it)"; finish; }
[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }
DOC="$CLI_DIR/../../docs/usage.md"
awk '/^## Quick start/ {q=1} q && /^```sh$/ {b=1; next} b && /^```$/ {exit} b {print}' "$DOC" >"$T/quick.sh"
check "found the quick start block" grep -q "stackcrypt init" "$T/quick.sh"
# README.md's walkthrough is the same block: running one runs both
awk '/^## Walkthrough/ {q=1} q && /^```sh$/ {b=1; next} b && /^```$/ {exit} b {print}' \
	"$CLI_DIR/../../README.md" >"$T/readme.sh"
check "README walkthrough is the quick start block" cmp -s "$T/quick.sh" "$T/readme.sh"

# `stackcrypt` on PATH, as after meson install
mkdir "$T/bin"
ln -s "$SC_BIN" "$T/bin/stackcrypt"
expect $E_OK "0 problems" env HOME="$T" PATH="$T/bin:$PATH" \
	python3 "$CLI_DIR/pty_run.py" 'first pw' 'first pw' 'first pw' 'first pw' 'second pw' 'second pw' 'second pw' -- \
	bash -e "$T/quick.sh"
cp "$T/out" "$T/transcript"
check "quick start: plaintext reads back" grep -q "plaintext reads back" "$T/transcript"
check "quick start: backing is ciphertext" grep -q "backing files are ciphertext" "$T/transcript"
check "quick start: backing names are encrypted" grep -q "backing names are encrypted" "$T/transcript"
check "quick start: master key printed" grep -qE '^[0-9a-f]{8}(-[0-9a-f]{8}){7}' "$T/transcript"
check "quick start: password changed" grep -q "password changed" "$T/transcript"
check "quick start: passwords never echoed" bash -c "! grep -q 'first pw\|second pw' '$T/transcript'"
check "quick start: unmounted at the end" bash -c "! grep -q ' $T/plain ' /proc/mounts"
grep "checked: " "$T/transcript"

finish
