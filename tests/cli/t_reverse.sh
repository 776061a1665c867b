#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t_reverse.sh - reverse mode (issue 33, docs/format.md section 12): init
# --reverse writes a config into a plaintext tree; mount --reverse shows
# the tree as an aes-gcm volume with encrypted names, read-only; a copy of
# that view by cp -a and another by rsync -aH, each mounted forward with the
# same password, read back the tree (long and unicode names, symlinks,
# empty and sparse files, files of every size around the unit boundaries,
# hard-linked files as one inode, hard-linked symlinks as separate ones,
# modes and times), and fsck finds nothing wrong with the copy.  Two mounts
# show the same bytes (hashes, and an rsync --checksum that sends nothing);
# a file changed changes exactly its own ciphertext (hashes, and rsync
# --itemize-changes sends that one file); every write is refused with
# EROFS; a byte of the copy flipped reads as EIO through the forward mount
# and fsck names the file.  A config kept outside the tree (--config) works
# the same way.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }
command -v rsync >/dev/null || { fail "rsync is needed (scripts/deps.sh test installs it)"; finish; }
P="$T/plain" V="$T/view" C="$T/copy" F="$T/fwd" R="$T/rsynced"
mkdir -p "$P" "$V" "$F"
(umask 077; printf 'correct horse\n' >"$T/pw")

# log_clean WHAT: the daemon logged nothing but its mounted line.
log_clean() {
	check "$1: the daemon logged only its mounted line: $(cat "$T/daemon.log")" \
		test "$(grep -vc '^stackcrypt: mounted ' "$T/daemon.log")" = 0
}

# rmount / fmount: the view of $P on $V, the copy $C forward on $F.
rmount() { sc_mount_fg "$P" "$V" --reverse --passfile="$T/pw" "$@"; }
fmount() { sc_mount_fg "$C" "$F" --passfile="$T/pw" "$@"; }

# view_sums: every file's SHA-256 and every symlink's target in the view, by path.
view_sums() {
	(cd "$V" && find . -type f -exec sha256sum {} + | sort -k2 &&
		find . -type l -printf '%p -> %l\n' | sort)
}

# tree_list DIR: path, type, mode, size, link target, and mtime but of
# directories (the forward mount's journal changes the copy's root) of
# everything in DIR but the reverse config.
tree_list() {
	(cd "$1" && find . ! -name .stackcrypt.reverse.conf -printf '%p %y %m %s %l ' \
		\( -type d -printf '\n' -o -printf '%T@\n' \) | sort)
}

# ---- the plaintext tree -----------------------------------------------------
long200=$(printf 'l%.0s' $(seq 200))
long255=$(printf 'm%.0s' $(seq 255))
mkdir -p "$P/sizes" "$P/d1/d2/d3" "$P/späť/ünïcode" "$P/$long200" "$P/links"
for n in 1 15 16 17 4095 4096 4097 8191 8192 8193 12293 1048576 1048577; do
	head -c "$n" /dev/urandom >"$P/sizes/f$n"
done
: >"$P/empty"
echo "deep" >"$P/d1/d2/d3/file"
echo "unicode" >"$P/späť/ünïcode/日本語.txt"
echo "in a long-named directory" >"$P/$long200/inner"
head -c 5000 /dev/urandom >"$P/$long255"
head -c 3000 /dev/urandom >"$P/d1/$long200"
truncate -s 3M "$P/sparse"
printf 'middle' | dd of="$P/sparse" bs=1 seek=1500000 conv=notrunc status=none
echo "linked" >"$P/hard1"
ln "$P/hard1" "$P/hard2"
ln "$P/hard1" "$P/d1/hard3"
ln -s ../sizes/f1 "$P/links/rel"
ln -s /etc/hostname "$P/links/abs"
ln -s does-not-exist "$P/links/dangling"
ln -s "$(printf 'x/%.0s' $(seq 500))" "$P/links/long1000"
ln -s "späť/ünïcode/日本語.txt" "$P/links/unicode"
ln -s "$long200" "$P/links/$long200"
ln -P "$P/links/rel" "$P/links/relhard"	# a hard-linked symlink
# targets around 3008 bytes, the longest kept in the link; above, a link side file
for n in 3008 3009 4095; do
	ln -s "$(head -c "$n" /dev/zero | tr '\0' 't')" "$P/links/t$n"
done
chmod 0750 "$P/d1"
chmod 0600 "$P/sizes/f17"
touch -d '2001-02-03 04:05:06' "$P/sizes/f4096"
# The symlinks' times in the past: rsync (3.5 here) leaves a symlink it
# makes with its own time when the source's falls in the same second, so
# the rsync copy's times matched the tree's only when a second had turned
# between the tree and the copy (the check failed 2 runs in 4).
find "$P/links" -type l -exec touch -h -d '2001-02-03 04:05:06.123456789' {} +

# ---- init --reverse and its refusals --------------------------------------------
expect $E_USAGE "--reverse makes an aes-gcm view" \
	"$SC_BIN" init --reverse --cipher=aes-xts --passfile="$T/pw" "$P"
expect $E_USAGE "--config is for --reverse" \
	"$SC_BIN" init --config="$T/x.conf" --passfile="$T/pw" "$P"
expect $E_OK "Created the reverse-mode config $P/.stackcrypt.reverse.conf" \
	"$SC_BIN" init --reverse --scrypt-n=1024 --passfile="$T/pw" "$P"
check "init left the tree as it was, but for the config" \
	test "$(find "$P" -newer "$T/pw" -name '.stackcrypt*' | wc -l)" = 1
expect $E_BACKING "already holds a stackcrypt config" \
	"$SC_BIN" init --reverse --scrypt-n=1024 --passfile="$T/pw" "$P"
expect $E_USAGE "--reverse and --stack exclude each other" \
	"$SC_BIN" mount --reverse --stack=crypt --passfile="$T/pw" "$P" "$V"
mkdir "$T/noconf"
expect $E_CONFIG "noconf/.stackcrypt.reverse.conf" \
	"$SC_BIN" mount --reverse --passfile="$T/pw" "$T/noconf" "$V"

# ---- the view ----------------------------------------------------------------------
rmount || finish
check "the view holds the volume's config" test -f "$V/.stackcrypt.conf"
check "the view's config is the reverse config's fields" \
	cmp -s <(grep -v checksum "$V/.stackcrypt.conf") \
	<(grep -v checksum "$P/.stackcrypt.reverse.conf")
check "the root has its nonce file" test -f "$V/sc.nonce"
# (whole names and targets compared: base64url may hold any short word by chance)
check "no plaintext name shows in the view" \
	test -z "$(comm -12 <(find "$P" -mindepth 1 -printf '%f\n' | sort -u) \
		<(find "$V" -mindepth 1 -printf '%f\n' | sort -u))"
check "no plaintext symlink target shows in the view" \
	test -z "$(comm -12 <(find "$P" -type l -printf '%l\n' | sort -u) \
		<(find "$V" -type l -printf '%l\n' | sort -u))"
check "no target in the view holds a '/' (base64url has none)" \
	test "$(find "$V" -type l -printf '%l\n' | grep -c /)" = 0
check "long names have side files" \
	test "$(find "$V" -name 'sc.*.name' | wc -l)" = 4
check "targets over 3008 bytes have link side files" \
	test "$(find "$V" -name 'sc.*.link' | wc -l)" = 2
check "a file's size in the view is the stored size (4097 bytes: 40 + 4128 + 33)" \
	bash -c "find '$V' -type f -size 4201c | grep -q ."
# hard1, hard2 and d1/hard3: one inode of the view, link count 3, one header
check "a hard-linked file is one inode of the view with its link count" \
	test "$(find "$V" -type f -links 3 -printf '%i\n' | sort | uniq -c | awk '{print $1}')" = 3
check "... all of its names read the same bytes" \
	test "$(find "$V" -type f -links 3 -exec sha256sum {} + | awk '{print $1}' | sort -u | wc -l)" = 1
check "a hard-linked symlink is one symlink per name" \
	test "$(find "$V" -type l -links +1 | wc -l)" = 0
check "the view is mounted read-only (kernel mount flags)" \
	bash -c "findmnt -no OPTIONS '$V' | grep -qE '(^|,)ro(,|$)'"
view_sums >"$T/sums1"
for w in "touch $V/new" "mkdir $V/newdir" "rm -f $V/sc.nonce" \
	 "mv $V/sc.nonce $V/other" "ln -s x $V/newlink" "chmod 0 $V/sc.nonce" \
	 "truncate -s 0 $V/sc.nonce" "cp $T/pw $V/.stackcrypt.conf" \
	 "setfattr -n user.x -v 1 $V/sc.nonce" "rmdir $(find "$V" -mindepth 1 -type d | head -n1)"; do
	expect 1 "Read-only file system" $w
done
check "python's O_RDWR open is EROFS too" python3 -c "
import errno, os, sys
try:
    os.open(sys.argv[1], os.O_RDWR)
except OSError as e:
    sys.exit(e.errno != errno.EROFS)
sys.exit(1)" "$V/sc.nonce"
mkdir "$C"
check "cp -a copies the whole view" cp -a "$V/." "$C/"
check "rsync -aH copies the whole view" rsync -aH "$V/" "$R/"
sc_umount "$V"
log_clean "first view"

# ---- determinism -----------------------------------------------------------------
rmount || finish
view_sums >"$T/sums2"
# --checksum compares every file's bytes, not its size and time
check "rsync --checksum of a second mount sends nothing" \
	rsync -aH --checksum --itemize-changes "$V/" "$R/" >"$T/rsync2"
check "... it itemized no change: $(cat "$T/rsync2")" test ! -s "$T/rsync2"
sc_umount "$V"
log_clean "second view"
check "two mounts show the same bytes" cmp -s "$T/sums1" "$T/sums2"
check "the copy holds the view's bytes" \
	cmp -s "$T/sums1" <(V="$C" view_sums)
cp -p "$P/sizes/f8192" "$T/f8192.orig"
flip "$P/sizes/f8192" 5000
rmount || finish
view_sums >"$T/sums3"
# (its size is the same, its time not: rsync's quick check sends it)
check "rsync after the change" rsync -aH --itemize-changes "$V/" "$R/" >"$T/rsync3"
check "rsync after the change checks the rest's bytes" \
	rsync -aH --checksum --itemize-changes "$V/" "$R/" >"$T/rsync3c"
sc_umount "$V"
log_clean "view after a change"
check "a changed file changes exactly one file of the view" \
	test "$(diff "$T/sums1" "$T/sums3" | grep -c '^>')" = 1
check "... and the same one: its name did not change" \
	test "$(diff "$T/sums1" "$T/sums3" | grep '^[<>]' | awk '{print $3}' | sort -u | wc -l)" = 1
changed=$(diff "$T/sums1" "$T/sums3" | awk '/^>/ {print substr($3, 3)}')
check "rsync sent exactly that file's ciphertext: $(cat "$T/rsync3")" \
	test "$(cat "$T/rsync3")" = ">f..t...... $changed"
check "... and nothing else differs: $(cat "$T/rsync3c")" test ! -s "$T/rsync3c"
cp -p "$T/f8192.orig" "$P/sizes/f8192"
rmount || finish
check "rsync after the change undone" rsync -aH --itemize-changes "$V/" "$R/" >"$T/rsync4"
sc_umount "$V"
log_clean "view after the change undone"
check "rsync sent that file's ciphertext again: $(cat "$T/rsync4")" \
	test "$(cat "$T/rsync4")" = ">f..t...... $changed"
check "the rsync copy holds the view's bytes" \
	cmp -s "$T/sums1" <(V="$R" view_sums)

# ---- the copy, forward ---------------------------------------------------------------
# restored COPY WHAT: COPY, mounted forward, is the tree; fsck finds nothing.
restored() {
	sc_mount_fg "$1" "$F" -o ro --passfile="$T/pw" || finish
	check "$2 reads back the tree (diff -r)" \
		diff -r --no-dereference --exclude=.stackcrypt.reverse.conf "$P" "$F"
	check "$2 has the tree's names, types, modes, sizes, targets and file times" \
		diff <(tree_list "$P") <(tree_list "$F")
	check "$2: the hard-linked file comes back linked (one inode, 3 links)" \
		test "$(stat -c '%i %h' "$F/hard1" "$F/hard2" "$F/d1/hard3" | sort -u | wc -l) $(stat -c %h "$F/hard1")" = "1 3"
	check "$2: the hard-linked symlink comes back as two symlinks" \
		test "$(stat -c %h "$F/links/rel") $(readlink "$F/links/relhard")" = "1 ../sizes/f1"
	sc_umount "$F"
	log_clean "forward mount of $2"
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$1"
}
restored "$C" "the cp -a copy"
restored "$R" "the rsync copy"

# ---- a tampered copy ---------------------------------------------------------------
fmount -o ro || finish
ino=$(stat -c %i "$F/sizes/f8193")
sc_umount "$F"
victim=$(find "$C" -inum "$ino")
flip "$victim" 100
fmount -o ro || finish
expect 1 "Input/output error" cat "$F/sizes/f8193"
check "the other files still read" cmp -s "$P/sizes/f8192" "$F/sizes/f8192"
sc_umount "$F"
check "the daemon logged the damaged file" grep -qF "sizes/f8193" "$T/daemon.log"
expect 1 "(in the mount: /sizes/f8193)" "$SC_BIN" fsck --passfile="$T/pw" "$C"

# ---- --config: the config outside the tree -------------------------------------------
P2="$T/plain2" C2="$T/copy2"
mkdir -p "$P2/sub" "$C2"
head -c 10000 /dev/urandom >"$P2/sub/data"
expect $E_OK "Created the reverse-mode config $T/outside.conf for $P2" \
	"$SC_BIN" init --reverse --config="$T/outside.conf" --scrypt-n=1024 --passfile="$T/pw" "$P2"
check "init --config wrote nothing into the tree" test "$(find "$P2" | wc -l)" = 3
expect $E_CONFIG "$P2/.stackcrypt.reverse.conf" \
	"$SC_BIN" mount --reverse --passfile="$T/pw" "$P2" "$V"
sc_mount_fg "$P2" "$V" --reverse --config="$T/outside.conf" --passfile="$T/pw" || finish
check "the view of a tree with its config elsewhere holds the config" \
	test -f "$V/.stackcrypt.conf"
check "cp -a copies it" cp -a "$V/." "$C2/"
sc_umount "$V"
log_clean "view with --config"
sc_mount_fg "$C2" "$F" -o ro --passfile="$T/pw" || finish
check "its copy reads back the tree" diff -r "$P2" "$F"
sc_umount "$F"
log_clean "forward mount of the second copy"

finish
