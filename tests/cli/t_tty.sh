#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Passwords typed on a terminal: no echo, confirmation, empty, mismatch, no tty.
# The terminal is a pseudo-terminal driven by pty_run.py.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { fail "python3 is needed to drive a pty (scripts/deps.sh installs it)"; finish; }
PTY="python3 $CLI_DIR/pty_run.py"

# init asks twice; the password never appears on the terminal (echo off)
mkdir "$T/v"
expect $E_OK "Repeat password:" $PTY 'tty secret 1' 'tty secret 1' -- \
	"$SC_BIN" init --scrypt-n=1024 "$T/v"
check "init prompted for a new password" grep -q "New password:" "$T/out"
check "password not echoed" bash -c "! grep -q 'tty secret' '$T/out'"
check "master key shown" grep -qE '^[0-9a-f]{8}(-[0-9a-f]{8}){7}' "$T/out"

# the typed password opens the volume, another one does not
expect $E_OK "0 problems" $PTY 'tty secret 1' -- "$SC_BIN" fsck "$T/v"
expect $E_BADPASS "wrong password" $PTY 'tty secret 2' -- "$SC_BIN" fsck "$T/v"

# mismatched confirmation: refused, nothing created
mkdir "$T/w"
expect $E_SECRET "passwords do not match" $PTY 'one' 'two' -- "$SC_BIN" init --scrypt-n=1024 "$T/w"
check "no config after a mismatch" [ -z "$(ls -A "$T/w")" ]

# empty password on the terminal: refused at once
expect $E_SECRET "empty password refused" $PTY '' -- "$SC_BIN" init --scrypt-n=1024 "$T/w"
check "no config after an empty password" [ -z "$(ls -A "$T/w")" ]
expect $E_SECRET "empty password refused" $PTY '' -- "$SC_BIN" fsck "$T/v"

# passwd on the terminal: old, new, repeat
expect $E_OK "password changed" $PTY 'tty secret 1' 'tty secret 3' 'tty secret 3' -- \
	"$SC_BIN" passwd "$T/v"
check "passwd asked for the old password" grep -q "Old password:" "$T/out"
expect $E_OK "0 problems" $PTY 'tty secret 3' -- "$SC_BIN" fsck "$T/v"
expect $E_BADPASS "wrong password" $PTY 'tty secret 1' -- "$SC_BIN" fsck "$T/v"
expect $E_SECRET "passwords do not match" $PTY 'tty secret 3' 'a' 'b' -- "$SC_BIN" passwd "$T/v"
expect $E_OK "0 problems" $PTY 'tty secret 3' -- "$SC_BIN" fsck "$T/v"

# Ctrl-C at the prompt: a clean "interrupted", and echo is back on afterwards
expect 0 "interrupted" $PTY '^C' -- bash -c "'$SC_BIN' fsck '$T/v'; echo \"status \$?\"; stty -a"
check "interrupted prompt exits 14" grep -q "status 14" "$T/out"
check "terminal echo restored after the interrupt" grep -qE '(^| )echo( |$)' "$T/out"

# typeahead is kept (issue 14 item 6): a pasted block's lines after init are
# read by what comes after it, not flushed by the password prompt
mkdir "$T/ta"
expect 0 "got:after the prompt" $PTY --typeahead 'pasted pw' 'pasted pw' 'after the prompt' -- \
	bash -c "'$SC_BIN' init --scrypt-n=1024 '$T/ta' && read -r line && echo \"got:\$line\""
expect $E_OK "0 problems" $PTY 'pasted pw' -- "$SC_BIN" fsck "$T/ta"

# Ctrl-D at a prompt: a newline, so the message starts on a line of its own
expect $E_SECRET "empty password refused" $PTY '^D' -- "$SC_BIN" fsck "$T/v"
check "newline after Ctrl-D" bash -c "! grep -q 'Password: stackcrypt' '$T/out'"

# no terminal at all (new session, stdin not a tty): a clear message, not a hang
expect $E_SECRET "no terminal to ask for the password" setsid -w "$SC_BIN" fsck "$T/v"

finish
