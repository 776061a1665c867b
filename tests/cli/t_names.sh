#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Encrypted names (issue 16), from the command line: init --encrypt-names and
# its refusals, info, the names layer in the mount and in -o stats, a tree of
# long names, every byte value and symlinks that reads back after a remount
# while the backing directory holds none of its names or targets, fsck of
# every kind of damage to names (and what the mount does with it), fsck
# --repair of crash leftovers only (a quarantined long name keeps its side
# file; side-file names that are not files are never removed), a names
# volume inside a names mount, ENOSPC on a full loop-mounted ext4, a tree
# whose backing paths outgrow PATH_MAX, and a mkdir killed (SIGKILL through
# strace) while it sets the new directory's nonce.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }
TREE="$CLI_DIR/names_tree.py"
mkdir -p "$T/m"

# log_quiet: the daemon said it mounted and nothing else.
log_quiet() {
	check "daemon logged only the mounted line: $(cat "$T/daemon.log")" \
		test "$(grep -vc '^stackcrypt: mounted ' "$T/daemon.log")" = 0
}

# ---- init and info --------------------------------------------------------
new_volume "$T/v" --encrypt-names || finish
check "init says names are encrypted" grep -qF "names encrypted" "$T/init.err"
check "init gave the root a nonce record" \
	test "$(getfattr --only-values -n user.stackcrypt.names "$T/v" 2>/dev/null | wc -c)" = 33
expect $E_OK "" "$SC_BIN" info "$T/v"
check "info: names encrypted" \
	grep -qxF "names:       encrypted (AES-256-SIV, per-directory nonce; symlink targets too, bound to their entry, up to 4095 bytes)" "$T/out"
check "info: the features name the flag" \
	grep -qxF "features:    0xf (new files get version 2 headers: the per-file header format; encrypt-names; nonce records bound to their directories)" "$T/out"
mkdir "$T/bad1" "$T/bad2"
expect $E_USAGE "--encrypt-names and --header-version=1 exclude each other" \
	"$SC_BIN" init --encrypt-names --header-version=1 --passfile="$T/pw" "$T/bad1"
check "no config after the refusal" test ! -e "$T/bad1/.stackcrypt.conf"
echo "old" >"$T/bad2/old"
expect $E_BACKING "encrypted names need an empty $T/bad2 (1 entry, e.g. 'old')" \
	"$SC_BIN" init --encrypt-names --force --passfile="$T/pw" "$T/bad2"
check "no config after the refusal" test ! -e "$T/bad2/.stackcrypt.conf"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"

# ---- the layer in the stack ---------------------------------------------------
expect $E_USAGE "(top, all, or a layer: names, crypt, posix)" \
	"$SC_BIN" mount -o stats=bogus "$T/v" "$T/m"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o stats=all || finish
touch "$T/m/x"
expect $E_OK "" "$SC_BIN" stats --json "$T/m"
check "stats=all labels: $(python3 -c 'import json,sys; print(*[l["label"] for l in json.load(open(sys.argv[1]))["layers"]])' "$T/out")" \
	python3 -c 'import json, sys
assert [l["label"] for l in json.load(open(sys.argv[1]))["layers"]] == ["fuse>names", "names>crypt", "crypt>posix"]' "$T/out"
rm "$T/m/x"
sc_umount "$T/m"
log_quiet
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o stats=names || finish
expect $E_OK "" "$SC_BIN" stats --json "$T/m"
check "stats=names: one layer above names" \
	python3 -c 'import json, sys
assert [l["label"] for l in json.load(open(sys.argv[1]))["layers"]] == ["fuse>names"]' "$T/out"
sc_umount "$T/m"

# ---- a tree of long names, every byte, symlinks -----------------------------
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
expect $E_OK "" python3 "$TREE" make "$T/m"
expect $E_OK "0 problems" python3 "$TREE" verify "$T/m"
expect $E_OK "" python3 "$TREE" limits "$T/m"
sc_umount "$T/m"
log_quiet
expect $E_OK "0 problems" python3 "$TREE" scan "$T/v"
check "long names have side files" \
	test "$(find "$T/v" -regex '.*/sc\.[A-Za-z0-9_-]*\.name' | wc -l)" -gt 10
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
expect $E_OK "0 problems" python3 "$TREE" verify "$T/m"
f16="$T/m/bytes/$(printf 'A%.0s' {1..3})"		# a file of one byte "A"
f16_ino=$(stat -c %i "$f16")
sc_umount "$T/m"
log_quiet
# the file checks name the path in the mount too
bf=$(find "$T/v" -inum "$f16_ino")
hdr=$(getfattr -e hex -n user.stackcrypt "$bf" 2>/dev/null | sed -n 's/^user\.stackcrypt=//p')
setfattr -x user.stackcrypt "$bf"
expect $E_FAIL "$bf: no header (xattr user.stackcrypt missing): not written through stackcrypt, or its xattrs were lost in a copy (in the mount: /bytes/AAA)" \
	"$SC_BIN" fsck --passfile="$T/pw" "$T/v"
setfattr -n user.stackcrypt -v "$hdr" "$bf"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"

# ---- recovery without the config: the names flag comes from the volume ------
cp -a "$T/v" "$T/vr"
rm "$T/vr/.stackcrypt.conf"
expect $E_OK "" "$SC_BIN" passwd --masterkey="$T/mk" --new-passfile="$T/pw" "$T/vr"
expect $E_OK "names:       encrypted" "$SC_BIN" info "$T/vr"
sc_mount_fg "$T/vr" "$T/m" --passfile="$T/pw" || finish
expect $E_OK "0 problems" python3 "$TREE" verify "$T/m"
sc_umount "$T/m"
rm -rf "$T/vr"

# ---- damage to names: fsck names it, the mount hides it ---------------------
v="$T/vt"
new_volume "$v" --encrypt-names || finish
long=$(printf 'L%.0s' {1..200})
sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
mkdir "$T/m/a" "$T/m/b" "$T/m/c" "$T/m/d" "$T/m/e"
for f in a/garbage-me a/edit-me a/keep "b/$long" b/keep c/x c/y d/keep "d/$long"; do
	echo "$f" >"$T/m/$f"
done
ln -s target "$T/m/e/link"
ino() { stat -c %i "$T/m/$1"; }
for p in a b c d e a/garbage-me a/edit-me "b/$long" "d/$long" e/link; do
	printf '%s\t%s\n' "$(ino "$p")" "$p"
done >"$T/inodes"
sc_umount "$T/m"
log_quiet
# backing path of a plaintext path (inode numbers pass through the mount)
bpath() { find "$v" -inum "$(awk -F'\t' -v p="$1" '$2 == p { print $1 }' "$T/inodes")"; }
ba=$(bpath a) bb=$(bpath b) bc=$(bpath c) bd=$(bpath d)
mv "$(bpath a/garbage-me)" "$ba/garbage name!"
e=$(bpath a/edit-me)
base=$(basename "$e")
c5=${base:5:1}
mv "$e" "$ba/${base:0:5}$([ "$c5" = A ] && echo B || echo A)${base:6}"
lb=$(bpath "b/$long")
rm "$lb.name"
setfattr -x user.stackcrypt.names "$bc"
# what a crash between a long name's side file and its entry leaves
ld=$(bpath "d/$long")
orphan="$(basename "$ld").name"
rm "$ld"
: >"$bd/stray"		# empty: a file without a header is no damage of its own
empty="sc.new.0123456789abcdef0123456789abcdef"
full="sc.new.fedcba9876543210fedcba9876543210"
mkdir "$bd/$empty" "$bd/$full"
: >"$bd/$full/inside"
bl=$(bpath e/link)
ln -sfn "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" "$bl"

expect $E_FAIL "" "$SC_BIN" fsck --passfile="$T/pw" "$v"
cp "$T/out" "$T/fsck1"
while IFS='|' read -r path msg; do
	check "fsck: $path: $msg" grep -qF "$path: $msg" "$T/fsck1"
done <<EOF
$ba/garbage name!|not a stackcrypt name (put into the backing directory by hand?): the mount hides it; fsck never removes it (in the mount's directory: /a)
$lb|long name without its side file $(basename "$lb").name: the mount hides it (in the mount's directory: /b)
$bc|directory has no valid name nonce user.stackcrypt.names (missing): the mount can neither read nor make names in it (in the mount: /c)
$bd/$orphan|side file of a long name that does not exist (left by a crash): --repair removes it (in the mount's directory: /d)
$bd/stray|not a stackcrypt name
$bd/$empty|directory left by an interrupted mkdir (killed before it got its name): the mount hides it; --repair removes it (and its nonce file) (in the mount's directory: /d)
$bd/$full|directory left by an interrupted mkdir
$bl|symlink target does not decrypt (edited in the backing directory?): reading the link through the mount fails (in the mount: /e/link)
EOF
check "fsck: the edited name does not decrypt" \
	grep -qE "^$ba/${base:0:5}[AB]${base:6}: name does not decrypt under its directory's nonce" "$T/fsck1"
check "fsck: 9 problems (got: $(grep -o '[0-9]* problems' "$T/fsck1"))" grep -qF "; 9 problems" "$T/fsck1"
check "fsck: the good entries are not named" \
	bash -c "! grep -F 'keep' '$T/fsck1'"
check "fsck suggests --repair for the leftovers" \
	grep -qF "Run 'stackcrypt fsck --repair' to remove the leftovers of interrupted operations." "$T/fsck1"

# the mount hides what is not a name, fails what cannot be read, and logs
# each directory once however often it is listed
sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
# "Once" is per inode the mount holds: an inode the kernel forgets (cache
# eviction, or another test's drop_caches) comes back as a new one and is
# logged again.  A helper holds the inodes for the rounds (O_PATH, not
# following the link), so the count does not depend on the kernel's caches.
coproc PIN { python3 -c 'import os, sys
fds = [os.open(p, os.O_PATH | os.O_NOFOLLOW) for p in sys.argv[1:]]
print("pinned", flush=True)
sys.stdin.read()' "$T/m/a" "$T/m/b" "$T/m/c" "$T/m/d" "$T/m/e/link"; }
pin_pid=$PIN_PID
read -r pinned <&"${PIN[0]}"
check "the inodes are pinned" test "$pinned" = pinned
for i in 1 2 3; do
	check "a: only the good names (round $i): $(ls "$T/m/a" | tr '\n' ' ')" \
		test "$(ls "$T/m/a" | tr '\n' ' ')" = "keep "
	check "b: only the good names (round $i)" test "$(ls "$T/m/b" | tr '\n' ' ')" = "keep "
	check "d: only the good names (round $i)" test "$(ls "$T/m/d" | tr '\n' ' ')" = "keep "
	expect 2 "Input/output error" ls "$T/m/c"
	expect 1 "" readlink "$T/m/e/link"
done
eval "exec ${PIN[1]}>&-"
wait "$pin_pid"
check "a/keep reads" grep -qx "a/keep" "$T/m/a/keep"
check "the daemon is alive" kill -0 "${SC_PIDS[-1]}"
for p in a b d; do
	n=$(grep -c "names: directory $T/m/$p " "$T/daemon.log")
	check "directory $p logged once (got $n)" test "$n" = 1
done
n=$(grep -c "names: directory $T/m/c " "$T/daemon.log")
check "directory c logged once (got $n)" test "$n" = 1
n=$(grep -c "names: symlink $T/m/e/link " "$T/daemon.log")
check "the bad link logged once (got $n)" test "$n" = 1
sc_umount "$T/m"

# --repair: the orphan side file and the empty sc.new.* go, nothing else
(cd "$v" && find . | LC_ALL=C sort) >"$T/before"
expect $E_FAIL "; 9 problems, 0 files quarantined" "$SC_BIN" fsck --repair --passfile="$T/pw" "$v"
check "repair: removed the orphan" grep -qxF "removed: $bd/$orphan" "$T/out"
check "repair: removed the empty sc.new" grep -qxF "removed: $bd/$empty" "$T/out"
check "repair: kept the non-empty sc.new" \
	grep -qF "not removing $bd/$full: it holds more than its nonce file" "$T/out"
(cd "$v" && find . | LC_ALL=C sort) >"$T/after"
check "repair removed exactly two entries: $(diff "$T/before" "$T/after" | tr '\n' ' ')" \
	test "$(diff "$T/before" "$T/after" | grep -c '^<')" = 2 -a \
	     "$(diff "$T/before" "$T/after" | grep -c '^>')" = 0
expect $E_FAIL "; 7 problems" "$SC_BIN" fsck --passfile="$T/pw" "$v"
check "after repair: no orphan, no empty sc.new" \
	bash -c "! grep -qF -e '$orphan' -e '$empty' '$T/out'"

# ---- a names volume inside a names mount ------------------------------------
# The inner init sets the root's nonce attribute through the outer mount,
# which stores it escaped: each layer keeps its own.
v="$T/vo"
new_volume "$v" --encrypt-names || finish
mkdir -p "$T/m2"
sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
new_volume "$T/m/inner" --encrypt-names || finish
sc_mount_fg "$T/m/inner" "$T/m2" --passfile="$T/pw" || finish
long=$(printf 'N%.0s' {1..220})
mkdir "$T/m2/d"
echo nested >"$T/m2/d/$long"
ln -s "../d/$long" "$T/m2/d/link"
check "nested: the long name reads back" grep -qx nested "$T/m2/d/$long"
check "nested: through the symlink" grep -qx nested "$T/m2/d/link"
check "nested: the listing" test "$(ls "$T/m2/d" | sort | tr '\n' ' ')" = "$long link "
fusermount3 -u "$T/m2" || fail "fusermount3 -u $T/m2"
wait "${SC_PIDS[-1]}"
unset 'SC_PIDS[-1]'
# The inner backing is a FUSE filesystem: the posix layer says which of its
# fallbacks it takes (docs/usage.md, "Over GlusterFS"), as notices.
check "nested: the inner daemon logged its mount line and the FUSE backing's notices only" \
	test "$(grep -v '^stackcrypt: mounted ' "$T/daemon.log" | grep -vc '^stackcrypt: posix: notice: ')" = 0
check "nested: the inner daemon said its backing is a FUSE filesystem" \
	grep -q '^stackcrypt: posix: notice: the backing directory is on fuse' "$T/daemon.log"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/m/inner"
sc_umount "$T/m"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$v"

# ---- a long-named file quarantined by --repair keeps its side file ----------
# The side file is all that says what the quarantined file was called: later
# runs must not take it for a crash's orphan and remove it.
v="$T/vq"
new_volume "$v" --encrypt-names || finish
long=$(printf 'Q%.0s' {1..200})
sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
echo "precious" >"$T/m/$long"
sc_umount "$T/m"
log_quiet
lq=$(find "$v" -maxdepth 1 -name 'sc.*' ! -name '*.name')
setfattr -x user.stackcrypt "$lq"
expect $E_FAIL "quarantined: $lq -> $lq.stackcrypt-quarantine-1" \
	"$SC_BIN" fsck --repair --passfile="$T/pw" "$v"
expect $E_OK "; 0 problems; 1 file quarantined earlier (skipped)" \
	"$SC_BIN" fsck --passfile="$T/pw" "$v"
expect $E_OK "; 0 problems" "$SC_BIN" fsck --repair --passfile="$T/pw" "$v"
check "the quarantined long name's side file is kept" test -f "$lq.name"

# ---- side-file names that are not files: never taken for a crash's leftover --
# Only a regular file is what a crash leaves; a directory or a FIFO under a
# side file's name was made by hand, and fsck says so and never removes it
# (a FIFO is not opened, so fsck does not block on it).
v="$T/vs"
new_volume "$v" --encrypt-names || finish
sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
echo x >"$T/m/$(printf 'S%.0s' {1..200})"
echo y >"$T/m/$(printf 'T%.0s' {1..200})"
sc_umount "$T/m"
log_quiet
set -- $(find "$v" -maxdepth 1 -name 'sc.*.name' | sort)
s1=$1 s2=$2
rm "$s1" "$s2" "${s1%.name}" "${s2%.name}"
mkdir "$s1"
mkfifo "$s2"
expect $E_FAIL "" "$SC_BIN" fsck --repair --passfile="$T/pw" "$v"
for s in "$s1" "$s2"; do
	check "fsck: $s is not a stackcrypt name" grep -qF \
		"$s: not a stackcrypt name (put into the backing directory by hand?): the mount hides it; fsck never removes it" "$T/out"
done
check "--repair removed neither" test -d "$s1" -a -p "$s2"
check "--repair said it removed nothing" bash -c "! grep -q '^removed:' '$T/out'"

# ---- a full backing filesystem: long names fail whole -------------------------
# A long name needs a side file (a data block): on a full ext4 every call
# that makes one fails with ENOSPC and leaves no side file nor sc.new.*
# behind; what was there stays, and fsck finds nothing.
if command -v mkfs.ext4 >/dev/null && truncate -s 8M "$T/img" &&
   mkfs.ext4 -q -m 0 -N 256 "$T/img" && mkdir "$T/lo" && mount -o loop "$T/img" "$T/lo"; then
	v="$T/lo/v"
	new_volume "$v" --encrypt-names || finish
	sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
	long=$(printf 'F%.0s' {1..200})
	mkdir "$T/m/d"
	echo kept >"$T/m/d/$long"
	echo short >"$T/m/d/short"
	expect 1 "No space left on device" dd if=/dev/zero of="$T/m/fill" bs=4k
	expect 1 "No space left on device" touch "$T/m/d/${long}2"
	expect 1 "No space left on device" mkdir "$T/m/d/${long}3"
	expect 1 "No space left on device" ln -s target "$T/m/d/${long}4"
	expect 1 "No space left on device" mv "$T/m/d/short" "$T/m/d/${long}5"
	check "after ENOSPC: the names that were there: $(ls "$T/m/d" | cut -c1-8 | tr '\n' ' ')" \
		test "$(ls "$T/m/d" | LC_ALL=C sort | tr '\n' ' ')" = "$long short "
	check "the long name reads" grep -qx kept "$T/m/d/$long"
	rm "$T/m/fill"
	sc_umount "$T/m"
	log_quiet
	check "one side file below, no sc.new.*: $(find "$v" -name 'sc.*' | wc -l) sc.* entries" \
		test "$(find "$v" -name 'sc.*.name' | wc -l)" = 1 -a \
		     "$(find "$v" -name 'sc.new.*' | wc -l)" = 0
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$v"
	umount "$T/lo" || fail "umount $T/lo"
else
	fail "no loop-mounted ext4 for the ENOSPC case"
fi

# ---- a deep tree: backing paths longer than PATH_MAX --------------------------
# Encrypted names are longer than plaintext ones: a 3.5 KiB path in the
# mount is a longer one below.  fsck checks all of it, and --repair refuses
# (saying why, touching nothing) to move a file it cannot name by one path.
# The tree is built so that the bad file's backing path cut at PATH_MAX - 1
# bytes is exactly the path of one of its directories (the shape of what a
# truncated path would have moved: a whole directory out of the mount).
v="$T/vd"
new_volume "$v" --encrypt-names || finish
sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
expect $E_OK "" python3 -c 'import os, sys
mnt, below = sys.argv[1], len(sys.argv[2])
# encoded length of a name of 16*b bytes (b blocks): base64url of 16 + 16*b bytes
enc = {b: -(-(16 + 16 * b) * 4 // 3) for b in range(1, 11)}
cut = 4095 - below		# bytes of "/name/name..." up to the directory to hit
steps = []
while cut - (1 + enc[10]) > 1000:	# every length past 814 is a sum of steps
    steps.append(10)
    cut -= 1 + enc[10]
# the rest exactly, ending in a one-block name: a small search
best = {0: []}
for total in range(1, cut + 1):
    for b in range(1, 11):
        if total - (1 + enc[b]) in best:
            best[total] = best[total - (1 + enc[b])] + [b]
            break
rest = cut - (1 + enc[1])
assert rest in best, "no exact path"
steps += best[rest] + [1]
os.chdir(mnt)
for n in ("top", "other"):
    with open(n, "w") as f:
        f.write(n)
for i, b in enumerate(steps):
    name = chr(ord("A") + i % 26) * (16 * b)
    os.mkdir(name)
    os.chdir(name)
os.mkdir("E" * 160)
os.chdir("E" * 160)
with open("leaf", "w") as f:
    f.write("deep")
print(os.stat("leaf").st_ino)' "$T/m" "$v"
leaf_ino=$(cat "$T/out")
sc_umount "$T/m"
log_quiet
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$v"
# the leaf loses its header (found by inode, reached by directory fds; "top"
# and "other" keep it from looking like a tree copied without xattrs)
expect $E_OK "" python3 -c 'import os, sys
def down(fd):
    for e in os.scandir(fd):
        if e.inode() == int(sys.argv[2]):
            os.removexattr("/proc/self/fd/%d/%s" % (fd, e.name), "user.stackcrypt")
            return True
        if e.is_dir(follow_symlinks=False):
            sub = os.open(e.name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            found = down(sub)
            os.close(sub)
            if found:
                return True
    return False
sys.exit(0 if down(os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)) else 1)' "$v" "$leaf_ino"
expect $E_FAIL "; 1 problem" "$SC_BIN" fsck --passfile="$T/pw" "$v"
check "fsck names the deep file in the mount" grep -qF "/$(printf 'E%.0s' {1..160})/leaf)" "$T/out"
(cd "$v" && find . | LC_ALL=C sort) >"$T/before"
expect $E_FAIL "; 1 problem, 0 files quarantined" "$SC_BIN" fsck --repair --passfile="$T/pw" "$v"
check "--repair says why it did not move it" grep -qF ": File name too long" "$T/out"
(cd "$v" && find . | LC_ALL=C sort) >"$T/after"
check "--repair changed nothing: $(diff "$T/before" "$T/after" | head -c 300)" \
	cmp -s "$T/before" "$T/after"

# ---- #28 finding 2: a directory's nonce record copied to another one --------
# A's record copied onto the empty C, A's one entry moved into C: the
# record is A's (its tag names A's place), so C's names return EIO, the
# daemon says why once, and fsck names C's record.
v="$T/vcopy"
new_volume "$v" --encrypt-names || finish
sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
mkdir "$T/m/A" "$T/m/C"
echo "moved secret" >"$T/m/A/f"
ia=$(stat -c %i "$T/m/A") ic=$(stat -c %i "$T/m/C")
sc_umount "$T/m"
log_quiet
bA=$(find "$v" -inum "$ia") bC=$(find "$v" -inum "$ic")
rec=$(getfattr --absolute-names -e hex -n user.stackcrypt.names "$bA" |
      sed -n 's/^user.stackcrypt.names=//p')
check "A has a bound record (33 bytes)" test "${#rec}" = $((2 + 2 * 33))
setfattr -n user.stackcrypt.names -v "$rec" "$bC"
mv "$bA"/* "$bC"/
sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
expect $E_FAIL "Input/output error" cat "$T/m/C/f"
check "the moved entry does not read in C" bash -c "! grep -qF 'moved secret' '$T/out'"
sc_umount "$T/m"
check "the daemon names C's record once: $(cat "$T/daemon.log")" \
	test "$(grep -c "names: directory $T/m/C has the name nonce record of another directory" "$T/daemon.log")" = 1
expect $E_FAIL "" "$SC_BIN" fsck --passfile="$T/pw" "$v"
check "fsck: C holds another directory's record" \
	grep -qF "$bC: directory has no valid name nonce user.stackcrypt.names (the record of another directory: copied from it, or this directory was moved behind the mount)" "$T/out"

# ---- #28 finding 7: the root's record gone while the root holds names ------
# No new record (every name in the root would be lost): the mount fails
# in one line naming the record, and the volume is left as it was.
v="$T/vroot"
new_volume "$v" --encrypt-names || finish
sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
echo kept >"$T/m/f"
sc_umount "$T/m"
log_quiet
setfattr -x user.stackcrypt.names "$v"
expect $E_CONFIG "" "$SC_BIN" mount -f --passfile="$T/pw" "$v" "$T/m"
check "mount refused in one line naming the record: $(cat "$T/out")" \
	grep -qF "the backing root holds names but not its name nonce record (user.stackcrypt.names)" "$T/out"
check "no new root record" bash -c "! getfattr -n user.stackcrypt.names '$v' 2>/dev/null | grep -q ."
is_mounted "$T/m" && sc_umount "$T/m"

# ---- mkdir killed while it sets the new directory's nonce ---------------------
if command -v strace >/dev/null; then
	# LeakSanitizer cannot run under ptrace: off for the traced daemon only
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	v="$T/vk"
	new_volume "$v" --encrypt-names || finish
	# the nonce is the first xattr the daemon sets (the root has its own):
	# the posix layer sets it with setxattr on /proc/self/fd/N
	strace -f -o /dev/null -e trace=setxattr,fsetxattr,lsetxattr \
		-e inject=setxattr,fsetxattr,lsetxattr:signal=SIGKILL:when=1 \
		"$SC_BIN" mount -f --passfile="$T/pw" "$v" "$T/m" >"$T/daemon.log" 2>&1 </dev/null &
	SC_PIDS+=($!)
	while ! is_mounted "$T/m"; do
		kill -0 "${SC_PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	check "the traced mount came up: $(cat "$T/daemon.log")" is_mounted "$T/m"
	expect 1 "" mkdir "$T/m/newdir"
	wait "${SC_PIDS[-1]}" 2>/dev/null
	rc=$?
	# strace ends as its tracee did: killed by the injected SIGKILL
	check "the daemon died of SIGKILL (strace exit $rc, want 137)" test "$rc" = 137
	fusermount3 -u "$T/m" || fail "fusermount3 -u after the kill"
	SC_PIDS=()
	ASAN_OPTIONS=${ASAN_OPTIONS%detect_leaks=0}
	ASAN_OPTIONS=${ASAN_OPTIONS%:}
	check "the kill left one sc.new.* directory: $(ls -a "$v" | tr '\n' ' ')" \
		test "$(find "$v" -mindepth 1 -maxdepth 1 -name 'sc.new.*' -type d | wc -l)" = 1
	sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
	check "the half-made directory is not visible: $(ls -a "$T/m" | tr '\n' ' ')" \
		test -z "$(ls "$T/m")"
	sc_umount "$T/m"
	expect $E_FAIL "directory left by an interrupted mkdir" "$SC_BIN" fsck --passfile="$T/pw" "$v"
	expect $E_FAIL "removed: $v/sc.new." "$SC_BIN" fsck --repair --passfile="$T/pw" "$v"
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$v"
	sc_mount_fg "$v" "$T/m" --passfile="$T/pw" || finish
	check "mkdir of the same name works" mkdir "$T/m/newdir"
	check "and it is there" test -d "$T/m/newdir"
	sc_umount "$T/m"
	log_quiet
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$v"
else
	fail "strace missing: the killed mkdir is untested"
fi

finish
