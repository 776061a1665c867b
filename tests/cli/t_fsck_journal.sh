#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck and the mount on what a kill -9 of an aes-gcm mount leaves behind
# (docs/format.md 10.10): a unit torn by a rewrite (new head, old tail) and
# a file cut inside an appended unit, each with the crash journal's record
# of that write, composed offline by gcm_journal.py from the format
# document (no mount, no test hook).  fsck reports them as torn by a crash
# and repairable, not as damage (exit 0), and changes nothing; --repair
# restores the rewrite's new unit byte for byte and cuts the append back
# to the unit's start; a second fsck is clean; the record of a file deleted
# since is dropped by --repair.  A record whose MAC fails
# is ignored: the torn unit is damage again (exit 1).  #28 finding 4: a
# resolved journal put back with a pinned bit set (XOR) and the unit
# damaged is a problem and repairs nothing; an older build's (version 1)
# journal is named and applied by --repair.  And a mount's first
# open repairs the same state itself: the file reads back without EIO,
# the unit holds its new content, and the daemon logs a warning, not an
# error; a torn append is cut back by the file's first lookup, so stat,
# read and append through the mount see the repaired size at once.
. "$(dirname "$0")/lib.sh"

BS=4096
U=$((BS + 32))
H=40
GF=("python3" "$CLI_DIR/gcm_file.py")
GJ=("python3" "$CLI_DIR/gcm_journal.py")
new_volume "$T/v" --cipher=aes-gcm --block-size=$BS || finish
cp "$T/mk" "$T/mk.v"
V=$T/v

# torn MODE: a fresh file "f" of 4 units torn by MODE (unit 2 rewritten, or units 4-5 appended)
torn() {
	rm -f "$V/f" "$V/sc.journal"
	"${GF[@]}" "$T/mk.v" $BS "$V/f" $((4 * BS)) seed-f || fail "gcm_file.py failed"
	case $1 in
	rewrite) "${GJ[@]}" "$T/mk.v" $BS "$V" f 2 rewrite "$T/new" ;;
	append) "${GJ[@]}" "$T/mk.v" $BS "$V" f 4 append "$T/new" ;;
	esac || fail "gcm_journal.py $1 failed"
}

# A torn rewrite: reported, repairable, not damage; --repair restores the new unit.
torn rewrite
cp "$V/f" "$T/before"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
check "fsck names the torn unit" \
	grep -qF "$V/f: unit 2 was torn by a crash of the mount; the journal holds its new content: --repair (or the next mount) restores it" "$T/out"
check "fsck says it is not damage" grep -qF "1 unit torn by a crash of the mount, not damage" "$T/out"
check "the status line counts the restore" grep -qF "0 problems; 1 unit to restore from the crash journal" "$T/out"
check "fsck without --repair changed nothing" cmp -s "$T/before" "$V/f"
expect $E_OK "0 problems" "$SC_BIN" fsck --repair --passfile="$T/pw" "$V"
check "--repair says what it did" grep -qF "$V/f: unit 2 was torn by a crash of the mount; the journal holds its new content: restored" "$T/out"
check "the status line counts the restore" grep -qF "; 1 unit restored from the crash journal" "$T/out"
check "the unit holds the record's sealed unit" \
	cmp -s "$T/new" <(dd if="$V/f" bs=1 skip=$((H + 2 * U)) count=$U status=none)
check "the file keeps its size" test "$(stat -c %s "$V/f")" -eq $((H + 4 * U))
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
check "a second fsck has nothing torn" bash -c "! grep -q torn '$T/out'"

# A torn append: the file is cut back to the appended unit's start.
torn append
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
check "fsck names the cut unit" \
	grep -qF "$V/f: unit 4 was torn by a crash of the mount; the journal says it was being appended: --repair (or the next mount) cuts it off" "$T/out"
expect $E_OK "0 problems" "$SC_BIN" fsck --repair --passfile="$T/pw" "$V"
check "the file is cut back to unit 4's start" test "$(stat -c %s "$V/f")" -eq $((H + 4 * U))
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"

# A record whose MAC fails repairs nothing: the torn unit is damage.
torn rewrite
flip "$V/sc.journal" $((4096 + 72))	# the record's old_stored field, under its MAC
expect $E_FAIL "1 problem" "$SC_BIN" fsck --passfile="$T/pw" "$V"
check "the unit of a forged record is damage" grep -qF "$V/f: unit 2 (plaintext bytes from" "$T/out"

# #28 finding 4: the journal of a resolved crash put back, a pinned bit set
# (XOR) and the unit damaged (XOR): the header's MAC refuses the journal,
# so the unit is damage, not a crash to roll back; --repair moves it aside.
torn rewrite
expect $E_OK "0 problems" "$SC_BIN" fsck --repair --passfile="$T/pw" "$V"
cp "$V/sc.journal" "$T/old.journal"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
cp "$T/old.journal" "$V/sc.journal"
flip "$V/sc.journal" 48		# pinned: bit 0, slot 0 holds the resolved record
flip "$V/f" $((H + 2 * U + 100))
expect $E_FAIL "2 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
check "fsck names the stale journal" grep -qF "$V/sc.journal: the crash journal's header fails its MAC" "$T/out"
check "the unit is damage, not torn" grep -qF "$V/f: unit 2 (plaintext bytes from" "$T/out"
check "nothing is called torn" bash -c "! grep -q torn '$T/out'"
expect $E_FAIL "" "$SC_BIN" fsck --repair --passfile="$T/pw" "$V"
check "--repair moved the stale journal aside" test -e "$V/sc.journal.stackcrypt-quarantine-1"
check "--repair restored nothing" bash -c "! grep -q restored '$T/out'"
rm -f "$V"/*.stackcrypt-quarantine-*

# An older build's (version 1) journal with a crash record: fsck says so
# and --repair applies it, leaving a version 2 journal.
torn rewrite
"${GJ[@]}" "$T/mk.v" $BS "$V" f 2 rewrite "$T/new" v1 || fail "gcm_journal.py v1 failed"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
check "fsck names the version 1 journal" grep -qF "$V/sc.journal: an older build's journal (version 1) holds crash records" "$T/out"
expect $E_OK "0 problems" "$SC_BIN" fsck --repair --passfile="$T/pw" "$V"
check "--repair applies its record" \
	cmp -s "$T/new" <(dd if="$V/f" bs=1 skip=$((H + 2 * U)) count=$U status=none)
check "--repair leaves a version 2 journal" \
	test "$(od -An -tu4 -j8 -N4 "$V/sc.journal" | tr -d ' ')" = 2

# The record of a file deleted since: --repair drops it (its slot is free again).
torn rewrite
rm "$V/f"
expect $E_OK "0 problems" "$SC_BIN" fsck --repair --passfile="$T/pw" "$V"
check "--repair drops the records of a deleted file" \
	grep -qF "$V/sc.journal: dropped the crash records of files no longer in the volume" "$T/out"
check "no slot is pinned afterwards, and the journal is clean" test "$(python3 -c "
import struct, sys
h = open(sys.argv[1], 'rb').read(64)
print(struct.unpack_from('<I', h, 12)[0], struct.unpack_from('<Q', h, 48)[0])" "$V/sc.journal")" = "0 0"

# The mount's first open repairs the same state itself.
if [ -c /dev/fuse ]; then
	torn rewrite
	mkdir -p "$T/mnt"
	sc_mount_fg "$V" "$T/mnt" --passfile="$T/pw" || finish
	check "the torn file reads back whole" cmp -s <(head -c $((2 * BS)) "$T/mnt/f") \
		<(python3 -c "import random,sys; sys.stdout.buffer.write(random.Random('seed-f').randbytes($((4 * BS)))[:$((2 * BS))])")
	check "the torn unit reads its new content" \
		cmp -s <(dd if="$T/mnt/f" bs=$BS skip=2 count=1 status=none) <(head -c $BS /dev/zero | tr '\0' '\245')
	check "the journal is not in the mount's root" bash -c "! ls -a '$T/mnt' | grep -q journal"
	sc_umount "$T/mnt"
	check "the daemon logged the repair as a warning: $(cat "$T/daemon.log")" grep -qF "warning: $T/mnt/f: unit 2" "$T/daemon.log"
	check "the warning says what was restored" grep -qF "unit 2 was torn by a crash; its new content restored from the journal" "$T/daemon.log"
	check "the daemon logged no error" bash -c "! grep -qi error '$T/daemon.log'"
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"

	# A torn append, first seen by a stat: the size the lookup hands the
	# kernel (cached for attr_timeout, 30 s by default) is the repaired
	# one, before any open, and stays right after the open.
	torn append
	sc_mount_fg "$V" "$T/mnt" --passfile="$T/pw" || finish
	check "a stat before any open shows the cut-back size" \
		test "$(stat -c %s "$T/mnt/f")" -eq $((4 * BS))
	check "the file reads back 4 whole units" test "$(wc -c < "$T/mnt/f")" -eq $((4 * BS))
	check "a stat after the open shows the same size" \
		test "$(stat -c %s "$T/mnt/f")" -eq $((4 * BS))
	echo tail >> "$T/mnt/f"
	check "an append lands at the cut-back end" \
		test "$(tail -c 5 "$T/mnt/f")" = tail
	sc_umount "$T/mnt"
	check "the daemon logged the cut as a warning" grep -qF "cut back to its start" "$T/daemon.log"
	check "the daemon logged no error" bash -c "! grep -qi error '$T/daemon.log'"
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$V"
fi

finish
