#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck's messages about a volume as a whole: counts in the singular for one
# file (issue 14), the plaintext warning of a null volume (issue 13 item
# 6), and the hint that names a copy which dropped extended attributes
# (issue 14 item 1): a cp -r copy gets the hint, a cp -a copy is clean.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }
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

# a backing tree copied without its extended attributes (cp -r): every
# file lost its header; fsck names the likely cause in one line and fails,
# and --repair moves nothing aside.  A cp -a copy is clean.
hint="lack a file header: was this tree copied without extended attributes? use cp -a, rsync -aX, or tar --xattrs --xattrs-include='*'"
new_volume "$T/src" || finish
sc_mount_fg "$T/src" "$T/m" --passfile="$T/pw" || finish
mkdir -p "$T/m/d/e"
for n in 1 20 5000 70000; do head -c $n /dev/urandom >"$T/m/d/f$n"; done
echo "deep" >"$T/m/d/e/g"
: >"$T/m/empty"
sc_umount "$T/m"
cp -r "$T/src" "$T/copy-r"
cp -a "$T/src" "$T/copy-a"
expect $E_FAIL "5 of 5 files with data $hint" "$SC_BIN" fsck --passfile="$T/pw" "$T/copy-r"
check "the hint is printed once" [ "$(grep -c 'copied without extended attributes' "$T/out")" = 1 ]
check "each file is still named" [ "$(grep -c ': no header' "$T/out")" = 5 ]
check "no advice to quarantine a copy" bash -c "! grep -q 'move the bad files aside' '$T/out'"
expect $E_FAIL "0 files quarantined" "$SC_BIN" fsck --repair --passfile="$T/pw" "$T/copy-r"
check "the hint again with --repair" grep -qF "$hint" "$T/out"
check "--repair left the copy's files in place" \
	cmp -s <(cd "$T/src" && find . ! -name .stackcrypt.conf | sort) <(cd "$T/copy-r" && find . ! -name .stackcrypt.conf | sort)
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/copy-a"
check "no hint for a cp -a copy" bash -c "! grep -q 'copied without' '$T/out'"
# one stray file among good ones is not a lost-xattrs copy
echo "stray" >"$T/copy-a/stray"
expect $E_FAIL "stray: no header" "$SC_BIN" fsck --passfile="$T/pw" "$T/copy-a"
check "no hint for one stray file of six" bash -c "! grep -q 'copied without' '$T/out'"

finish
