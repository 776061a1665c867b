#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# stackcrypt info (every field, no password asked) and stackcrypt speed
# (four ciphers, both directions, numbers that make sense).
. "$(dirname "$0")/lib.sh"

new_volume "$T/v" --cipher=aes-cbc --block-size=8192 || finish
expect $E_OK "" "$SC_BIN" info "$T/v"
# each number says what it is (the config's format is not the header version)
for line in "format:      3 (of this config file)" "cipher:      aes-cbc" "block size:  8192" \
	    "key:         password, scrypt N=1024 r=8 p=1" \
	    "features:    0x1 (new files get version 2 headers: the per-file header format)" \
	    "names:       in the clear (names and symlink targets are stored as they are)"; do
	check "info shows '$line'" grep -qxF -- "$line" "$T/out"
done
check "info shows the uuid" grep -qxE 'uuid: +[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}' "$T/out"
year=$(date -u +%Y)
check "info shows the creation time in UTC" grep -qE "^created: +$year-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC$" "$T/out"
check "info uuid matches the config" grep -q "$(grep '^uuid' "$T/v/.stackcrypt.conf" | sed 's/uuid = //; s/^\(.\{8\}\).*/\1/')" "$T/out"
# info never asks for a password: it works with no terminal and no secret option
expect $E_OK "cipher" setsid -w "$SC_BIN" info "$T/v"
expect $E_USAGE "missing BACKING" "$SC_BIN" info
expect $E_USAGE "unknown option" "$SC_BIN" info --passfile=x "$T/v"
expect $E_OK "--help" "$SC_BIN" info --help

# speed: a header and one line per cipher with two positive numbers
expect $E_OK "encrypt MB/s" "$SC_BIN" speed --seconds=0.1
for c in null aes-xts aes-cbc aes-gcm; do
	check "speed line for $c" grep -qE "^$c +4096 +[0-9]+\.[0-9] +[0-9]+\.[0-9]$" "$T/out"
	# every cipher must do better than 1 MB/s; AES-NI machines do >1000
	check "speed of $c above 1 MB/s" awk -v c="$c" '$1 == c && $3 > 1 && $4 > 1 {ok=1} END {exit !ok}' "$T/out"
done
# (no "null faster than AES" check: under ASan the null loop is instrumented
# and OpenSSL's assembly is not, so it need not hold)
cp "$T/out" "$T/speed.txt"
expect $E_OK "512" "$SC_BIN" speed --seconds=0.05 --block-size=512
check "block size 512 used" grep -qE '^aes-xts +512 ' "$T/out"
expect $E_USAGE "valid values are 512" "$SC_BIN" speed --block-size=100
expect $E_USAGE "invalid --seconds" "$SC_BIN" speed --seconds=abc
expect $E_OK "--block-size" "$SC_BIN" speed --help
check "speed --help mentions --seconds" grep -q -- --seconds "$T/out"
sed 's/^/  /' "$T/speed.txt"

finish
