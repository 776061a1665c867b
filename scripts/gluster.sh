#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Starts a real GlusterFS on this host, on loopback only, for tests,
# benchmarks and CI, and tears it down again:
#
#   scripts/gluster.sh [-w WORKDIR] check
#   scripts/gluster.sh [-w WORKDIR] up single|dist|replica VOLUME
#   scripts/gluster.sh [-w WORKDIR] mount VOLUME DIR
#   scripts/gluster.sh [-w WORKDIR] umount DIR
#   scripts/gluster.sh [-w WORKDIR] restart-brick VOLUME N
#   scripts/gluster.sh [-w WORKDIR] down
#
#   check   the host name resolves to 127.0.0.0/8 only and the GlusterFS
#           programs are installed (bash scripts/deps.sh gluster)
#   up      starts glusterd unless one runs (and remembers that it did; one
#           that runs already is used only if it listens on loopback alone),
#           makes the volume's bricks -- each an XFS image file on a loop
#           device, mounted under WORKDIR -- and creates and starts VOLUME:
#           single   one brick
#           dist     two bricks, distribute
#           replica  two bricks, replica 2
#           with performance.stat-prefetch and performance.open-behind off
#           (docs/usage.md, "Over GlusterFS");
#           prints HOST:/VOLUME, the address clients use
#   restart-brick  kills brick N's process (1 or 2) and has glusterd start
#           it again (volume start force); prints the new pid
#   mount   FUSE-mounts VOLUME on DIR (mount -t glusterfs HOST:/VOLUME DIR)
#   umount  unmounts DIR (one mounted by `mount`)
#   down    undoes everything WORKDIR's `up` and `mount` did: unmounts the
#           clients, stops and deletes the volumes, unmounts the bricks,
#           detaches their loop devices, removes the images, and stops
#           glusterd if this script started it and no other WORKDIR still
#           uses it.  Safe after any failure, and a second time.
#
# Environment: SC_GLUSTER_HOST  the brick and volfile host (default: this
# host's name; it must resolve to 127.0.0.0/8 only, else every command but
# `down` refuses to run), SC_GLUSTER_WORK  WORKDIR when -w is not given
# (default /var/tmp/stackcrypt-gluster), SC_GLUSTER_BRICK_SIZE  each brick
# image's size (default 1G; sparse).
#
# A glusterd started here listens on 127.0.0.1 only (its bricks too: glusterd
# passes its bind address on), keeps its state and log in
# /run/stackcrypt-gluster until it stops (the FUSE clients log to WORKDIR,
# the bricks to /var/log/glusterfs/bricks; `down` removes both), and is
# shared by every WORKDIR: commands that talk
# to glusterd hold /run/stackcrypt-gluster/lock, so parallel tests do not
# collide ("another transaction is in progress").  Exit status: 0 done, 1
# failed (one line on stderr), 2 bad command line.
set -uo pipefail

prog=scripts/gluster.sh
GDIR=/run/stackcrypt-gluster

die() { echo "$prog: $*" >&2; exit 1; }
# shellcheck source=loopback_lib.sh
. "$(dirname "$(realpath "$0")")/loopback_lib.sh"
usage() { sed -n '3,48s/^# \{0,1\}//p' "$0"; }

WORK=${SC_GLUSTER_WORK:-/var/tmp/stackcrypt-gluster}
if [ "${1:-}" = -w ]; then
	[ $# -ge 2 ] || { echo "$prog: -w needs a directory" >&2; exit 2; }
	WORK=$2
	shift 2
fi
case ${1:-} in
-h | --help) usage; exit 0 ;;
check | up | mount | umount | restart-brick | down) cmd=$1; shift ;;
'') echo "$prog: no command: check, up, mount, umount, restart-brick or down (see --help)" >&2; exit 2 ;;
*) echo "$prog: unknown command '$1': check, up, mount, umount, restart-brick or down (see --help)" >&2; exit 2 ;;
esac
WORK=$(realpath -m "$WORK")
HOST=${SC_GLUSTER_HOST:-$(hostname)}
SIZE=${SC_GLUSTER_BRICK_SIZE:-1G}

# The refusal the issue asks for: every address of HOST is in 127.0.0.0/8.
check_host() { check_loopback_host "$HOST" GlusterFS SC_GLUSTER_HOST; }

check_tools() {
	local t missing=()

	for t in gluster glusterd glusterfs mount.glusterfs mkfs.xfs losetup flock; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	[ ${#missing[@]} -eq 0 ] ||
		die "missing ${missing[*]}: run 'bash scripts/deps.sh gluster' (GlusterFS is required; not skipping)"
	[ "$(id -u)" -eq 0 ] || die "must run as root (glusterd, loop devices, mounts)"
}

# Every gluster CLI call: non-interactive, bounded, output kept for errors.
gl() {
	gluster --mode=script --timeout=120 --log-file="$WORK/cli.log" "$@" >"$WORK/gluster.out" 2>&1
}

glusterd_up() {
	gluster --mode=script --timeout=10 --log-file=/dev/null pool list >/dev/null 2>&1
}

lock() {
	mkdir -p "$GDIR/users" || die "cannot make $GDIR"
	exec 9>"$GDIR/lock"
	flock 9 || die "cannot lock $GDIR/lock"
}

user_id() { printf '%s' "$WORK" | tr -c 'A-Za-z0-9._-' '_'; }

# Starts glusterd on 127.0.0.1 unless one answers.  Records that we did.
start_glusterd() {
	local i addr

	if glusterd_up; then
		if [ -e "$GDIR/ours" ]; then
			# one started before the nice 0 below: its new bricks at 0 too
			renice -n 0 -p "$(cat "$GDIR/glusterd.pid" 2>/dev/null)" >/dev/null 2>&1
			return 0
		fi
		# Not ours: use it only if it listens on loopback alone.
		addr=$(ss -ltnH 'sport = :24007' | awk '{ print $4 }' | grep -v '^127\.' | head -n 1)
		[ -z "$addr" ] ||
			die "a glusterd not started by this script listens on $addr: refusing to use it (loopback only)"
		return 0
	fi
	mkdir -p "$GDIR/wd" || die "cannot make $GDIR/wd"
	cat >"$GDIR/glusterd.vol" <<-EOF
		volume management
		    type mgmt/glusterd
		    option working-directory $GDIR/wd
		    option transport-type socket
		    option transport.socket.bind-address 127.0.0.1
		    option transport.socket.listen-port 24007
		    option ping-timeout 0
		    option event-threads 1
		end-volume
	EOF
	# fd 9 (the lock) must not live on in glusterd and its bricks.  At nice
	# 0 whatever the caller's: glusterd outlives it, serves every later
	# test, and passes its niceness to the bricks it starts -- started from
	# a `nice -n 19` run, a brick restarted under load got so little CPU
	# that a client found it again only after minutes.
	nice -n $((0 - $(nice))) \
		glusterd -f "$GDIR/glusterd.vol" -p "$GDIR/glusterd.pid" -l "$GDIR/glusterd.log" 9>&- ||
		die "glusterd failed to start (log: $GDIR/glusterd.log)"
	echo ours >"$GDIR/ours"
	# glusterd forks before it listens: wait for its answer, at most 60 s.
	for ((i = 0; i < 600; i++)); do
		glusterd_up && return 0
		sleep 0.1
	done
	die "glusterd does not answer 60 s after starting (log: $GDIR/glusterd.log)"
}

# Stops glusterd if we started it and no WORKDIR uses it any more.
stop_glusterd() {
	local pid i

	[ -e "$GDIR/ours" ] || return 0
	[ -z "$(ls -A "$GDIR/users" 2>/dev/null)" ] || return 0
	pid=$(cat "$GDIR/glusterd.pid" 2>/dev/null)
	if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = glusterd ]; then
		kill "$pid" 2>/dev/null
		for ((i = 0; i < 300; i++)); do
			[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = glusterd ] || break
			# a zombie (no init reaping it) has stopped too
			grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null && break
			sleep 0.1
		done
	fi
	rm -rf "$GDIR/wd" "$GDIR/ours" "$GDIR/glusterd.pid" "$GDIR/glusterd.vol" "$GDIR/glusterd.log"
}

valid_volume() {
	[[ $1 =~ ^[A-Za-z0-9_-]{1,64}$ ]] || {
		echo "$prog: bad volume name '$1': letters, digits, - and _ only" >&2
		exit 2
	}
}

# One brick: an XFS image on a loop device, mounted at $WORK/bricks/NAME.
# Each step is written to $WORK/bricks.list before the next, for `down`.
make_brick() {
	local name=$1 img=$WORK/bricks/$1.img dir=$WORK/bricks/$1 dev=

	mkdir -p "$dir" || die "cannot make $dir"
	echo "$name" >>"$WORK/bricks.list"
	truncate -s "$SIZE" "$img" || die "cannot create $img"
	for _ in 1 2 3 4 5; do
		dev=$(losetup -f --show "$img" 2>"$WORK/losetup.err") && break
		dev=
		sleep "0.$((RANDOM % 5 + 1))"
	done
	[ -n "$dev" ] || die "no loop device for $img: $(head -c 200 "$WORK/losetup.err")"
	# 512-byte inodes keep GlusterFS's xattrs in the inode.
	mkfs.xfs -q -f -K -i size=512 "$dev" >"$WORK/mkfs.out" 2>&1 ||
		die "mkfs.xfs $dev failed: $(head -c 200 "$WORK/mkfs.out")"
	mount -t xfs "$dev" "$dir" || die "cannot mount $dev on $dir"
	mkdir "$dir/brick" || die "cannot make $dir/brick"
}

# The pids of the brick processes serving $1 (a brick path), one a line:
# those with the arguments --brick-name and $1.  Two greps read every
# process's argument list (-z: NUL-separated, -x: a whole argument), not
# two pipelines per process: with some 200 processes those took 5 s of CPU
# per call, under the lock in `down` (docs/design.md, "CI time").
brick_pids() {
	local f

	for f in $(grep -lzxF -e "$1" /proc/[0-9]*/cmdline 2>/dev/null |
		xargs -r grep -lzxF -e --brick-name 2>/dev/null); do
		f=${f#/proc/}
		echo "${f%/cmdline}"
	done
}

# The unix socket (-S) of each brick process serving $1: GlusterFS 10 leaves
# them in /var/run/gluster when the brick stops.
brick_sockets() {
	local pid

	for pid in $(brick_pids "$1"); do
		{ tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null |
			awk 'prev == "-S" && $0 ~ /^\/var\/run\/gluster\/[0-9a-f]+\.socket$/ { print } { prev = $0 }'
	done
}

# Stops the brick processes serving $1, by pid: those left when glusterd
# died before `volume stop`.
kill_brick_procs() {
	local pid i

	for pid in $(brick_pids "$1"); do
		kill "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			[ -e "/proc/$pid" ] || break
			grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null && break
			sleep 0.1
		done
	done
}

remove_brick() {
	local name=$1 img=$WORK/bricks/$1.img dir=$WORK/bricks/$1 dev

	kill_brick_procs "$dir/brick"
	unmount_dir "$dir"
	if [ -e "$img" ]; then
		for dev in $(losetup -j "$img" -O NAME -n 2>/dev/null); do
			losetup -d "$dev" || echo "$prog: losetup -d $dev failed" >&2
		done
	fi
	rm -f "$img"
	rmdir "$dir" 2>/dev/null
	# the brick process's log, named after the brick's path
	dev=$dir/brick
	rm -f "/var/log/glusterfs/bricks/${dev#/}.log" "/var/log/glusterfs/bricks/$(printf '%s' "${dev#/}" | tr / -).log"
}

cmd_up() {
	local kind=${1:-} vol=${2:-} bricks=() n i

	case $kind in
	single) n=1 ;;
	dist | replica) n=2 ;;
	*) echo "$prog: up: kind must be single, dist or replica" >&2; exit 2 ;;
	esac
	[ $# -eq 2 ] || { echo "$prog: usage: up single|dist|replica VOLUME" >&2; exit 2; }
	valid_volume "$vol"
	grep -qx "$vol" "$WORK/volumes" 2>/dev/null && die "volume $vol is already up in $WORK"
	mkdir -p "$WORK" || die "cannot make WORKDIR $WORK"
	lock
	: >"$GDIR/users/$(user_id)"
	start_glusterd
	gl volume info "$vol" && die "volume $vol exists already (not made by this WORKDIR): refusing to touch it"
	mkdir -p "$WORK/bricks" || die "cannot make $WORK/bricks"
	for ((i = 1; i <= n; i++)); do
		make_brick "$vol-b$i"
		bricks+=("$HOST:$WORK/bricks/$vol-b$i/brick")
	done
	echo "$vol" >>"$WORK/volumes"
	# force: bricks on this one host, and replica 2 (its split-brain warning)
	case $kind in
	replica) gl volume create "$vol" replica 2 "${bricks[@]}" force ;;
	*) gl volume create "$vol" "${bricks[@]}" force ;;
	esac || die "volume create $vol failed: $(tail -n 1 "$WORK/gluster.out")"
	# md-cache (stat-prefetch) with write-behind can answer a stat with the
	# size from before an acknowledged write: stackcrypt then reads a file
	# short (docs/usage.md, "Over GlusterFS").
	gl volume set "$vol" performance.stat-prefetch off ||
		die "volume set $vol performance.stat-prefetch off failed: $(tail -n 1 "$WORK/gluster.out")"
	# The FUSE client answers a stat with an open fd of the file when it
	# has one (fuse-bridge's fd_lookup), and open-behind's fd of a file
	# another process is closing can fail that with EBADFD: the syscall
	# battery's reference directory did once (docs/usage.md).
	gl volume set "$vol" performance.open-behind off ||
		die "volume set $vol performance.open-behind off failed: $(tail -n 1 "$WORK/gluster.out")"
	gl volume start "$vol" || die "volume start $vol failed: $(tail -n 1 "$WORK/gluster.out")"
	echo "$HOST:/$vol"
}

# For tests of reconnection: the brick's process dies (SIGKILL, as in a
# crash) and glusterd starts a new one on the same brick.
cmd_restart_brick() {
	local vol=${1:-} n=${2:-} brick pid pidfile new

	[ $# -eq 2 ] && [[ $n =~ ^[12]$ ]] || { echo "$prog: usage: restart-brick VOLUME 1|2" >&2; exit 2; }
	valid_volume "$vol"
	grep -qx "$vol" "$WORK/volumes" 2>/dev/null || die "restart-brick: no volume $vol was made by 'up' in $WORK"
	brick=$WORK/bricks/$vol-b$n/brick
	pid=$(brick_pids "$brick")
	[ -n "$pid" ] || die "restart-brick: no process serves $brick"
	brick_sockets "$brick" >>"$WORK/sockets"
	pidfile=$({ tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null | awk 'prev == "-p" { print } { prev = $0 }')
	kill -KILL "$pid"
	# Until the kernel has taken it down: how long that takes depends on
	# the load, so there is no count here; a test's own timeout bounds a
	# process that never dies.
	while [ -e "/proc/$pid" ]; do
		grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null && break
		sleep 0.1
	done
	# glusterd takes a live pid in the pid file for a running brick, and a
	# zombie (where nothing reaps it) is live enough: the process is dead.
	case $pidfile in /var/run/gluster/vols/"$vol"/*.pid) rm -f "$pidfile" ;; esac
	lock
	gl volume start "$vol" force || die "volume start $vol force failed: $(tail -n 1 "$WORK/gluster.out")"
	new=$(brick_pids "$brick")
	[ -n "$new" ] && [ "$new" != "$pid" ] || die "restart-brick: brick $n of $vol did not come back"
	echo "$new"
}

cmd_mount() {
	local vol=${1:-} dir=${2:-}

	[ $# -eq 2 ] || { echo "$prog: usage: mount VOLUME DIR" >&2; exit 2; }
	valid_volume "$vol"
	[ -d "$dir" ] || die "mount: $dir is not a directory"
	dir=$(realpath "$dir")
	is_mounted "$dir" && die "mount: $dir is already a mount point"
	grep -qx "$vol" "$WORK/volumes" 2>/dev/null || die "mount: no volume $vol was made by 'up' in $WORK"
	echo "$dir" >>"$WORK/mounts"
	mount -t glusterfs -o "log-file=$WORK/client-$vol.log" "$HOST:/$vol" "$dir" ||
		die "mount -t glusterfs $HOST:/$vol $dir failed (log: $WORK/client-$vol.log)"
	is_mounted "$dir" || die "mount -t glusterfs $HOST:/$vol $dir: no mount appeared"
}

cmd_down() {
	local dir vol name up=0 rc=0

	[ $# -eq 0 ] || { echo "$prog: usage: down" >&2; exit 2; }
	[ -d "$WORK" ] || return 0	# nothing was made here, or it is gone already
	if [ -s "$WORK/mounts" ]; then
		while read -r dir; do
			unmount_dir "$dir"
			is_mounted "$dir" && { echo "$prog: $dir is still mounted" >&2; rc=1; }
		done < <(tac "$WORK/mounts")
	fi
	lock
	if [ -s "$WORK/bricks.list" ]; then
		while read -r name; do
			brick_sockets "$WORK/bricks/$name/brick"
		done <"$WORK/bricks.list" >>"$WORK/sockets"
	fi
	glusterd_up && up=1
	# Our glusterd died with volumes left: start it again to delete them.
	if ((!up)) && [ -s "$WORK/volumes" ] && [ -e "$GDIR/ours" ] && [ -d "$GDIR/wd/vols" ]; then
		(start_glusterd) && up=1
	fi
	if [ -s "$WORK/volumes" ]; then
		while read -r vol; do
			((up)) || { echo "$prog: glusterd is not running: cannot delete volume $vol" >&2; rc=1; continue; }
			gl volume info "$vol" || continue
			gl volume stop "$vol" force
			gl volume delete "$vol" || { echo "$prog: volume delete $vol failed: $(tail -n 1 "$WORK/gluster.out")" >&2; rc=1; continue; }
			# what GlusterFS 10 keeps of a deleted volume
			rm -rf "/var/log/glusterfs/gfproxy/$vol" "/var/log/glusterfs/snaps/$vol" \
				"/var/run/gluster/vols/$vol" "/var/run/gluster/shd/$vol"
		done <"$WORK/volumes"
	fi
	if [ -s "$WORK/bricks.list" ]; then
		while read -r name; do
			remove_brick "$name"
			is_mounted "$WORK/bricks/$name" && { echo "$prog: brick $name is still mounted" >&2; rc=1; }
		done <"$WORK/bricks.list"
	fi
	if [ -s "$WORK/sockets" ]; then
		xargs -r rm -f <"$WORK/sockets"
	fi
	rm -f "$GDIR/users/$(user_id)"
	stop_glusterd
	if ((rc == 0)); then
		rm -f "$WORK/volumes" "$WORK/mounts" "$WORK/bricks.list" "$WORK/gluster.out" "$WORK/sockets" "$WORK/cli.log" \
			"$WORK/losetup.err" "$WORK/mkfs.out" "$WORK"/client-*.log
		rmdir "$WORK/bricks" 2>/dev/null
		rmdir "$WORK" 2>/dev/null
	fi
	return $rc
}

if [ "$cmd" != down ]; then
	check_host
	check_tools
fi
case $cmd in
check) echo "$prog: $HOST resolves to loopback; GlusterFS $(glusterfs --version | awk 'NR == 1 { print $2 }') is installed" ;;
up) cmd_up "$@" ;;
mount) cmd_mount "$@" ;;
umount) cmd_umount "$@" ;;
restart-brick) cmd_restart_brick "$@" ;;
down) cmd_down "$@" ;;
esac
