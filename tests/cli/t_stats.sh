#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The io-stats translator (issue 15 item 6) on live mounts:
#  - -o stats=all on a crypt volume, a known workload (a directory, 3 files
#    of 10 x 4 KiB writes, read back with O_DIRECT 4 KiB reads, stat, a
#    refused rmdir, unlink, rmdir): `stackcrypt stats --json` shows the exact
#    counts and bytes at fuse>crypt and crypt>posix for the requests the
#    kernel sends one per system call (write-through writes, O_DIRECT reads,
#    create, open, mkdir, unlink, rmdir) and the error of the rmdir that
#    fails with ENOTEMPTY (the kernel answers unlink of a missing name
#    itself, so that error never reaches the daemon); lookup, getattr and
#    release are left alone (dentry cache, asynchronous release);
#  - the table form; -o stats (top only) and -o stats=posix label one layer;
#    the passthrough stack's boundary is fuse>posix;
#  - the stats names on the root cannot be set and reach no backing file;
#  - a mount without the option has no io-stats layer: `stackcrypt stats`
#    says so in one line, exit 1; so do a non-root path and a plain dir;
#  - bad -o stats values and -o stats,noxattr are refused before the secret.
# Daemons run in the foreground, are unmounted and waited for by PID, and
# must log nothing but the mounted line.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }

# The workload; every step checks its result.
cat >"$T/load.py" <<'PY'
import errno, mmap, os, sys
d = os.path.join(sys.argv[1], "d")
os.mkdir(d)
blk = bytes(range(256)) * 16
for i in range(3):
    fd = os.open(os.path.join(d, "f%d" % i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    for _ in range(10):
        assert os.write(fd, blk) == 4096
    os.close(fd)
buf = mmap.mmap(-1, 4096)		# page-aligned, as O_DIRECT wants
for i in range(3):
    fd = os.open(os.path.join(d, "f%d" % i), os.O_RDONLY | os.O_DIRECT)
    for _ in range(10):
        assert os.readv(fd, [buf]) == 4096 and bytes(buf) == blk
    os.close(fd)
    assert os.stat(os.path.join(d, "f%d" % i)).st_size == 40960
try:
    os.rmdir(d)
    sys.exit("rmdir of a non-empty directory succeeded")
except OSError as e:
    assert e.errno == errno.ENOTEMPTY, e
for i in range(3):
    os.unlink(os.path.join(d, "f%d" % i))
os.rmdir(d)
PY

# want JSON LABEL OP FIELD VALUE: that field of that layer's op is VALUE.
want() {
	local got
	got=$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
l = [x for x in j["layers"] if x["label"] == sys.argv[2]]
print(l[0]["ops"][sys.argv[3]][sys.argv[4]] if l else "no layer " + sys.argv[2])' "$@")
	check "$2 $3 $4 is $5 (got $got)" test "$got" = "$5"
}

# labels JSON: the layers' labels, space-separated, top first.
labels() {
	python3 -c 'import json, sys; print(*[x["label"] for x in json.load(open(sys.argv[1]))["layers"]])' "$1"
}

# log_clean: the daemon said it mounted and nothing else.
log_clean() {
	check "daemon logged only the mounted line: $(cat "$T/daemon.log")" \
		test "$(grep -vc '^stackcrypt: mounted ' "$T/daemon.log")" = 0
}

new_volume "$T/v" || finish
mkdir "$T/m" "$T/plain" "$T/pm"

# ---- refusals before anything is asked ------------------------------------
expect $E_USAGE "stats=bogus: 'bogus' is no boundary of this stack (top, all, or a layer: crypt, posix)" \
	"$SC_BIN" mount -o stats=bogus "$T/v" "$T/m"
expect $E_USAGE "'crypt' is no boundary of this stack (top, all, or a layer: posix)" \
	"$SC_BIN" mount --stack=passthrough -o stats=crypt "$T/plain" "$T/pm"
expect $E_USAGE "'' is no boundary" "$SC_BIN" mount -o stats=top: "$T/v" "$T/m"
expect $E_USAGE "-o stats and -o noxattr exclude each other" \
	"$SC_BIN" mount -o stats,noxattr "$T/v" "$T/m"
expect $E_USAGE "missing MOUNTPOINT" "$SC_BIN" stats
expect $E_USAGE "unknown option '--frob'" "$SC_BIN" stats --frob "$T/m"
expect $E_MOUNTPOINT "$T/nowhere: No such file or directory" "$SC_BIN" stats "$T/nowhere"
expect $E_FAIL "$T/plain: no io-stats here" "$SC_BIN" stats "$T/plain"
check "one line for a directory without stats" test "$(wc -l <"$T/out")" = 1

# ---- stats=all on the crypt stack: exact counts of a known load ------------
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o stats=all || finish
check "the workload runs" python3 "$T/load.py" "$T/m"
expect 0 "" "$SC_BIN" stats --json "$T/m"
cp "$T/out" "$T/all.json"
check "JSON parses" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/all.json"
check "two layers, top first (got $(labels "$T/all.json"))" \
	test "$(labels "$T/all.json")" = "fuse>crypt crypt>posix"
for l in 'fuse>crypt' 'crypt>posix'; do
	want "$T/all.json" "$l" mkdir count 1
	want "$T/all.json" "$l" create count 3
	want "$T/all.json" "$l" write count 30
	want "$T/all.json" "$l" write bytes 122880
	want "$T/all.json" "$l" write errors 0
	want "$T/all.json" "$l" write timed 30
	want "$T/all.json" "$l" open count 3
	want "$T/all.json" "$l" read count 30
	want "$T/all.json" "$l" read bytes 122880
	want "$T/all.json" "$l" unlink count 3
	want "$T/all.json" "$l" unlink errors 0
	want "$T/all.json" "$l" rmdir count 2
	want "$T/all.json" "$l" rmdir errors 1
	want "$T/all.json" "$l" rename count 0
done
# the crypt layer's own work, seen only below it: one header per new file
# (56 bytes each, docs/format.md)
want "$T/all.json" 'fuse>crypt' setxattr count 0
want "$T/all.json" 'crypt>posix' setxattr count 3
want "$T/all.json" 'crypt>posix' setxattr bytes 168
check "a latency was measured" python3 -c 'import json, sys
w = [x for x in json.load(open(sys.argv[1]))["layers"] if x["label"] == "fuse>crypt"][0]["ops"]["write"]
assert 0 < w["mean_us"] and w["mean_us"] <= w["p99_us"] * 1.125 + 1, w' "$T/all.json"

expect 0 "" "$SC_BIN" stats "$T/m"
check "table: a heading per layer" grep -qE '^crypt>posix \(up [0-9.]+ s\)$' "$T/out"
check "table: column heads" \
	grep -qE '^  operation +count +errors +bytes +mean us +p99 us$' "$T/out"
check "table: the writes" grep -qE '^  write +30 +0 +122880 +[0-9.]+ +[0-9.]+$' "$T/out"
check "table: the failed rmdir" grep -qE '^  rmdir +2 +1 +0 ' "$T/out"
check "table: no row for an operation never called" bash -c "! grep -qE '^  rename ' '$T/out'"

expect $E_FAIL "$T/m/sub: no io-stats here" bash -c "mkdir '$T/m/sub' && '$SC_BIN' stats '$T/m/sub'"
expect 1 "Operation not permitted" setfattr -n user.stackcrypt.stats -v x "$T/m"
expect 1 "Operation not permitted" setfattr -n 'user.stackcrypt.stats.fuse>crypt' -v x "$T/m"
check "no stats name reached the backing root" \
	bash -c "! getfattr -d -m - '$T/v' 2>/dev/null | grep -q stats"
sc_umount "$T/m"
log_clean

# ---- one layer: -o stats is the top, -o stats=posix the one above posix ----
for opt in 'stats|fuse>crypt' 'stats=posix|crypt>posix' 'stats=top:posix|fuse>crypt crypt>posix'; do
	sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o "${opt%%|*}" || finish
	expect 0 "" "$SC_BIN" stats --json "$T/m"
	check "-o ${opt%%|*}: layers $(labels "$T/out")" test "$(labels "$T/out")" = "${opt#*|}"
	sc_umount "$T/m"
	log_clean
done

# ---- the passthrough stack --------------------------------------------------
sc_mount_fg "$T/plain" "$T/pm" --stack=passthrough -o stats || finish
printf 'hello' >"$T/pm/f"
expect 0 "" "$SC_BIN" stats --json "$T/pm"
check "passthrough: fuse>posix" test "$(labels "$T/out")" = "fuse>posix"
want "$T/out" 'fuse>posix' write bytes 5
sc_umount "$T/pm"
log_clean

# ---- off: not in the stack ---------------------------------------------------
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
expect $E_FAIL "$T/m: no io-stats here (not the root of a mount made with -o stats)" \
	"$SC_BIN" stats "$T/m"
check "one line, nothing on stdout" test "$(wc -l <"$T/out")" = 1
expect $E_FAIL "no io-stats here" "$SC_BIN" stats --json "$T/m"
sc_umount "$T/m"
log_clean

finish
