#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# stackcrypt fsck on an aes-gcm volume (docs/format.md section 10), offline:
# files of every shape written by gcm_file.py (the format composed again in
# Python, no mount needed) are clean -- empty, header-only, 1 byte, around
# one unit, several units, holes, more than one read chunk -- then each
# class of damage is made on a copy and must be reported with its file,
# its unit where it has one, and its reason: the header's magic, version,
# unit size, flags, file id and MAC, a truncated header, a foreign file,
# another volume's file, a unit's nonce, ciphertext and tag, a byte pair
# across a unit boundary, two units swapped, a unit from another file at
# the same index, two files' headers swapped, a cut inside the final
# unit's ciphertext and inside a nonce or tag, a unit in the second read
# chunk.  A whole unit of zeros is a hole: counted, listed with --verbose,
# never a problem.  fsck changes nothing without --repair, which
# quarantines exactly the damaged files; a second run is clean.  Then
# files written through a mount (with and without encrypted names, whose
# long names' side files are aes-gcm files too) are clean, holes counted,
# and a flipped byte in one of them, or in a side file, is reported.
# Zero units (#28 finding 3): in a file whose header tracks holes and has
# none, a zeroed unit and an appended unit of zeros are problems; in files
# that may hold holes, and in files from before hole tracking (header
# flags 0, what the files above have), they are holes.
. "$(dirname "$0")/lib.sh"

BS=4096
U=$((BS + 32))			# a whole stored unit
H=40				# the in-file header
GF=("python3" "$CLI_DIR/gcm_file.py")
new_volume "$T/v" --cipher=aes-gcm --block-size=$BS || finish
cp "$T/mk" "$T/mk.v"
V=$T/v

# gen NAME SIZE [HOLE...]: a backing file of SIZE plaintext bytes in $V
# (plain: the plaintext bytes of every file gen wrote)
plain=0
gen() {
	local name=$1 size=$2
	shift 2
	plain=$((plain + size))
	"${GF[@]}" "$T/mk.v" $BS "$V/$name" "$size" "seed-$name" "$@" ||
		fail "gcm_file.py $name $size failed"
}
# copy_bytes FROM FROM_OFF TO TO_OFF LEN: overwrite LEN bytes of TO at TO_OFF
copy_bytes() {
	dd if="$1" of="$3" bs=1 skip="$2" seek="$4" count="$5" conv=notrunc status=none
}

: >"$V/empty0"				# header not written yet: empty
gen hdronly 0				# header alone: empty
gen one 1
gen less $((BS - 1))
gen unit $BS
gen more $((BS + 1))
gen units $((3 * BS + 100))
gen sparse $((5 * BS + 7)) 1 3		# two holes
mkdir -p "$V/d/e"
gen d/e/deep $((2 * BS))
gen large $((300 * BS))			# more than one 1 MiB read chunk
nfiles=10

expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
check "clean: every file counted" grep -q ": $nfiles files, 2 directories" "$T/out"
check "clean: every plaintext byte counted ($plain)" \
	grep -q "directories checked: $plain bytes ([0-9.]* MiB) of plaintext in $nfiles whole files, 0 files damaged (0 stored bytes); 0 problems" "$T/out"
check "clean: the holes are counted, not problems" grep -q "; 2 holes (whole units of zeros" "$T/out"
check "clean: no hole listed without --verbose" bash -c "! grep -q 'is a hole' '$T/out'"
expect $E_OK "0 problems" "$SC_BIN" fsck -v --passfile="$T/pw" "$V"
for u in 1 3; do
	check "--verbose lists hole $u" grep -qF "$V/sparse: unit $u is a hole (all zeros: reads as zeros, not an error)" "$T/out"
done
check "--verbose lists no other hole" test "$(grep -c 'is a hole' "$T/out")" = 2

# another volume's file, and a file of an xattr volume (its data is random bytes)
new_volume "$T/other" --cipher=aes-gcm --block-size=$BS || finish
"${GF[@]}" "$T/mk" $BS "$T/otherfile" 5000 other || fail "gcm_file.py other"

# the damage, each on a fresh copy of a clean file
dmg() { cp "$V/$1" "$V/$2"; }
dmg units h_magic;    flip "$V/h_magic" 0
dmg units h_version;  flip "$V/h_version" 4
dmg units h_log2bs;   flip "$V/h_log2bs" 5
dmg units h_flags;    flip "$V/h_flags" 6
dmg units h_fileid;   flip "$V/h_fileid" 12
dmg units h_mac;      flip "$V/h_mac" 39
dmg units h_short;    truncate -s 20 "$V/h_short"
cp "$T/otherfile" "$V/h_othervol"
head -c 5000 /dev/urandom >"$V/h_foreign"
dmg units u_nonce;    flip "$V/u_nonce" $((H + U + 3))
dmg units u_ct;       flip "$V/u_ct" $((H + U + 16 + 1000))
dmg units u_tag;      flip "$V/u_tag" $((H + 2 * U - 1))
dmg units u_straddle; flip "$V/u_straddle" $((H + U - 1)) $((H + U))
dmg units u_swap
copy_bytes "$V/units" $H "$V/u_swap" $((H + U)) $U
copy_bytes "$V/units" $((H + U)) "$V/u_swap" $H $U
dmg units u_fromfile
gen u_donor $((3 * BS + 100))
copy_bytes "$V/u_donor" $((H + 2 * U)) "$V/u_fromfile" $((H + 2 * U)) $U
dmg units s_a; dmg unit s_b
copy_bytes "$V/unit" 0 "$V/s_a" 0 $H
copy_bytes "$V/units" 0 "$V/s_b" 0 $H
dmg units c_ct;       truncate -s $((H + 3 * U + 50)) "$V/c_ct"	# 100-byte final unit cut to 18
dmg units c_nonce;    truncate -s $((H + 3 * U + 20)) "$V/c_nonce"	# 20 bytes: inside the nonce
dmg units c_tag;      truncate -s $((H + 3 * U + 30)) "$V/c_tag"	# 30 bytes: inside the tag
dmg unit c_tagend;    truncate -s $((H + U - 5)) "$V/c_tagend"	# 5 bytes of unit 0's tag gone
dmg large u_far;      flip "$V/u_far" $((H + 280 * U + 2000))
gen z_zero $((3 * BS + 100))		# a file of its own: a copy shares the id
dd if=/dev/zero of="$V/z_zero" bs=1 seek=$((H + U)) count=$U conv=notrunc status=none
nbad=22

snapshot() { (cd "$V" && find . -printf '%p %s %m\n' | sort && find . -type f -exec md5sum {} + | sort); }
snapshot >"$T/before"
expect $E_FAIL "$nbad problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
cp "$T/out" "$T/report"
# every damaged file counted as such, with its stored bytes (none dropped from the summary)
dbytes=$(grep -o "^$V/[^:]*" "$T/report" | sed "s|^$V/||" | sort -u |
	 (cd "$V" && xargs stat -c %s) | awk '{s += $1} END {print s}')
check "the summary counts the $nbad damaged files ($dbytes stored bytes)" \
	grep -qE ": $((nfiles + 2 + nbad)) files, 2 directories checked: [0-9]+ bytes \([0-9.]+ MiB\) of plaintext in $((nfiles + 2)) whole files, $nbad files damaged \($dbytes stored bytes\); $nbad problems" "$T/report"
# want NAME MESSAGE: the report has the line "$V/NAME: MESSAGE..."
want() { check "$1 reported: $2" grep -qF "$V/$1: $2" "$T/report"; }
NOHDR="no aes-gcm file header (it does not start with \"scgm\")"
MAC="aes-gcm file header MAC mismatch: the header was tampered with, or comes from another volume"
tagmsg() { printf 'unit %s (plaintext bytes from %s, stored at offset %s) fails its authentication tag' \
	"$1" $(($1 * BS)) $((H + $1 * U)); }
want h_magic "$NOHDR"
want h_version "aes-gcm file header of unknown version 0 (this build knows 1)"
want h_log2bs "$MAC"
want h_flags "$MAC"
want h_fileid "$MAC"
want h_mac "$MAC"
want h_short "truncated aes-gcm file header: the file holds 20 bytes, a header is 40"
want h_othervol "$MAC"
# random bytes start with "scgm" with probability 2^-32
want h_foreign "$NOHDR"
want u_nonce "$(tagmsg 1)"
want u_ct "$(tagmsg 1)"
want u_tag "$(tagmsg 1)"
want u_straddle "$(tagmsg 0)"
want u_swap "$(tagmsg 0)"
want u_fromfile "$(tagmsg 2)"
want s_a "$(tagmsg 0)"
want s_b "$(tagmsg 0)"
want c_ct "$(tagmsg 3)"
want c_nonce "the file ends 20 bytes into unit 3, inside its nonce and tag (at most 32 bytes): truncated"
want c_tag "the file ends 30 bytes into unit 3, inside its nonce and tag"
# a unit that lost the end of its tag reads as a shorter final unit: its tag fails
want c_tagend "$(tagmsg 0)"
want u_far "$(tagmsg 280)"
check "a zeroed whole unit is no problem" bash -c "! grep -q '/z_zero:' '$T/report'"
check "the zeroed unit is a hole" grep -q "; 3 holes" "$T/report"
for good in empty0 hdronly one less unit more units sparse d/e/deep large u_donor; do
	check "clean file $good not reported" bash -c "! grep -qF '$V/$good:' '$T/report'"
done
check "fsck says what --repair does" grep -qF "Run 'stackcrypt fsck --repair' to move the bad files aside." "$T/report"
snapshot >"$T/after"
check "fsck without --repair changed nothing" cmp -s "$T/before" "$T/after"

# --repair quarantines exactly the damaged files
expect $E_FAIL "$nbad files quarantined" "$SC_BIN" fsck --repair --passfile="$T/pw" "$V"
for name in h_magic h_version h_log2bs h_flags h_fileid h_mac h_short h_othervol h_foreign \
	    u_nonce u_ct u_tag u_straddle u_swap u_fromfile s_a s_b c_ct c_nonce c_tag c_tagend u_far; do
	check "$name quarantined" test -f "$V/$name.stackcrypt-quarantine-1" -a ! -e "$V/$name"
done
check "nothing else moved" test "$(find "$V" -name '*stackcrypt-quarantine*' | wc -l)" = $nbad
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
check "the second run skips the quarantined files" grep -qF "$nbad files quarantined earlier (skipped)" "$T/out"
check "the second run still counts the holes" grep -q "; 3 holes" "$T/out"

# Files written through a mount are clean for fsck, holes included; with
# encrypted names too, whose long names' side files are aes-gcm files.
if [ -c /dev/fuse ]; then
	for opts in "" "--encrypt-names"; do
		# shellcheck disable=SC2086  # opts: zero or one option
		new_volume "$T/m$opts" --cipher=aes-gcm $opts || finish
		M=$T/mnt$opts
		mkdir "$M"
		sc_mount_fg "$T/m$opts" "$M" --passfile="$T/pw" || finish
		long=$(printf 'L%.0s' $(seq 200))
		for n in 0 1 4095 4096 4097 20000; do head -c $n /dev/urandom >"$M/f$n"; done
		head -c 5000 /dev/urandom >"$M/$long"
		mkdir "$M/dir"
		echo data >"$M/dir/$long"
		truncate -s $((6 * BS + 9)) "$M/dir/sparse"
		ln -s "$long" "$M/link"
		backing_map "$M" "$T/m$opts" "$long"
		sc_umount "$M"
		expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/m$opts"
		n=9; [ -n "$opts" ] && n=13	# two long names: two side files; two directories: two nonce files
		check "mount $opts: files written through the mount: $n files" grep -q ": $n files" "$T/out"
		check "mount $opts: a truncate-extended file has 6 holes" grep -q "; 6 holes" "$T/out"
		flip "${BK[$long]}" 100
		expect $E_FAIL "1 problem" "$SC_BIN" fsck --passfile="$T/pw" "$T/m$opts"
		check "mount $opts: a flipped unit of a file written through the mount" \
			grep -qF "${BK[$long]}: $(tagmsg 0)" "$T/out"
		if [ -n "$opts" ]; then
			side=$(find "$T/m$opts" -name 'sc.*.name' | head -n1)
			check "a long name has a side file" test -f "$side"
			flip "$side" 60
			# the long name it belongs to, and the side file as a file
			expect $E_FAIL "3 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/m$opts"
			check "a side file whose unit fails its tag is reported" \
				grep -qF "side file $(basename "$side") of this long name is unusable" "$T/out"
			check "the side file itself is reported" grep -qF "$side: $(tagmsg 0)" "$T/out"
		fi
	done
fi

# Zero units by header flags (docs/format.md 10.2): 0 before hole tracking,
# 1 tracks holes and has none, 3 may hold holes.
new_volume "$T/z" --cipher=aes-gcm --block-size=$BS || finish
cp "$T/mk" "$T/mk.z"
Z=$T/z
# genz NAME FLAGS SIZE [HOLE...]
genz() {
	local name=$1 flags=$2 size=$3
	shift 3
	"${GF[@]}" --flags="$flags" "$T/mk.z" $BS "$Z/$name" "$size" "seed-$name" "$@" ||
		fail "gcm_file.py $name failed"
}
# zero_unit FILE N: stored unit N of FILE overwritten with zeros (it held other bytes)
zero_unit() {
	check "unit $2 of $(basename "$1") is not zeros already" \
		bash -c "! cmp -s <(dd if='$1' bs=1 skip=$((H + $2 * U)) count=$U status=none) <(head -c $U /dev/zero)"
	dd if=/dev/zero of="$1" bs=1 seek=$((H + $2 * U)) count=$U conv=notrunc status=none
}
genz old_sparse 0 $((4 * BS)) 1 2
genz old_zeroed 0 $((3 * BS + 100)); zero_unit "$Z/old_zeroed" 1
genz new_sparse 3 $((4 * BS)) 1 2
genz new_zeroed 3 $((3 * BS + 100)); zero_unit "$Z/new_zeroed" 0
genz new_units 1 $((3 * BS + 100))
cp "$Z/new_units" "$Z/zero0"; zero_unit "$Z/zero0" 0
genz zero_app 1 $((2 * BS))
head -c $U /dev/zero >>"$Z/zero_app"
expect $E_FAIL "2 problems" "$SC_BIN" fsck --passfile="$T/pw" "$Z"
zmsg() { printf 'unit %s (plaintext bytes from %s, stored at offset %s) is all zeros in a file that never had a hole' \
	"$1" $(($1 * BS)) $((H + $1 * U)); }
check "a zeroed unit 0 of a file without holes is reported" grep -qF "$Z/zero0: $(zmsg 0)" "$T/out"
check "an appended unit of zeros is reported" grep -qF "$Z/zero_app: $(zmsg 2)" "$T/out"
for good in old_sparse old_zeroed new_sparse new_zeroed new_units; do
	check "zero units: $good not reported" bash -c "! grep -qF '$Z/$good:' '$T/out'"
done
check "zero units: the holes of files that may hold them are counted" grep -q "; 6 holes" "$T/out"

# Files sharing a file id (#28 finding 5): an aes-gcm file's key and its
# units' associated data derive from the id in its in-file header, so a
# backing file copied with cp (its header inside it) lets a unit of either
# open in the other at the same index.  Each inode that shares the id of
# another is reported naming it; hard links are one inode, never reported;
# a damaged copy is reported for its damage only.
new_volume "$T/i" --cipher=aes-gcm --block-size=$BS || finish
cp "$T/mk" "$T/mk.i"
I=$T/i
geni() { "${GF[@]}" "$T/mk.i" $BS "$I/$1" "$2" "seed-$1" || fail "gcm_file.py $1 failed"; }
geni a $((3 * BS + 100))
geni b $((2 * BS))
geni solo $BS
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$I"
cp "$I/a" "$I/a_copy"				# a copy in the backing directory
head -c $H "$I/a" >"$I/a_hdr"			# its header alone: a unit of a appended opens
cp "$I/b" "$I/b2"; cp "$I/b" "$I/b3"		# three files, one id
cp "$I/b" "$I/b_bad"; flip "$I/b_bad" $((H + U + 100))
ln "$I/solo" "$I/solo_link"			# a hard link: one inode
snapshot_i() { (cd "$I" && find . -type f -exec md5sum {} + | sort); }
snapshot_i >"$T/i.before"
expect $E_FAIL "5 problems" "$SC_BIN" fsck --passfile="$T/pw" "$I"
IDMSG="has the same aes-gcm file id (so the same key) as"
for pair in a_copy:a a_hdr:a b2:b b3:b; do
	check "${pair%%:*} shares the id of ${pair#*:}, in one line" \
		grep -qF "$I/${pair%%:*}: $IDMSG $I/${pair#*:}: a copy made in the backing directory or a file put back" "$T/out"
done
check "the kept file of each group is not reported" bash -c "! grep -qE '^$I/(a|b): ' '$T/out'"
check "a hard link is not reported" bash -c "! grep -qE '^$I/solo(_link)?: ' '$T/out'"
check "a damaged copy is reported for its damage" grep -qF "$I/b_bad: $(tagmsg 1)" "$T/out"
check "a damaged copy is reported once" test "$(grep -c "^$I/b_bad: " "$T/out")" = 1
check "the files sharing an id are whole, not damaged" grep -qF "in 8 whole files, 1 file damaged" "$T/out"
snapshot_i >"$T/i.after"
check "fsck without --repair changed nothing" cmp -s "$T/i.before" "$T/i.after"
# --repair moves the damaged copy aside; the shared ids are the user's to resolve
expect $E_FAIL "5 problems, 1 file quarantined" "$SC_BIN" fsck --repair --passfile="$T/pw" "$I"
check "--repair leaves the copies in place" test -f "$I/a_copy" -a -f "$I/b2" -a -f "$I/b3"
# the remedy the line gives: a copy through the mount gets an id of its own
if [ -c /dev/fuse ]; then
	mkdir "$T/imnt"
	sc_mount_fg "$I" "$T/imnt" --passfile="$T/pw" || finish
	cp "$T/imnt/a_copy" "$T/imnt/a_copy.new" && mv "$T/imnt/a_copy.new" "$T/imnt/a_copy"
	rm "$T/imnt/a_hdr" "$T/imnt/b2"
	cp "$T/imnt/b3" "$T/imnt/b3.new" && mv "$T/imnt/b3.new" "$T/imnt/b3"
	cmp -s "$T/imnt/a" "$T/imnt/a_copy" || fail "a_copy lost its contents in the copy"
	sc_umount "$T/imnt"
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$I"
fi

# With encrypted names, the line names both files by their paths in the
# mount: b's backing file copied over a's backing file.
if [ -c /dev/fuse ]; then
	new_volume "$T/in" --cipher=aes-gcm --encrypt-names || finish
	mkdir "$T/inmnt"
	sc_mount_fg "$T/in" "$T/inmnt" --passfile="$T/pw" || finish
	mkdir "$T/inmnt/dir"
	head -c 10000 /dev/urandom >"$T/inmnt/dir/one"
	head -c 20000 /dev/urandom >"$T/inmnt/two"
	backing_map "$T/inmnt" "$T/in" dir/one two
	sc_umount "$T/inmnt"
	cp "${BK[dir/one]}" "${BK[two]}"
	expect $E_FAIL "1 problem" "$SC_BIN" fsck --passfile="$T/pw" "$T/in"
	check "names: one line for the pair" test "$(grep -cF "$IDMSG" "$T/out")" = 1
	idline=$(grep -F "$IDMSG" "$T/out")
	for p in dir/one two; do
		check "names: the line names /$p in the mount" grep -qF "(in the mount: /$p)" <<<"$idline"
	done
fi

# the help says what is checked on aes-gcm
expect $E_OK "every unit's authentication tag" "$SC_BIN" fsck --help
check "--help names --verbose" grep -qF -- "--verbose" "$T/out"

finish
