#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The per-client freshness record of integrity volumes (docs/format.md
# 11.9): a file put back from an older copy of its backing file (after
# it was rewritten, deleted, or replaced by a rename over it) is EIO at
# its open, with one log line naming it and the cause, and fsck exits 1
# naming it; mount --allow-rollback (or fsck --allow-rollback) accepts it,
# logged, and a later mount reads it; a rename onto itself changes
# nothing.  A first mount with an empty state directory accepts the
# volume as it is (a notice).  A whole volume put back from a copy of the
# backing directory is refused at mount (its crash journal is of an
# earlier run of this client) and by fsck.  A state file whose last
# segment is cut short is read up to it (a warning) and still refuses
# what it recorded before; one with a byte of its header flipped is
# refused with a one-line error.  The state directory is 0700, the file
# 0600.  A default (non-integrity) volume keeps no state.
. "$(dirname "$0")/lib.sh"

# rnd FILE N: N random bytes (compared contents are long: no match by chance)
rnd() { head -c "$2" /dev/urandom >"$1"; }

# daemon_errs: the daemon's lines besides "mounted" and those matching $1 (a regex)
daemon_errs() { grep -v -e 'mounted ' -e "$1" "$T/daemon.log"; }

SD="$T/sd"
V="$T/v"
M="$T/m"
mkdir -p "$M"
new_volume "$V" --cipher=aes-gcm --encrypt-names --integrity || finish
mnt() { sc_mount_fg "$V" "$M" --passfile="$T/pw" --state-dir="$SD" "$@"; }
# reads_as FILE WANT WHAT: a mount of $V (options after WHAT) reads $M/FILE as WANT
reads_as() {
	local f=$1 want=$2 what=$3
	shift 3
	mnt "$@" || finish
	CHECKS=$((CHECKS + 1))
	cmp -s "$M/$f" "$want" || fail "$what: $f does not read as $want"
	sc_umount "$M"
}

# --- first mount, empty state directory: trust on first use -----------------
mnt || finish
rnd "$T/a1" 9000
cp "$T/a1" "$M/a" || fail "write a"
rnd "$T/g1" 5000
cp "$T/g1" "$M/g" || fail "write g"
rnd "$T/h1" 6000
cp "$T/h1" "$M/h" || fail "write h"
rnd "$T/k1" 3000
cp "$T/k1" "$M/k" || fail "write k"
sc_umount "$M"
check "first mount: no notice: $(cat "$T/daemon.log")" \
	grep -q 'notice: no freshness record for this volume on this machine' "$T/daemon.log"
ST=$(ls "$SD"/*.state)
check "state dir mode $(stat -c %a "$SD"), want 700" test "$(stat -c %a "$SD")" = 700
check "state file mode $(stat -c %a "$ST"), want 600" test "$(stat -c %a "$ST")" = 600
check "state file named by the volume's uuid: $ST" \
	grep -q "uuid = $(basename "$ST" .state)" "$V/.stackcrypt.conf"

# a's backing file aside, and the whole volume
mnt || finish
backing_map "$M" "$V" a g h
sc_umount "$M"
cp -a "${BK[a]}" "$T/a.old"
cp -a "${BK[g]}" "$T/g.old"
cp -a "${BK[h]}" "$T/h.old"
cp -a "$V" "$T/vold"

# --- a written again, its old backing file put back: refused ---------------
mnt || finish
rnd "$T/a2" 12000
cp "$T/a2" "$M/a" || fail "write a again"
rm "$M/g" || fail "rm g"
# h saved as editors save: a new file renamed over it
rnd "$T/h2" 6000
cp "$T/h2" "$M/h.new" && mv "$M/h.new" "$M/h" || fail "rename over h"
# k renamed onto itself: nothing happens, it stays readable
python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[1])' "$M/k" || fail "rename k onto itself"
sc_umount "$M"
cp "${BK[a]}" "$T/a.new"
cp "$T/a.old" "${BK[a]}"
cp -a "$T/g.old" "${BK[g]}"	# a deleted file put back
cp "$T/h.old" "${BK[h]}"	# a file replaced by a rename put back
mnt || finish
CHECKS=$((CHECKS + 1))
cmp -s "$M/k" "$T/k1" || fail "k renamed onto itself does not read"
for f in a g h; do
	CHECKS=$((CHECKS + 1))
	cat "$M/$f" >/dev/null 2>"$T/err" && fail "$f put back from an older copy reads"
	grep -q 'Input/output error' "$T/err" || fail "$f rolled back: want EIO, got: $(cat "$T/err")"
	cat "$M/$f" >/dev/null 2>&1
done
sc_umount "$M"
check "want one log line naming a and the cause: $(cat "$T/daemon.log")" \
	test "$(grep -c '/m/a: was rolled back: gen [0-9]* < [0-9]*, seen \(deleted or emptied \)\?on this machine' "$T/daemon.log")" = 1
for f in g h; do
	check "want one log line naming $f and the cause: $(cat "$T/daemon.log")" \
		test "$(grep -c "/m/$f: was rolled back: gen [0-9]* < [0-9]*, seen deleted or emptied on this machine" "$T/daemon.log")" = 1
done
CHECKS=$((CHECKS + 1))
daemon_errs 'was rolled back' | grep -q . && fail "other daemon messages: $(cat "$T/daemon.log")"
run "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$SD" "$V"
CHECKS=$((CHECKS + 1))
[ "$RC" = 1 ] && grep -q ": was rolled back: gen [0-9]* < [0-9]*, seen .*on this machine .*(in the mount: /a)" "$T/out" &&
	grep -q ": was rolled back: gen [0-9]* < [0-9]*, seen deleted or emptied on this machine .*(in the mount: /g)" "$T/out" &&
	grep -q ": was rolled back: gen [0-9]* < [0-9]*, seen deleted or emptied on this machine .*(in the mount: /h)" "$T/out" ||
	fail "fsck of the rolled-back files: exit $RC, want 1 naming a, g and h: $(cat "$T/out")"

# --- accepted by --allow-rollback, then read by a plain mount ----------------
reads_as a "$T/a1" "--allow-rollback of a" --allow-rollback
check "want the acceptance logged: $(cat "$T/daemon.log")" \
	grep -q "warning: .*/m/a: was rolled back (gen [0-9]* < [0-9]*, seen on this machine); accepted (--allow-rollback)" "$T/daemon.log"
check "the earlier refusal is recalled: $(cat "$T/daemon.log")" \
	grep -q "an earlier run refused a roll-back of this volume; --allow-rollback accepts" "$T/daemon.log"
# g and h, which that mount did not open, accepted by fsck
expect $E_OK "(in the mount: /g)" "$SC_BIN" fsck --allow-rollback --passfile="$T/pw" --state-dir="$SD" "$V"
check "fsck --allow-rollback does not say it accepts g: $(cat "$T/out")" \
	grep -q "was rolled back (gen [0-9]* < [0-9]*, seen on this machine); accepted (--allow-rollback)" "$T/out"
reads_as a "$T/a1" "after --allow-rollback"
reads_as g "$T/g1" "after fsck --allow-rollback"
reads_as h "$T/h1" "after fsck --allow-rollback"
CHECKS=$((CHECKS + 1))
grep -v 'mounted ' "$T/daemon.log" | grep -q . && fail "daemon messages after the acceptance: $(cat "$T/daemon.log")"
expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$SD" "$V"

# --- a whole volume put back from a copy of the backing directory ------------
mnt || finish
rnd "$T/a3" 7000
cp "$T/a3" "$M/a" || fail "write a a third time"
sc_umount "$M"
rm -rf "$V.now" && mv "$V" "$V.now" && cp -a "$T/vold" "$V"
expect $E_FAIL "refused: the volume was rolled back" \
	"$SC_BIN" mount -f --passfile="$T/pw" --state-dir="$SD" "$V" "$M"
CHECKS=$((CHECKS + 1))
grep -q "the volume is older than this client last saw it: its crash journal was last written by an earlier run of this client" "$T/out" ||
	fail "the refusal does not say why: $(cat "$T/out")"
is_mounted "$M" && fail "mounted a rolled-back volume"
run "$SC_BIN" fsck --passfile="$T/pw" --state-dir="$SD" "$V"
CHECKS=$((CHECKS + 1))
[ "$RC" = 1 ] && grep -q "sc.journal: the volume is older than this client last saw it" "$T/out" &&
	grep -q ": was rolled back: .*(in the mount: /a)" "$T/out" ||
	fail "fsck of the rolled-back volume: exit $RC, want 1 naming the volume and a: $(cat "$T/out")"
# a first mount elsewhere (an empty state directory) accepts it as it is
cp -a "$T/vold" "$T/v2"
sc_mount_fg "$T/v2" "$M" --passfile="$T/pw" --state-dir="$T/sd.empty" || finish
CHECKS=$((CHECKS + 1))
cmp -s "$M/a" "$T/a1" || fail "first mount of the copy: a does not read"
sc_umount "$M"
CHECKS=$((CHECKS + 1))
daemon_errs 'notice: no freshness record' | grep -q . && fail "first mount of the copy: $(cat "$T/daemon.log")"
# accepted on purpose on this client, then mounted as usual
reads_as a "$T/a1" "--allow-rollback of the volume" --allow-rollback
check "want the volume's acceptance logged: $(cat "$T/daemon.log")" \
	grep -q "the volume is older than this client last saw it .*accepted (--allow-rollback)" "$T/daemon.log"
mnt || finish
sc_umount "$M"
CHECKS=$((CHECKS + 1))
grep -v 'mounted ' "$T/daemon.log" | grep -q . && fail "daemon messages after the volume's acceptance: $(cat "$T/daemon.log")"

# --- a torn append: the last segment cut short ---------------------------------
# a written again (recorded in the compacted record); then the state file
# while mounted (the record and this run's segment) copied, cut inside its
# last segment and put back with a's older backing file.
cp "${BK[a]}" "$T/a.cur"
mnt || finish
rnd "$T/a4" 5000
cp "$T/a4" "$M/a" || fail "write a a fourth time"
sc_umount "$M"
mnt || finish
cp "$ST" "$T/st.mid"
sc_umount "$M"
truncate -s -7 "$T/st.mid"
cp "$T/st.mid" "$ST"
cp "$T/a.cur" "${BK[a]}"
mnt || finish
CHECKS=$((CHECKS + 1))
cat "$M/a" >/dev/null 2>&1 && fail "a rolled back reads after the torn tail"
sc_umount "$M"
check "want the torn tail logged: $(cat "$T/daemon.log")" \
	grep -q "warning: $ST: the last [0-9]* bytes are a torn append (a crash while it was written), dropped" "$T/daemon.log"
check "the record before the torn tail still refuses a: $(cat "$T/daemon.log")" \
	grep -q '/m/a: was rolled back' "$T/daemon.log"
CHECKS=$((CHECKS + 1))
daemon_errs 'torn append\|was rolled back' | grep -q . && fail "other daemon messages: $(cat "$T/daemon.log")"

# --- a flipped byte in the header: refused in one line -----------------------
cp "$ST" "$T/st.good"
flip "$ST" 20
expect $E_FAIL "freshness record damaged (its header fails its MAC" \
	"$SC_BIN" mount -f --passfile="$T/pw" --state-dir="$SD" "$V" "$M"
is_mounted "$M" && fail "mounted with a damaged freshness record"
CHECKS=$((CHECKS + 1))
[ "$(grep -c . "$T/out")" = 1 ] || fail "want one line: $(cat "$T/out")"
expect $E_FAIL "freshness record damaged (its header fails its MAC" \
	"$SC_BIN" fsck --passfile="$T/pw" --state-dir="$SD" "$V"
cp "$T/st.good" "$ST"

# --- a default volume keeps no state -----------------------------------------
new_volume "$T/plain" --cipher=aes-gcm --encrypt-names || finish
sc_mount_fg "$T/plain" "$M" --passfile="$T/pw" || finish
cp "$T/a1" "$M/a" || fail "write a on the default volume"
sc_umount "$M"
CHECKS=$((CHECKS + 1))
ls "$XDG_STATE_HOME"/stackcrypt/*.state >/dev/null 2>&1 &&
	fail "a default volume made a state file: $(ls "$XDG_STATE_HOME"/stackcrypt)"
CHECKS=$((CHECKS + 1))
grep -v 'mounted ' "$T/daemon.log" | grep -q . && fail "default volume: daemon messages: $(cat "$T/daemon.log")"

finish
