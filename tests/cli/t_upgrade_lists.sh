#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# stackcrypt upgrade of an integrity volume made without listing records
# (feature 0x10 without 0x100: init --integrity --no-dir-lists, as every
# integrity volume made before 0x100), docs/format.md 11.12: every
# directory's record (sc.list, 11.7) written in place through the
# volume's layers, nothing copied, then 0x100 in the config.  The tree:
# nested directories, an empty one, files, symlinks (one with a long
# target), hard links across directories, long names, a fifo.  After the
# upgrade: the config has 0x100 and not the mark 0x200, info says so, fsck
# is clean, every backing file that was there is there unchanged (but the
# config and the crash journal), a mount lists everything and reads it
# back byte for byte, and its daemon logs no warning or error; the
# listing checks fire (an entry removed behind the mount: EIO, one log
# line, fsck exit 1).  A volume whose last mount was killed -9 during an
# append is upgraded, and the next mount accepts the file as found with
# every byte.  Refusals, one line each, nothing changed: a
# mounted volume, one with listing records already, --masterkey on a
# config of format 3 (on format 4 it does: a run started with a key file
# is finished with it).  A kill -9 at
# every step (SC_REKEY_FAULT=N: the mark, each directory; no timing):
# while the config carries 0x200 a mount is refused in one line, and fsck,
# rekey, passwd and key add too; a second run finishes it,
# also after a record the first run wrote was damaged, cut to nothing or
# removed (what a power cut can leave), or another directory's was copied
# over it.
#
#   t_upgrade_lists.sh [KIND]
# KIND integrity (the default): a volume of 0x1e, 0x11e after.  unit-tree:
# the same with the unit tree (init --integrity --unit-tree
# --no-dir-lists, as tree volumes made before the two went together):
# 0x3e, 0x13e after, what init --integrity --unit-tree makes; each record
# is then a TREE file whose root its settle commits (format.md 11.7, "With
# the unit tree"), and the whole scenario runs again on it.
. "$(dirname "$0")/lib.sh"

KIND=${1:-integrity}
case $KIND in
integrity) TREE=() F=0x1e ;;
unit-tree) TREE=(--unit-tree) F=0x3e ;;
*) echo "t_upgrade_lists.sh: unknown kind $KIND (integrity, unit-tree)" >&2; exit 2 ;;
esac
# the features before, while marked (0x200) and after (0x100)
F_MARK=$(printf '0x%x' $((F | 0x200)))
F_DONE=$(printf '0x%x' $((F | 0x100)))

SD=$XDG_STATE_HOME/stackcrypt
mkdir -p "$T/m" "$T/p"
features() { sed -n 's/^features = //p' "$1/.stackcrypt.conf"; }
backing() { "$SC_BIN" path --unlock --passfile="$T/pw" "$T/v" "$1" 2>/dev/null; }
# snapshot DIR: every entry's path, type, mode, size, mtime, links and
# target, then every regular file's checksum
snapshot() {
	(cd "$1" && find . -mindepth 1 -printf '%p %y %m %s %T@ %n %l\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}
# backing_sums DIR: the checksum of every backing file but the config, the
# crash journal (a run of the layers writes it) and the listing records
backing_sums() {
	(cd "$1" && find . -type f ! -name .stackcrypt.conf ! -name sc.journal ! -name sc.list \
		-print0 | sort -z | xargs -0 sha256sum)
}
# no_notice WHAT: the last mount's daemon logged no warning or error
no_notice() {
	check "$1: the daemon logged no warning or error: $(cat "$T/daemon.log")" \
		bash -c "! grep -qi -e error -e warning '$T/daemon.log'"
}

# ---- refusals: one line, nothing changed ----
new_volume "$T/lists" --cipher=aes-gcm --encrypt-names --integrity "${TREE[@]}" || finish
cp "$T/lists/.stackcrypt.conf" "$T/conf.before"
expect $E_FAIL "with directory listing records (feature 0x100): nothing to upgrade" \
	"$SC_BIN" upgrade --passfile="$T/pw" "$T/lists"
check "listing records already: one line: $(cat "$T/out")" test "$(grep -vc 'warning:' "$T/out")" = 1
check "listing records already: the config unchanged" \
	cmp -s "$T/conf.before" "$T/lists/.stackcrypt.conf"
rm -rf "$T/lists" "$SD"

# ---- the volume without listing records, filled through a mount ----
new_volume "$T/v" --cipher=aes-gcm --encrypt-names --integrity "${TREE[@]}" --no-dir-lists ||
	finish
check "--no-dir-lists makes $F: $(features "$T/v")" test "$(features "$T/v")" = $F
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
M=$T/m
LONG=$(printf 'l%.0s' $(seq 230))
mkdir -p "$M/a/b/c/d" "$M/$LONG.d/sub" "$M/empty"
head -c 70000 /dev/urandom >"$M/a/f1"
head -c 5000 /dev/urandom >"$M/a/b/c/d/deep"
head -c 3000 /dev/urandom >"$M/$LONG.d/sub/in"
head -c 4097 /dev/urandom >"$M/$LONG"
echo top >"$M/top"
ln -s a/b/c/d/deep "$M/link"
ln -s "$(printf 't%.0s' $(seq 900))/x" "$M/longlink"
ln "$M/a/f1" "$M/a/b/hard1"
ln "$M/a/f1" "$M/$LONG.d/hard2"
mkfifo "$M/a/fifo"
for i in $(seq 1 30); do head -c $((i * 131)) /dev/urandom >"$M/a/b/many$i"; done
# the directories' times once their entries are made, which the upgrade keeps
touch -d '2001-02-03 04:05:06' "$M/a" "$M/a/b" "$M/a/b/c/d" "$M/$LONG.d/sub" "$M/empty"
snapshot "$M" >"$T/want"
sc_umount "$M"
no_notice "the fill"
check "no listing record yet" test -z "$(find "$T/v" -name sc.list)"
backing_sums "$T/v" >"$T/backing.want"
cp -a "$T/v" "$T/pristine"
cp -a "$SD" "$T/sd0"

sc_mount_fg "$T/v" "$M" --passfile="$T/pw" || finish
expect $E_BACKING "is mounted" "$SC_BIN" upgrade --passfile="$T/pw" "$T/v"
sc_umount "$M"
check "refused while mounted: the config unchanged: $(features "$T/v")" \
	test "$(features "$T/v")" = $F
# a config of format 3 (init's default) seals its features with its one slot's secret
expect $E_SECRET "not with the master key" "$SC_BIN" upgrade --masterkey="$T/mk" "$T/v"
check "--masterkey on format 3: the config unchanged: $(features "$T/v")" \
	test "$(features "$T/v")" = $F

# upgraded WHAT [nomount]: the checks that follow every finished upgrade
upgraded() {
	check "$1: the config has 0x100, not 0x200: $(features "$T/v")" \
		test "$(features "$T/v")" = $F_DONE
	expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
	backing_sums "$T/v" >"$T/backing.got"
	check "$1: every backing file as it was: $(diff "$T/backing.want" "$T/backing.got" | head -3 | tr '\n' ' ')" \
		cmp -s "$T/backing.want" "$T/backing.got"
	check "$1: a record in each directory that has entries: $(find "$T/v" -name sc.list | wc -l)" \
		test "$(find "$T/v" -name sc.list | wc -l)" = 7
	[ "${2:-}" = nomount ] && return
	sc_mount_fg "$T/v" "$M" --passfile="$T/pw" || return
	check "$1: every directory lists" bash -c "find '$M' -type d -exec ls -f {} + >/dev/null"
	snapshot "$M" >"$T/got"
	check "$1: entries and contents as before: $(diff "$T/want" "$T/got" | head -3 | tr '\n' ' ')" \
		cmp -s "$T/want" "$T/got"
	sc_umount "$M"
	no_notice "$1"
}

# ---- the upgrade ----
expect $E_OK "has directory listing records now (feature 0x100): each of its 8 directories" \
	"$SC_BIN" upgrade --passfile="$T/pw" "$T/v"
check "the upgrade says one line: $(cat "$T/out")" test "$(grep -vc 'warning:' "$T/out")" = 1
upgraded "upgraded"
expect $E_OK "directories' listings and versions" "$SC_BIN" info "$T/v"
check "info shows features $F_DONE: $(cat "$T/out")" grep -q "^features: *$F_DONE " "$T/out"
expect $E_FAIL "nothing to upgrade" "$SC_BIN" upgrade --passfile="$T/pw" "$T/v"

# ---- the listing checks fire on the upgraded volume ----
B=$(backing /a/b) || fail "no backing path of /a/b"
rm "$T/v/$(backing /a/b/many7)"
sc_mount_fg "$T/v" "$M" --passfile="$T/pw" || finish
check "an entry removed behind the mount: the listing of /a/b is EIO" \
	bash -c "! ls '$M/a/b' >/dev/null 2>&1"
check "and /a still lists" ls "$M/a"
sc_umount "$M"
check "one log line naming /a/b: $(cat "$T/daemon.log")" \
	test "$(grep -c "directory $M/a/b: its entries differ from its listing record (31 found, 32 recorded)" "$T/daemon.log")" = 1
run "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "fsck exits 1: $(cat "$T/out")" [ "$RC" = 1 ]
check "fsck names the directory: $(cat "$T/out")" \
	grep -q -- "$B/sc.list: .*entries differ from its listing record.*(in the mount: /a/b)" "$T/out"

# ---- the last mount killed -9 while a file was appended to ----
# The upgrade opens no file: the journal's dirty entry of the append is
# carried (its layers open the journal as a mount does), and the next mount
# accepts the file as found with every byte written, as it would have
# without the upgrade.
rm -rf "$T/v" "$SD"
cp -a "$T/pristine" "$T/v" && cp -a "$T/sd0" "$SD"
append_killed "$T/v" a/b/c/d/deep
expect $E_OK "has directory listing records now" "$SC_BIN" upgrade --passfile="$T/pw" "$T/v"
expect $E_OK "was being written when the mount stopped" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "killed while appending: fsck finds 0 problems: $(cat "$T/out")" grep -q " 0 problems" "$T/out"
sc_mount_fg "$T/v" "$M" --passfile="$T/pw" || finish
check "killed while appending: the file holds every byte written" \
	cmp -s "$M/a/b/c/d/deep" "$T/ap.want"
check "killed while appending: every directory lists" \
	bash -c "find '$M' -type d -exec ls -f {} + >/dev/null"
sc_umount "$M"
check "killed while appending: accepted as found, nothing else logged: $(cat "$T/daemon.log")" \
	bash -c "grep -q 'deep: was being written when the mount stopped; accepted as found' '$T/daemon.log' &&
		! grep -v 'deep: was being written' '$T/daemon.log' | grep -qi -e error -e warning"

# ---- a config of format 4 (key slots): any secret, the master key too ----
# started with a key file, killed after the first directory, finished with
# the master key (format 4 seals its features with it)
rm -rf "$T/v" "$SD"
cp -a "$T/pristine" "$T/v" && cp -a "$T/sd0" "$SD"
new_keyfile "$T/key"
expect $E_OK "added slot 1" "$SC_BIN" key add --passfile="$T/pw" --new-keyfile="$T/key" "$T/v"
check "key add makes format 4" grep -qx 'format = 4' "$T/v/.stackcrypt.conf"
run env SC_REKEY_FAULT=2 "$SC_BIN" upgrade --keyfile="$T/key" "$T/v"
check "format 4: killed at step 2 with 0x200 set: $RC $(features "$T/v")" \
	test "$RC:$(features "$T/v")" = 137:$F_MARK
expect $E_OK "has directory listing records now" "$SC_BIN" upgrade --masterkey="$T/mk" "$T/v"
check "format 4: $F_DONE: $(features "$T/v")" test "$(features "$T/v")" = $F_DONE
expect $E_OK " 0 problems" "$SC_BIN" fsck --keyfile="$T/key" "$T/v"
expect $E_OK " 0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"

# ---- a kill -9 at every step, then a second run finishes it ----
# killed_at N (lib.sh): $T/pristine upgraded in $T/v, killed at step N
n=1
while killed_at $n; do
	check "killed at step $n: the config carries 0x200: $(features "$T/v")" \
		test "$(features "$T/v")" = $F_MARK
	expect $E_FAIL "an upgrade of $T/v to directory listing records is under way (stackcrypt upgrade was stopped): run 'stackcrypt upgrade $T/v' to finish it" \
		"$SC_BIN" mount -f --passfile="$T/pw" "$T/v" "$M"
	check "killed at step $n: the mount refused in one line: $(cat "$T/out")" \
		test "$(grep -vc 'warning:' "$T/out")" = 1
	check "killed at step $n: no mount came up" bash -c "! grep -q ' $M ' /proc/mounts"
	expect $E_FAIL "stackcrypt upgrade was stopped" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
	expect $E_OK "upgrade:     under way, stopped (directories' listing records)" \
		"$SC_BIN" info "$T/v"
	if [ "$n" = 1 ]; then
		new_keyfile "$T/key"
		for c in "rekey --passfile=$T/pw $T/v" "passwd --passfile=$T/pw --new-keyfile=$T/key $T/v" \
			"key add --passfile=$T/pw --new-keyfile=$T/key $T/v"; do
			# shellcheck disable=SC2086  # a command line
			expect $E_FAIL "run 'stackcrypt upgrade $T/v' to finish it" "$SC_BIN" $c
			check "under way: $c refused in one line: $(cat "$T/out")" \
				test "$(grep -vc 'warning:' "$T/out")" = 1
		done
	fi
	# what a power cut can leave of the records written (one damaged, cut
	# to nothing or removed), or a writer of the backing store (another
	# directory's copied over one), in turn
	mapfile -t recs < <(find "$T/v" -name sc.list | sort)
	if [ "${#recs[@]}" -gt 0 ]; then
		case $((n % 4)) in
		0) flip "${recs[0]}" 200 ;;
		1) : >"${recs[0]}" ;;
		2)	# its directory's times as the lost create leaves them
			touch -r "$(dirname "${recs[0]}")" "$T/stamp"
			rm "${recs[0]}"
			touch -r "$T/stamp" "$(dirname "${recs[0]}")" ;;
		3) [ "${#recs[@]}" -lt 2 ] || cp "${recs[1]}" "${recs[0]}" ;;
		esac
	fi
	expect $E_OK "going on with the upgrade of $T/v that was stopped" \
		"$SC_BIN" upgrade --progress --passfile="$T/pw" "$T/v"
	check "killed at step $n: --progress counts the directories: $(tr '\r' '\n' <"$T/out" | tail -3)" \
		grep -q "8 of about 8 directories" "$T/out"
	# the tree read back through a mount at every other step; config, fsck
	# and backing at each
	if ((n % 2 == 0)); then
		upgraded "killed at step $n"
	else
		upgraded "killed at step $n" nomount
	fi
	n=$((n + 1))
done
check "the kill loop reached the steps (got to $n): the mark, 8 directories" \
	test "$n" = 10
upgraded "the run with no fault"

finish
