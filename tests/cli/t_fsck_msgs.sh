#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck's messages about a volume as a whole: counts in the singular for one
# file (issue 14), the plaintext warning of a null volume (issue 13 item
# 6), and the hint that names a copy which dropped extended attributes
# (issue 14 item 1).
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { echo "SKIP: no /dev/fuse"; exit 77; }
mkdir -p "$T/m"

# one file: the progress line (on a terminal) and the summary say "1 file"
new_volume "$T/one" || finish
sc_mount_fg "$T/one" "$T/m" --passfile="$T/pw" || finish
head -c 5000 /dev/urandom >"$T/m/only"
sc_umount "$T/m"
expect $E_OK ": 1 file, 0 directories" "$SC_BIN" fsck --passfile="$T/pw" "$T/one"
if command -v python3 >/dev/null; then
	expect $E_OK "checked 1 file," python3 "$CLI_DIR/pty_run.py" -- \
		"$SC_BIN" fsck --passfile="$T/pw" "$T/one"
	check "no '1 files' in fsck's terminal output" bash -c "! grep -q '\\b1 files' '$T/out'"
fi

# a null volume: fsck says once that nothing is encrypted; aes-xts does not
warn="warning: $T/vn is not encrypted (cipher null): files are stored in plaintext"
new_volume "$T/vn" --cipher=null || finish
sc_mount_fg "$T/vn" "$T/m" --passfile="$T/pw" || finish
echo "in clear" >"$T/m/f"
sc_umount "$T/m"
expect $E_OK "$warn" "$SC_BIN" fsck --passfile="$T/pw" "$T/vn"
check "the warning is one line, printed once" [ "$(grep -c 'not encrypted' "$T/out")" = 1 ]
check "the summary still says 0 problems" grep -q "0 problems" "$T/out"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/one"
check "no plaintext warning on aes-xts" bash -c "! grep -q 'not encrypted' '$T/out'"

finish
