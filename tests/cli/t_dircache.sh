#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel's cache of directory listings (fs/fuse/handlers.c, op_opendir;
# docs/performance.md 19).  With the default timeouts a directory listed
# once is listed again from the kernel's cache: no READDIR reaches the
# stack (io-stats at the front end's boundary); a name made, removed or
# renamed through the mount drops the cache, so the next listing is right
# (checked against the names made, after each change); with
# -o attr_timeout=0 (or entry_timeout=0), which asks to see changes made
# behind the mount, every listing reaches the stack; in reverse mode a
# name made in the backing directory behind the mount is listed at once.
. "$(dirname "$0")/lib.sh"

mnt() { sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o stats=all "$@"; }
no_error() { check "$1: the daemon logged no error: $(cat "$T/daemon.log")" \
	bash -c "! grep -qi error '$T/daemon.log'"; }
# READDIR calls at the front end's lower boundary since the mount
readdirs() {
	"$SC_BIN" stats --json "$T/m" | python3 -c 'import json, sys
j = json.load(sys.stdin)
top = [l for l in j["layers"] if l["label"].startswith("fuse>")][0]
print(top["ops"].get("readdir", {"count": 0})["count"])'
}
listing() { ls -a "$1" | tr '\n' ' '; }

mkdir -p "$T/m" "$T/r" "$T/plain"
new_volume "$T/v" --cipher=aes-gcm --encrypt-names || finish

mnt || finish
mkdir "$T/m/d"
for i in 1 2 3; do echo $i >"$T/m/d/f$i"; done
check "the first listing" test "$(listing "$T/m/d")" = ". .. f1 f2 f3 "
n=$(readdirs)
check "a second listing, from the kernel's cache ($(readdirs) readdirs, $n before)" \
	test "$(listing "$T/m/d")" = ". .. f1 f2 f3 " -a "$(readdirs)" = "$n"
echo 4 >"$T/m/d/f4"
check "after a create: $(listing "$T/m/d")" test "$(listing "$T/m/d")" = ". .. f1 f2 f3 f4 "
rm "$T/m/d/f1"
check "after an unlink: $(listing "$T/m/d")" test "$(listing "$T/m/d")" = ". .. f2 f3 f4 "
mv "$T/m/d/f2" "$T/m/d/g2"
check "after a rename: $(listing "$T/m/d")" test "$(listing "$T/m/d")" = ". .. f3 f4 g2 "
mkdir "$T/m/d/sub"
check "after a mkdir: $(listing "$T/m/d")" test "$(listing "$T/m/d")" = ". .. f3 f4 g2 sub "
mv "$T/m/d/g2" "$T/m/d/sub/"
check "after a rename out of it: $(listing "$T/m/d")" test "$(listing "$T/m/d")" = ". .. f3 f4 sub "
check "and into the other: $(listing "$T/m/d/sub")" test "$(listing "$T/m/d/sub")" = ". .. g2 "
ln "$T/m/d/f3" "$T/m/d/h3"
check "after a link: $(listing "$T/m/d")" test "$(listing "$T/m/d")" = ". .. f3 f4 h3 sub "
sc_umount "$T/m"
no_error "the cached listings"

# --- a zero timeout: every listing reaches the stack and sees the backing ---
for opt in attr_timeout=0 entry_timeout=0; do
	mnt -o "$opt" || finish
	listing "$T/m/d" >/dev/null
	n=$(readdirs)
	listing "$T/m/d" >/dev/null
	check "-o $opt: a second listing reads the stack ($(readdirs) readdirs, $n before)" \
		test "$(readdirs)" -gt "$n"
	sc_umount "$T/m"
done
no_error "the mounts with a zero timeout"

# --- reverse mode: the plaintext changes behind the mount -------------------
echo a >"$T/plain/a"
"$SC_BIN" init --reverse --scrypt-n=1024 --passfile="$T/pw" "$T/plain" >"$T/rinit.out" 2>&1 ||
	{ fail "init --reverse: $(cat "$T/rinit.out")"; finish; }
sc_mount_fg "$T/plain" "$T/r" --reverse --passfile="$T/pw" || finish
first=$(ls "$T/r" | wc -l)
echo b >"$T/plain/b"
check "reverse mode lists a file made behind the mount at once ($first, then $(ls "$T/r" | wc -l) names)" \
	test "$(ls "$T/r" | wc -l)" -gt "$first"
sc_umount "$T/r"
no_error "the reverse mount"
finish
