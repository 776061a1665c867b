#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The bash completion (dist/bash-completion/stackcrypt) against the binary:
# what it offers after `stackcrypt `, `stackcrypt CMD -`, `mount -o ` and
# `init --cipher=` is exactly what `stackcrypt --help`, `CMD --help` and
# init's cipher error list (help_lists.py), both ways; and the binary takes
# every option it offers (none is "unknown").  So an option added to the
# binary and its help, or removed, fails here until the completion follows.
. "$(dirname "$0")/lib.sh"

COMPLETION="$CLI_DIR/../../dist/bash-completion/stackcrypt"
check "completion file parses" bash -n "$COMPLETION"

# comp WORD...: what the completion offers for the command line WORD...
# (the last word is the one being completed, as bash splits it: '=' is a
# word of its own), sorted, one a line.
comp() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _stackcrypt
		printf "%s\n" "${COMPREPLY[@]}"' comp "$COMPLETION" "$@" | sort -u | sed '/^$/d'
}
# same WHAT WANT-FILE GOT-FILE: a check that prints the difference
same() {
	CHECKS=$((CHECKS + 1))
	if ! diff -u "$2" "$3" >"$T/diff"; then
		fail "$1: the binary (-) and the completion (+) differ:"
		sed 's/^/    /' "$T/diff" >&2
	fi
}

"$SC_BIN" --help | python3 "$CLI_DIR/help_lists.py" commands >"$T/want"
{ cat "$T/want"; printf '%s\n' --help --version; } | sort >"$T/want_top"
comp stackcrypt "" >"$T/got"
same "commands" "$T/want_top" "$T/got"
check "the binary has commands" test "$(wc -l <"$T/want")" -ge 7
# every documented command has its option list in the completion
while read -r cmd; do
	"$SC_BIN" "$cmd" --help | python3 "$CLI_DIR/help_lists.py" options >"$T/want_$cmd"
	# mount's -o itself is in the head of its -o section, not an option line
	if [ "$cmd" = mount ]; then
		check "mount --help names -o" grep -q '^Mount options (-o OPT' <("$SC_BIN" mount --help)
		{ cat "$T/want_mount"; echo -o; } | sort >"$T/w" && mv "$T/w" "$T/want_mount"
	fi
	comp stackcrypt "$cmd" - >"$T/got_$cmd"
	same "options of $cmd" "$T/want_$cmd" "$T/got_$cmd"
	check "$cmd has options in its help" grep -qx -- --help "$T/want_$cmd"
done <"$T/want"

"$SC_BIN" mount --help | python3 "$CLI_DIR/help_lists.py" mount_o >"$T/want_o"
comp stackcrypt mount -o "" >"$T/got_o"
same "mount -o options" "$T/want_o" "$T/got_o"
check "mount -o lists io_uring" grep -qx io_uring "$T/want_o"
# after a comma: the next option, the ones before kept
comp stackcrypt mount -o ro,wri >"$T/got"
check "-o ro,wri completes to ro,writeback" grep -qx 'ro,writeback' "$T/got"
comp stackcrypt mount -o loop = l >"$T/got"
printf '%s\n' libfuse lifo >"$T/want"
same "-o loop= values" "$T/want" "$T/got"

# the cipher names: those init's error lists as valid
expect $E_USAGE "valid values are" "$SC_BIN" init --cipher=no-such-cipher "$T/nowhere"
sed -n 's/.*valid values are //p' "$T/out" | tr -d ' ' | tr , '\n' | sort >"$T/want_c"
check "init names four ciphers or more" test "$(wc -l <"$T/want_c")" -ge 4
comp stackcrypt init --cipher = "" >"$T/got_c"
same "cipher names" "$T/want_c" "$T/got_c"
comp stackcrypt init --cipher = aes-g >"$T/got"
check "--cipher=aes-g completes to aes-gcm" grep -qx aes-gcm "$T/got"

# key's subcommands, then its options
printf '%s\n' add list remove >"$T/want"
comp stackcrypt key "" >"$T/got"
same "key subcommands" "$T/want" "$T/got"
comp stackcrypt key add --kdf = "" >"$T/got"
printf '%s\n' argon2id scrypt >"$T/want"
same "--kdf values" "$T/want" "$T/got"

# the binary takes every option offered: none is "unknown" (a missing
# BACKING or a bad value may stop it; nothing is created or mounted)
for cmd in $(cat "$T/want_top"); do
	case $cmd in --*) continue ;; esac
	# (key's options come after its subcommand)
	sub=()
	[ "$cmd" = key ] && sub=(add)
	for opt in $(comp stackcrypt "$cmd" -); do
		[ "$opt" = -o ] && continue
		case $opt in *=) opt=${opt}1 ;; esac
		run timeout 20 setsid -w "$SC_BIN" "$cmd" "${sub[@]}" "$opt" "$T/nowhere" "$T/nowhere2"
		CHECKS=$((CHECKS + 1))
		grep -qi 'unknown option\|unknown mount option\|unrecognized option' "$T/out" &&
			fail "$cmd takes no $opt: $(cat "$T/out")"
	done
done
for opt in $(comp stackcrypt mount -o ""); do
	case $opt in *=) opt=${opt}1 ;; esac
	run timeout 20 setsid -w "$SC_BIN" mount -o "$opt" "$T/nowhere" "$T/nowhere2"
	CHECKS=$((CHECKS + 1))
	grep -qi 'unknown option\|unknown mount option\|unrecognized option' "$T/out" && fail "mount takes no -o $opt: $(cat "$T/out")"
done
check "nothing was created" test ! -e "$T/nowhere"

finish
