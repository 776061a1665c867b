#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# no_io.sh - the crypto library does no I/O: no printing, no files, no
# logging (STYLE.md rule 1; its one notice, the refused mlock, goes to the
# function the program sets with sc_crypto_set_notice).
#
#   no_io.sh LIB.a           exit 0 if LIB.a calls no I/O function
#   no_io.sh --expect LIB.a  the check's self-test: exit 0 if it finds one
#
# Reads the undefined symbols of the static library (nm -u), so a call made
# through a macro or a fortified variant (__fprintf_chk) counts too.
set -u
expect=0
if [ "${1:-}" = --expect ]; then expect=1; shift; fi
[ $# -eq 1 ] || { echo "usage: $0 [--expect] LIB.a" >&2; exit 2; }
command -v nm >/dev/null || { echo "no_io.sh: nm not found (binutils)" >&2; exit 1; }
syms=$(nm -u "$1") || { echo "no_io.sh: nm -u $1 failed" >&2; exit 1; }
io='open|openat|creat|close|read|write|pread|pwrite|readv|writev|lseek|fsync|fdatasync'
io+='|fopen|fdopen|freopen|fclose|fread|fwrite|fgets|fputs|fputc|putc|puts|putchar|fflush'
io+='|printf|fprintf|vprintf|vfprintf|dprintf|vdprintf|perror|syslog|vsyslog|openlog|err|warn'
io+='|errx|warnx|stat|fstat|lstat|fstatat|statx|access|faccessat|unlink|unlinkat|mkdir|rename'
io+='|ioctl|socket|connect|sendmsg|recvmsg|getxattr|setxattr|fgetxattr|fsetxattr|sc_log'
found=$(printf '%s\n' "$syms" | awk 'NF == 2 && $1 == "U" { print $2 }' |
	grep -E "^(__)?($io)(64)?(_chk)?$" | sort -u | tr '\n' ' ')
if [ "$expect" = 1 ]; then
	[ -n "$found" ] && { echo "no_io.sh: self-test: found $found in $1, as it must"; exit 0; }
	echo "no_io.sh: self-test: no I/O call found in $1, which does I/O: the check is broken"
	exit 1
fi
[ -z "$found" ] && { echo "no_io.sh: $1 calls no I/O function"; exit 0; }
echo "no_io.sh: $1 calls $found: the crypto library must do no I/O (hand it to the caller)"
exit 1
