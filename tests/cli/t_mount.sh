#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# stackcrypt mount: every refusal (exit code and message, nothing mounted),
# then a real mount: copy files in, unmount, fsck; and the daemonized mode.
. "$(dirname "$0")/lib.sh"

[ -c /dev/fuse ] || { fail "no /dev/fuse: the mount tests need it"; finish; }

new_volume "$T/v" || finish
cp "$T/mk" "$T/v.mk"		# its master key (new_volume overwrites $T/mk)
mkdir "$T/m"
printf 'wrong horse\n' >"$T/wrong"

# expect_unmounted: after a refusal, nothing may be mounted on $T/m
expect_unmounted() {
	check "nothing mounted on $T/m after: $*" bash -c "! awk -v m='$T/m' '\$5 == m {f=1} END {exit !f}' /proc/self/mountinfo"
}

# secrets
expect $E_BADPASS "wrong password" "$SC_BIN" mount --passfile="$T/wrong" "$T/v" "$T/m"
expect_unmounted "wrong password"
: >"$T/empty"
expect $E_SECRET "empty password refused" "$SC_BIN" mount --passfile="$T/empty" "$T/v" "$T/m"
expect_unmounted "empty password"
expect $E_SECRET "extpass command failed (exit 3)" "$SC_BIN" mount --extpass="exit 3" "$T/v" "$T/m"
expect_unmounted "extpass failing"
expect $E_USAGE "command line" "$SC_BIN" mount --password=hunter2 "$T/v" "$T/m"
expect $E_USAGE "command line" "$SC_BIN" mount -o password=hunter2 "$T/v" "$T/m"
expect_unmounted "password on the command line"
expect $E_SECRET "no terminal" setsid -w "$SC_BIN" mount "$T/v" "$T/m"
expect_unmounted "no terminal"

# Every process of a mount that holds a key is non-dumpable, also the parent
# that waits for the daemon (it held a --masterkey=TEXT).  An --extpass
# program runs while both wait (deterministically): as nobody it sees
# /proc/PID/status owned by root only for a process that is not dumpable.
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	new_volume "$T/vn" || finish
	mkdir "$T/mn" "$T/spy"
	chown -R 65534:65534 "$T/vn" "$T/mn"
	chmod 777 "$T/spy"
	cat >"$T/spy/ext.sh" <<-EOF
		field() { awk -v k="\$1:" '\$1 == k {print \$2}' /proc/\$2/status; }
		d=\$PPID	# up to the first stackcrypt process (sh -c may fork)
		while [ "\$(field Name \$d)" != stackcrypt ]; do d=\$(field PPid \$d); done
		stat -c %u /proc/\$d/status >$T/spy/daemon
		stat -c %u /proc/\$(field PPid \$d)/status >$T/spy/parent
		echo wrong
	EOF
	expect $E_BADPASS "wrong password" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$SC_BIN" mount --extpass="sh $T/spy/ext.sh" "$T/vn" "$T/mn"
	check "the daemon is not dumpable (/proc/PID/status owned by root)" grep -qx 0 "$T/spy/daemon"
	check "the waiting parent is not dumpable (/proc/PID/status owned by root)" grep -qx 0 "$T/spy/parent"
fi

# A bad mount option (libfuse's or ours) is refused before any secret is
# asked for or the volume unlocked, in our words, with a pointer to --help
for bad in "-o frobnicate:unknown mount option 'frobnicate'" \
	   "-o max_read=abc:bad value in option 'max_read=abc'" \
	   "-o max_threads=0:max_threads must be"; do
	rm -f "$T/asked"
	expect $E_USAGE "${bad#*:}" "$SC_BIN" mount ${bad%%:*} \
		--extpass="touch $T/asked; cat $T/pw" "$T/v" "$T/m"
	check "'${bad%%:*}' points to --help" grep -qF "stackcrypt mount --help" "$T/out"
	check "'${bad%%:*}' refused before the secret was asked for" [ ! -e "$T/asked" ]
done
expect_unmounted "bad mount options"

# config
mkdir "$T/noconf"
expect $E_CONFIG "no stackcrypt volume" "$SC_BIN" mount --passfile="$T/pw" "$T/noconf" "$T/m"
cp "$T/v/.stackcrypt.conf" "$T/good.conf"
head -c 100 "$T/good.conf" >"$T/v/.stackcrypt.conf"
expect $E_CONFIG "is corrupt" "$SC_BIN" mount --passfile="$T/pw" "$T/v" "$T/m"
cp "$T/good.conf" "$T/v/.stackcrypt.conf"
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	# unreadable (root reads anything: try as nobody; the config is root's, 0600)
	expect $E_CONFIG "Permission denied" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$SC_BIN" mount --passfile=/dev/null "$T/v" "$T/m"
fi
expect_unmounted "bad config"

# BACKING missing or not a directory
expect $E_BACKING "No such file or directory" "$SC_BIN" mount --passfile="$T/pw" "$T/nonexistent" "$T/m"
touch "$T/file"
expect $E_BACKING "not a directory" "$SC_BIN" mount --passfile="$T/pw" "$T/file" "$T/m"

# MOUNTPOINT missing, not a directory, not empty, already mounted
expect $E_MOUNTPOINT "No such file or directory" "$SC_BIN" mount --passfile="$T/pw" "$T/v" "$T/nonexistent"
expect $E_MOUNTPOINT "not a directory" "$SC_BIN" mount --passfile="$T/pw" "$T/v" "$T/file"
mkdir "$T/full"; touch "$T/full/x"
expect $E_MOUNTPOINT "not empty" "$SC_BIN" mount --passfile="$T/pw" "$T/v" "$T/full"
mkdir "$T/busy"
if mount -t tmpfs none "$T/busy" 2>/dev/null; then
	expect $E_MOUNTPOINT "already a mount point" "$SC_BIN" mount --passfile="$T/pw" "$T/v" "$T/busy"
	umount "$T/busy"
else
	echo "SKIP: cannot mount tmpfs: already-mounted case untested"
fi

# BACKING inside MOUNTPOINT, MOUNTPOINT inside BACKING, the same directory
mkdir -p "$T/outer/inner"
expect $E_MOUNTPOINT "must not contain each other" "$SC_BIN" mount --passfile="$T/pw" "$T/outer/inner" "$T/outer"
new_volume "$T/v2" || finish
mkdir "$T/v2/sub"
expect $E_MOUNTPOINT "must not contain each other" "$SC_BIN" mount --passfile="$T/pw" "$T/v2" "$T/v2/sub"
expect $E_MOUNTPOINT "must not contain each other" "$SC_BIN" mount --passfile="$T/pw" "$T/m/.." "$T/m"
expect_unmounted "path checks"

# a real mount in the foreground: files in, unmount, fsck
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
check "mount shows up as fuse.stackcrypt" grep -q " $T/m fuse.stackcrypt " /proc/mounts
head -c 100000 /dev/urandom >"$T/rand"
cp "$T/rand" "$T/m/rand"
mkdir "$T/m/dir"
echo hello >"$T/m/dir/hello.txt"
# the config's temporaries are hidden and reserved in the root, like the config
# (with encrypted names no plaintext name can meet them: an ordinary name)
if names_on; then
	check "config temporary name is an ordinary name" bash -c "echo mine >'$T/m/.stackcrypt.conf.tmp-mine'"
	check "... that reads back" grep -qx mine "$T/m/.stackcrypt.conf.tmp-mine"
	rm -f "$T/m/.stackcrypt.conf.tmp-mine"
	check "... and left the config alone" test "$(ls -A "$T/v" | grep -c '^\.stackcrypt\.conf')" = 1
else
	check "config temporary names are reserved" bash -c "! echo mine 2>/dev/null >'$T/m/.stackcrypt.conf.tmp-mine'"
fi
check "file reads back through the mount" cmp -s "$T/rand" "$T/m/rand"
expect $E_MOUNTPOINT "already a mount point" "$SC_BIN" mount --passfile="$T/pw" "$T/v" "$T/m"
check "config hidden in the mount" [ ! -e "$T/m/.stackcrypt.conf" ]
# the mount's lock file (one writer per volume): made by the mount, an empty
# regular file beside the config, hidden and reserved like it
check "the mount made its lock file" bash -c "[ -f '$T/v/.stackcrypt.lock' ] && [ ! -s '$T/v/.stackcrypt.lock' ]"
check "lock file hidden in the mount" [ ! -e "$T/m/.stackcrypt.lock" ]
if ! names_on; then
	check "lock file name reserved in the mount" bash -c "! echo mine 2>/dev/null >'$T/m/.stackcrypt.lock'"
fi
# fsck of a mounted volume: a warning; --repair refuses to rename under the daemon
expect $E_OK "is mounted at $T/m" "$SC_BIN" fsck --passfile="$T/pw" "$T/v/"
expect $E_BACKING "unmount it first" "$SC_BIN" fsck --repair --passfile="$T/pw" "$T/v"
backing_map "$T/m" "$T/v" rand
sc_umount "$T/m"
check "unmounted" bash -c "! grep -q ' $T/m ' /proc/mounts"
check "backing file is not the plaintext" bash -c "! cmp -s '$T/rand' '${BK[rand]}'"
check "backing size == plaintext size" [ "$(stat -c %s "${BK[rand]}")" = 100000 ]
check "backing file has a header" bash -c "getfattr -n user.stackcrypt '${BK[rand]}' >/dev/null 2>&1"
expect $E_OK "0 problems" "$SC_BIN" fsck --passfile="$T/pw" "$T/v"
check "fsck counted the two files" grep -q "2 files" "$T/out"

# BACKING on a read-only file system: mounted read-only, with a notice (a
# write then fails with EROFS at once, not after the user thought it worked)
mkdir "$T/vro"
if mount --bind "$T/v" "$T/vro" 2>/dev/null && mount -o remount,bind,ro "$T/vro" 2>/dev/null; then
	sc_mount_fg "$T/vro" "$T/m" --passfile="$T/pw" || finish
	check "read-only BACKING: the notice" grep -qF \
		"stackcrypt mount: $T/vro is on a read-only file system: mounting read-only" "$T/daemon.log"
	check "read-only BACKING: the mounted line says read-only" grep -qE "units, over (io_uring|/dev/fuse read/write), read-only\)" "$T/daemon.log"
	check "read-only BACKING: the mount is ro" bash -c "grep ' $T/m ' /proc/mounts | grep -q ' ro[, ]'"
	check "read-only BACKING: reads work" grep -qx hello "$T/m/dir/hello.txt"
	check "read-only BACKING: a write fails with EROFS" \
		bash -c "! echo x 2>'$T/werr' >'$T/m/new' && grep -q 'Read-only file system' '$T/werr'"
	sc_umount "$T/m"
	umount "$T/vro"
else
	echo "SKIP: cannot make a read-only bind mount: read-only BACKING untested"
fi

# -o ro: reads work, writes are refused; -s and -o allow_other mount too
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o ro || finish
check "ro mount shows ro" bash -c "grep ' $T/m ' /proc/mounts | grep -q ' ro[, ]'"
check "ro mount reads" grep -qx hello "$T/m/dir/hello.txt"
check "ro mount refuses a write" bash -c "! echo x 2>/dev/null >'$T/m/new'"
sc_umount "$T/m"
check "ro mount created nothing" [ ! -e "$T/v/new" ]
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -s -o allow_other || finish
check "allow_other in the mount options" bash -c "grep ' $T/m ' /proc/mounts | grep -q allow_other"
check "single-threaded mount reads" cmp -s "$T/rand" "$T/m/rand"
sc_umount "$T/m"
# -o noxattr: xattrs through the mount fail (EOPNOTSUPP), files still work and
# get their headers; without it user xattrs work
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o noxattr || finish
check "noxattr mount reads" cmp -s "$T/rand" "$T/m/rand"
check "noxattr: setfattr fails" bash -c "! setfattr -n user.a -v 1 '$T/m/rand' 2>'$T/sfa'"
check "noxattr: the reason is EOPNOTSUPP" grep -q "not supported" "$T/sfa"
check "noxattr: getfattr fails" bash -c "! getfattr -n user.a '$T/m/rand' 2>/dev/null"
check "noxattr: ls -l works" ls -l "$T/m/rand"
echo new >"$T/m/noxattr-new"
backing_map "$T/m" "$T/v" noxattr-new
sc_umount "$T/m"
check "noxattr: a new file still got its header" \
	bash -c "getfattr -n user.stackcrypt '${BK[noxattr-new]}' >/dev/null 2>&1"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
check "without noxattr user xattrs work" setfattr -n user.a -v 1 "$T/m/rand"
check "without noxattr the xattr reads back" bash -c "getfattr -n user.a '$T/m/rand' | grep -q 'user.a=\"1\"'"
setfattr -x user.a "$T/m/rand"
rm "$T/m/noxattr-new"
sc_umount "$T/m"

# -o loop=lifo (fs/fuse/loop.c): parallel readers work, and SIGTERM (taken by
# the main thread while the workers block it) unmounts with exit status 0
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" -o loop=lifo || finish
readers=()
for i in 1 2 3 4; do cmp -s "$T/rand" "$T/m/rand" & readers+=($!); done
bad=0
for p in "${readers[@]}"; do wait "$p" || bad=$((bad + 1)); done
check "lifo loop: four parallel readers get the data" [ "$bad" = 0 ]
lifo_pid=${SC_PIDS[0]}
kill -TERM "$lifo_pid"
wait "$lifo_pid"
check "lifo loop: SIGTERM ends the daemon with status 0" [ $? = 0 ]
SC_PIDS=()
while is_mounted "$T/m"; do sleep 0.1; done	# no deadline: meson's timeout bounds a hang
check "lifo loop: SIGTERM unmounted" bash -c "! grep -q ' $T/m ' /proc/mounts"

# One mount per volume: a second one (read-only too) is refused before the
# secret is asked for, naming where the volume is mounted.  A passthrough
# mount of the same directory is no volume mount and is not refused.
# second_mount_refused LABEL MSG: mounting $T/v on $T/m2, read-write and with
# -o ro, fails with MSG in one line, before the secret, mounting nothing.
# LABEL is a printf format for the check names, %s the mount options.
second_mount_refused() {
	local ro label
	for ro in "" "-o ro"; do
		# shellcheck disable=SC2059  # LABEL is the format
		label=$(printf "$1" "$ro")
		rm -f "$T/asked"
		expect $E_BACKING "$2" "$SC_BIN" mount $ro --extpass="touch $T/asked; cat $T/pw" "$T/v" "$T/m2"
		check "$label refused in one line" [ "$(wc -l <"$T/out")" = 1 ]
		check "$label refused before the secret was asked for" [ ! -e "$T/asked" ]
		check "${label%:}: nothing mounted on $T/m2" bash -c "! grep -q ' $T/m2 ' /proc/mounts"
	done
}
mkdir "$T/m2"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
dead_pid=${SC_PIDS[0]}
second_mount_refused "second mount (%s)" "BACKING $T/v is already mounted at $T/m (one mount per volume"
# Something other than a regular file at the lock file's path (a FIFO, a
# directory, a symlink) is refused in one line, before the secret: it is
# never opened in a way that blocks (a FIFO opened for reading waits for a
# writer) and never locked in the file's place.  The volume mounted on $T/m
# holds its lock through its open fd, so the path can be replaced under it.
mv "$T/v/.stackcrypt.lock" "$T/lock.keep"
for kind in FIFO directory "symbolic link"; do
	case $kind in
	FIFO) mkfifo "$T/v/.stackcrypt.lock" ;;
	directory) mkdir "$T/v/.stackcrypt.lock" ;;
	*) ln -s "$T/lock.keep" "$T/v/.stackcrypt.lock" ;;
	esac
	second_mount_refused "lock file a $kind (%s):" \
		"stackcrypt mount: BACKING $T/v: $T/v/.stackcrypt.lock is a $kind, not a regular file; remove it and mount again"
	rm -r "$T/v/.stackcrypt.lock"
done
mv "$T/lock.keep" "$T/v/.stackcrypt.lock"
sc_mount_fg "$T/v" "$T/m2" --stack=passthrough || finish
check "a passthrough mount says it is not encrypted" \
	grep -qF "stackcrypt: mounted $T/v on $T/m2 (passthrough, not encrypted, over " "$T/daemon.log"
check "passthrough view of a mounted volume's directory shows the config" \
	[ -f "$T/m2/.stackcrypt.conf" ]
fusermount3 -u "$T/m2"
wait "${SC_PIDS[1]}"
SC_PIDS=("$dead_pid")

# A daemon killed (-9) leaves a dead mount point (ENOTCONN): mount names the
# way out, and after fusermount3 -u mounts again.  Its lock died with it.
kill -KILL "$dead_pid"
wait "$dead_pid"
SC_PIDS=()
expect $E_MOUNTPOINT "$T/m: a stackcrypt daemon died here; run 'fusermount3 -u $T/m' and mount again" \
	"$SC_BIN" mount --passfile="$T/pw" "$T/v" "$T/m"
check "the dead mount is one line of message" [ "$(wc -l <"$T/out")" = 1 ]
sc_mount_fg "$T/v" "$T/m2" --passfile="$T/pw" || finish
check "after kill -9 of its daemon the volume mounts elsewhere" grep -qx hello "$T/m2/dir/hello.txt"
sc_umount "$T/m2"
check "fusermount3 -u clears the dead mount" fusermount3 -u "$T/m"
sc_mount_fg "$T/v" "$T/m" --passfile="$T/pw" || finish
check "mounted again after fusermount3 -u" grep -qx hello "$T/m/dir/hello.txt"
backing_map "$T/m" "$T/v" dir/hello.txt
sc_umount "$T/m"

# passwd sweeps temporaries a killed passwd left, never a user's file (one
# with a header: put there behind the mount's back, e.g. by a restore)
cp --preserve=xattr "${BK[dir/hello.txt]}" "$T/v/.stackcrypt.conf.tmp-mine"
expect $E_OK "password changed" "$SC_BIN" passwd --passfile="$T/pw" --new-passfile="$T/pw" "$T/v"
check "passwd kept the user's look-alike file" [ -f "$T/v/.stackcrypt.conf.tmp-mine" ]

# --masterkey alone asks for the master key on the terminal (as passwd's
# option of the same name), and mounts with it
expect $E_OK "Master key:" python3 "$CLI_DIR/pty_run.py" "$(cat "$T/v.mk")" -- \
	"$SC_BIN" mount --masterkey "$T/v" "$T/m"
check "mount --masterkey (asked) is up" is_mounted "$T/m"
check "mount --masterkey reads the files" grep -qx hello "$T/m/dir/hello.txt"
is_mounted "$T/m" && fusermount3 -u "$T/m"
while [ -n "$(daemon_pids "$T/m")" ]; do sleep 0.1; done

# The parent that waits for the daemon wipes its copy of a --masterkey=TEXT
# at once: stop the daemon (strace injects SIGSTOP when it opens /dev/fuse,
# which the parent never does; the config is opened relative to the
# backing's fd since the backing interface, which -P cannot follow) while
# the parent waits on its pipe, and look for the key text in the parent's
# memory (root reads it even though it is not dumpable)
if command -v strace >/dev/null; then
	strace -f -qq -o /dev/null -P /dev/fuse -e trace=openat \
		-e inject=openat:signal=SIGSTOP \
		"$SC_BIN" mount --masterkey="$(cat "$T/v.mk")" "$T/v" "$T/m" >/dev/null 2>&1 &
	st=$!
	# until the daemon is stopped and its parent waits on the pipe (no timing)
	while :; do
		par=$(pgrep -P "$st") && kid=$(pgrep -P "$par") &&
			grep -q '^State:[[:space:]]*[tT]' "/proc/$kid/status" &&
			[ "$(cat "/proc/$par/wchan")" = anon_pipe_read ] && break
		kill -0 "$st" 2>/dev/null || break
		sleep 0.05
	done
	check "the waiting parent holds no copy of the master key text" \
		python3 - "$par" "$(cat "$T/v.mk")" <<-'EOF'
		import sys
		pid, key, n = sys.argv[1], sys.argv[2].encode(), 0
		# Writable mappings, read 1 MiB at a time (overlapping by the key's
		# length).  Mappings over 1 GiB are skipped: an ASan build has
		# terabytes of shadow memory mapped read-write, and nothing of
		# ours is that large (ASan's heap is mapped in small pieces).
		CHUNK, BIG = 1 << 20, 1 << 30
		with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
		    for line in maps:
		        span, perms = line.split()[:2]
		        lo, hi = (int(x, 16) for x in span.split("-"))
		        if not perms.startswith("rw") or hi - lo > BIG:
		            continue
		        for off in range(lo, hi, CHUNK):
		            try:
		                mem.seek(off)
		                n += mem.read(min(CHUNK + len(key) - 1, hi - off)).count(key)
		            except OSError:
		                pass
		sys.exit(n != 0)
		EOF
	kill -CONT "$kid"
	while kill -0 "$par" 2>/dev/null; do sleep 0.05; done
	check "mount --masterkey=TEXT is up" is_mounted "$T/m"
	is_mounted "$T/m" && fusermount3 -u "$T/m"
	wait "$st"	# strace follows the daemon until it exits
else
	echo "SKIP: no strace: the parent's wipe of the master key is untested"
fi

# daemonized (no -f): exit 0 means mounted, and says so in one line (what,
# where, which cipher); -q and -o quiet (for fstab lines) silence the line
expect $E_OK "" "$SC_BIN" mount --passfile="$T/pw" "$T/v" "$T/m"
check "a mount says what it mounted where, and where its messages go: $(cat "$T/out")" \
	grep -qxE "stackcrypt: mounted $T/v on $T/m \(aes-xts, 4096-byte units, over /dev/fuse read/write\); messages: (syslog|$T/state/stackcrypt/$(printf '%s' "${T#/}/m" | tr / -)\.log)" \
	"$T/out"
check "and nothing else" [ "$(wc -l <"$T/out")" = 1 ]
check "daemon mount is up at exit 0" is_mounted "$T/m"
check "data readable after the daemonized mount" grep -qx hello "$T/m/dir/hello.txt"
check "look-alike file hidden in the mount" [ ! -e "$T/m/.stackcrypt.conf.tmp-mine" ]
pids=$(daemon_pids "$T/m")
check "one daemon runs the mount" [ "$(echo $pids | wc -w)" = 1 ]
fusermount3 -u "$T/m"
while [ -n "$(daemon_pids "$T/m")" ]; do sleep 0.1; done
check "daemon exited after unmount" [ -z "$(daemon_pids "$T/m")" ]
for q in -q "-o quiet"; do
	expect $E_OK "" "$SC_BIN" mount $q --passfile="$T/pw" "$T/v" "$T/m"
	check "mount $q is up" is_mounted "$T/m"
	check "mount $q prints nothing" [ ! -s "$T/out" ]
	is_mounted "$T/m" && fusermount3 -u "$T/m"
	while [ -n "$(daemon_pids "$T/m")" ]; do sleep 0.1; done
done

finish
