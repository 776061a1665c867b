#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# stackcrypt fsck on files written through a real mount: clean volume, then
# each kind of damage (header truncated, missing, tampered, from another
# volume, torn unit, stray plain file), read-only without --repair,
# quarantine with --repair, progress line on a terminal; and recovery of a
# lost config with the master key.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }

new_volume "$T/v" || finish
MK=$(cat "$T/mk")
mkdir "$T/m"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
mkdir -p "$T/m/a/b"
for n in 0 1 5 15 16 17 4095 4096 4097 4111 8192 100000; do
	head -c $n /dev/urandom >"$T/m/a/f$n"
done
head -c 3000000 /dev/urandom >"$T/m/a/b/big"
for i in $(seq 20); do echo "file $i" >"$T/m/a/b/small$i"; done
ln -s f17 "$T/m/a/link"
sc_umount "$T/m"

expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "fsck counted every regular file" grep -q ": 33 files, 2 directories" "$T/out"
total=$(find "$T/v" -type f ! -name .stackcrypt.conf -printf '%s\n' | awk '{s += $1} END {print s}')
# aes-xts is length-preserving: the plaintext bytes are the stored bytes
check "fsck counted every plaintext byte ($total)" \
	grep -q "directories checked: $total bytes ([0-9.]* MiB) of plaintext in 33 whole files, 0 files damaged (0 stored bytes); 0 problems" "$T/out"
printf 'wrong horse\n' >"$T/wrong"
expect $E_BADPASS "wrong password" "$SC_BIN" fsck --passfile="$T/wrong" "$T/v"

# a file from another volume (same cipher and block size, other master key)
new_volume "$T/other" || finish
sc_mount_fg "$T/other" "$T/m" --passfile="$T/pw" || finish
echo "foreign" >"$T/m/foreign"
sc_umount "$T/m"

# the files to damage, and their backing paths (names may be encrypted):
# the foreign, stray and header-less files replace files made here
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
echo "mine" >"$T/m/a/foreign"
echo "mine" >"$T/m/a/stray.txt"
: >"$T/m/a/empty-noheader"
backing_map "$T/m" "$T/v" a/f4096 a/f5 a/f100000 a/foreign a/b/big a/stray.txt a/empty-noheader
sc_umount "$T/m"

# the damage
setfattr -n user.stackcrypt -v 0x01 "${BK[a/f4096]}"			# truncated header
setfattr -x user.stackcrypt "${BK[a/f5]}"				# no header
hex=$(getfattr -e hex -n user.stackcrypt "${BK[a/f100000]}" 2>/dev/null | sed -n 's/^user.stackcrypt=//p')
c=${hex:22:1}; [ "$c" = 0 ] && c=1 || c=0				# a nonce digit (byte 10)
flipped="${hex:0:22}$c${hex:23}"
setfattr -n user.stackcrypt -v "$flipped" "${BK[a/f100000]}"		# tampered header
cp --preserve=xattr "$(find "$T/other" -type f ! -name '.stackcrypt.*')" "${BK[a/foreign]}"	# another volume's file
dd if=/dev/zero of="${BK[a/b/big]}" bs=512 seek=3 count=1 conv=notrunc status=none	# torn unit
rm "${BK[a/stray.txt]}"
echo "plain text" >"${BK[a/stray.txt]}"					# not written through stackcrypt
# a kill between create and header write; the mount adopts it
rm "${BK[a/empty-noheader]}"
: >"${BK[a/empty-noheader]}"

snapshot() { (cd "$T/v" && find . -printf '%p %s %m\n' | sort && find . -type f -exec md5sum {} + | sort &&
	getfattr -R -d -m - -e hex . 2>/dev/null | sort) ; }
snapshot >"$T/before"
expect $E_FAIL "6 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
cp "$T/out" "$T/report"
dbytes=$(grep -o "^$T/v/[^:]*" "$T/report" | sort -u | xargs stat -c %s | awk '{s += $1} END {print s}')
check "the summary counts the 6 damaged files ($dbytes stored bytes), none dropped" \
	grep -qE "^$T/v: [0-9]+ files, [0-9]+ directories checked: [0-9]+ bytes \([0-9.]+ MiB\) of plaintext in [0-9]+ whole files, 6 files damaged \($dbytes stored bytes\); 6 problems" "$T/report"
check "truncated header reported"  grep -qF "${BK[a/f4096]}: header is 1 bytes, want 72 for its version 1" "$T/report"
check "missing header reported"    grep -qF "${BK[a/f5]}: no header" "$T/report"
check "tampered header reported"   grep -qF "${BK[a/f100000]}: header MAC mismatch" "$T/report"
check "foreign file reported"      grep -qF "${BK[a/foreign]}: header MAC mismatch" "$T/report"
check "torn unit reported"         grep -qF "${BK[a/b/big]}: data unit at offset 0 is partly zeros" "$T/report"
check "stray plain file reported"  grep -qF "${BK[a/stray.txt]}: no header" "$T/report"
check "a good file is not reported" bash -c "! grep -q 'f4097\|small' '$T/report'"
check "an empty header-less file is not reported" bash -c "! grep -q 'empty-noheader' '$T/report'"
snapshot >"$T/after"
check "fsck without --repair changed nothing" cmp -s "$T/before" "$T/after"

# --repair renames the bad files, deletes nothing
nfiles=$(find "$T/v" -type f | wc -l)
expect $E_FAIL "6 files quarantined" "$SC_BIN" fsck --repair --passfile="$T/pw" "$T/v"
check "quarantine renamed f4096" [ -f "${BK[a/f4096]}.stackcrypt-quarantine-1" ]
check "quarantine renamed big"   [ -f "${BK[a/b/big]}.stackcrypt-quarantine-1" ]
check "original names freed" [ ! -e "${BK[a/f4096]}" ] && [ ! -e "${BK[a/stray.txt]}" ]
check "--repair deleted nothing" [ "$(find "$T/v" -type f | wc -l)" = "$nfiles" ]
check "quarantined stray file intact" grep -qx "plain text" "${BK[a/stray.txt]}.stackcrypt-quarantine-1"
expect $E_OK "6 files quarantined earlier (skipped)" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
# the good files still read back through the mount
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
check "good file readable after repair" grep -qx "file 7" "$T/m/a/b/small7"
check "good file size after repair" [ "$(stat -c %s "$T/m/a/f4097")" = 4097 ]
sc_umount "$T/m"

# a progress line on a terminal, none on a pipe or with -q
if command -v python3 >/dev/null; then
	expect $E_OK "checked" python3 "$CLI_DIR/pty_run.py" -- "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
	expect $E_OK "0 problems" python3 "$CLI_DIR/pty_run.py" -- "$SC_BIN" fsck -q --passfile="$T/pw" "$T/v"
	check "no progress line with -q" bash -c "! grep -q 'checked [0-9]* files' '$T/out'"
fi
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "no progress line on a pipe" bash -c "! grep -q \$'\r' '$T/out'"

# lost config: the master key rebuilds it (cipher and block size from the headers)
mv "$T/v/.stackcrypt.conf" "$T/lost.conf"
expect $E_CONFIG "no stackcrypt volume" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
printf '%s\n' "$MK" >"$T/mkfile"
expect $E_OK "0 problems" "$SC_BIN" fsck --masterkey="$T/mkfile" "$T/v"
sc_mount_fg "$T/v" "$T/m" --masterkey="$T/mkfile" || finish
check "mount with the master key and no config reads data" grep -qx "file 3" "$T/m/a/b/small3"
check "the config stays hidden and absent" [ ! -e "$T/v/.stackcrypt.conf" ]
sc_umount "$T/m"
c=${MK:0:1}; [ "$c" = 0 ] && c=1 || c=0
printf '%s\n' "$c${MK:1}" >"$T/badmk"
expect $E_BADPASS "does not match the files" "$SC_BIN" passwd --masterkey="$T/badmk" --new-passfile="$T/pw" "$T/v"
check "no config written for a wrong master key" [ ! -e "$T/v/.stackcrypt.conf" ]
printf 'rebuilt\n' >"$T/pw3"
expect $E_OK "config of $T/v recreated from the master key" "$SC_BIN" passwd --masterkey="$T/mkfile" --new-passfile="$T/pw3" "$T/v"
expect $E_OK "cipher:      aes-xts" "$SC_BIN" info "$T/v"
expect $E_OK "new files get version 2 headers" "$SC_BIN" info "$T/v"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw3" "$T/v"

# a rebuilt config keeps a version 1 volume on version 1 headers (the
# headers say which), so the builds that made it still open it
new_volume "$T/vh1" --header-version=1 || finish
mkdir -p "$T/m"
sc_mount_fg "$T/vh1" "$T/m" --passfile="$T/pw" || finish
echo "old format" >"$T/m/f"
sc_umount "$T/m"
printf '%s\n' "$(cat "$T/mk")" >"$T/mkh1"
rm "$T/vh1/.stackcrypt.conf"
expect $E_OK "config of $T/vh1 recreated from the master key" "$SC_BIN" passwd --masterkey="$T/mkh1" --new-passfile="$T/pw" "$T/vh1"
expect $E_OK "new files get version 1 headers" "$SC_BIN" info "$T/vh1"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/vh1"

expect $E_USAGE "missing BACKING" "$SC_BIN" fsck --passfile="$T/pw"
# fsck words usage errors as the other commands do (fs/cli/cli.c): an
# option's value, which may be a key, is never echoed back
key=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
expect $E_USAGE "unknown option '--master-key'" "$SC_BIN" fsck --master-key="$key" "$T/vh1"
check "fsck does not echo an unknown option's value" bash -c "! grep -q '$key' '$T/out'"
expect $E_USAGE "looks like a key (not shown)" "$SC_BIN" fsck --passfile="$T/pw" "$key"
check "fsck does not echo a key given as BACKING" bash -c "! grep -q '$key' '$T/out'"
expect $E_USAGE "unexpected argument '$T/vh1'" "$SC_BIN" fsck --passfile="$T/pw" "$T/vh1" "$T/vh1"
expect $E_OK "" "$SC_BIN" fsck --help
for o in --repair --passfile --extpass --keyfile --masterkey --quiet --help; do
	check "fsck --help mentions $o" grep -q -- "$o" "$T/out"
done

finish
