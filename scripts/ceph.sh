#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Starts a one-node Ceph cluster with a CephFS on this host, on loopback
# only, for tests, benchmarks and CI, and stops it again:
#
#   scripts/ceph.sh [-w WORKDIR] [--cephx=on|off] check
#   scripts/ceph.sh [-w WORKDIR] [--cephx=on|off] up
#   scripts/ceph.sh [-w WORKDIR] status
#   scripts/ceph.sh [-w WORKDIR] mount FS/PATH DIR
#   scripts/ceph.sh [-w WORKDIR] umount DIR
#   scripts/ceph.sh [-w WORKDIR] kill-daemon osd.0|mds.a
#   scripts/ceph.sh [-w WORKDIR] start-daemon osd.0|mds.a
#   scripts/ceph.sh [-w WORKDIR] down
#
#   check   the host name resolves to 127.0.0.0/8 only, the Ceph programs
#           are installed (bash scripts/deps.sh ceph) and /dev/fuse opens
#   up      starts the cluster unless it runs (cephx as asked: on by
#           default; one that runs with the other setting is refused), and
#           records WORKDIR as one of its users: one monitor (v2 only, on
#           127.0.0.1:SC_CEPH_PORT), one manager, one OSD (bluestore on a
#           sparse file), one MDS, and the file system `scfs` on the pools
#           scfs_meta and scfs_data (replica size 1); waits until the MDS is
#           active and every placement group is active; prints the monitor's
#           address.  Idempotent: a second `up` only records the user.
#   status  prints whether the cluster runs, its cephx setting, monitor
#           address, daemons' pids and users; exit 0 up, 3 not running
#   mount   ceph-fuse mounts directory PATH of file system FS (scfs) on DIR,
#           making PATH first if it is missing (and removing it again at
#           `down` then); the kernel client is not used (Debian's kernels
#           have it, but not every kernel: see docs/usage.md, "Over CephFS")
#   umount  unmounts DIR (one mounted by `mount`)
#   kill-daemon  kill -9 of the OSD or the MDS, by pid, for tests of an
#           outage under a client; refused unless WORKDIR is the cluster's
#           only user (any other would see the outage too), and until
#           `start-daemon`, an `up` or `mount` is refused (the cluster is
#           not down, it is waiting for the daemon)
#   start-daemon  starts the daemon that `kill-daemon` killed and waits
#           until it serves again: the OSD "active" on its admin socket and
#           every placement group active, the MDS up:active; prints how many
#           seconds that took
#   down    undoes what WORKDIR's `up` and `mount` did: unmounts its
#           clients, removes the directories `mount` made, and stops the
#           cluster -- every daemon by pid, then its files -- if this script
#           started it and no other WORKDIR still uses it.  Safe after any
#           failure, and a second time.
#
# Environment: SC_CEPH_DIR  the cluster's directory: configuration,
# keyrings, the daemons' data, sockets, pids and logs, and the OSD's block
# file (default /var/tmp/stackcrypt-ceph; never /etc/ceph), SC_CEPH_WORK
# WORKDIR when -w is not given (default /var/tmp/stackcrypt-ceph-work),
# SC_CEPH_PORT  the monitor's port (default 3301, not Ceph's 3300, so that a
# Ceph of the machine's own is not met), SC_CEPH_OSD_SIZE  the OSD's block
# file (default 8G; sparse), SC_CEPH_HOST  the name that must resolve to
# loopback (default: this host's name).
#
# The cluster is shared by every WORKDIR, like scripts/gluster.sh's
# glusterd: commands that change it hold SC_CEPH_DIR/lock, so parallel tests
# share one cluster safely.  Its daemons run at nice 0 whatever the
# caller's (as glusterd: a test started under `nice -n 19` would starve
# them under load).  A failed start undoes itself: the daemons it started
# are stopped by pid and SC_CEPH_DIR is removed.  Exit status: 0 done, 1
# failed (one line on stderr), 2 bad command line, 3 `status` of a cluster
# that does not run.
set -uo pipefail

prog=scripts/ceph.sh
FS=scfs
PY=/usr/bin/python3	# python3-cephfs is Debian's python's module

die() { echo "$prog: $*" >&2; exit 1; }
# shellcheck source=loopback_lib.sh
. "$(dirname "$(realpath "$0")")/loopback_lib.sh"
usage() { sed -n '3,63s/^# \{0,1\}//p' "$0"; }

WORK=${SC_CEPH_WORK:-/var/tmp/stackcrypt-ceph-work}
CEPHX=on
while [ $# -gt 0 ]; do
	case $1 in
	-w)
		[ $# -ge 2 ] || { echo "$prog: -w needs a directory" >&2; exit 2; }
		WORK=$2
		shift 2
		;;
	--cephx=on | --cephx=off) CEPHX=${1#--cephx=}; shift ;;
	--cephx=*) echo "$prog: --cephx must be on or off" >&2; exit 2 ;;
	*) break ;;
	esac
done
case ${1:-} in
-h | --help) usage; exit 0 ;;
check | up | status | mount | umount | kill-daemon | start-daemon | down) cmd=$1; shift ;;
'') echo "$prog: no command: check, up, status, mount, umount, kill-daemon, start-daemon or down (see --help)" >&2; exit 2 ;;
*) echo "$prog: unknown command '$1': check, up, status, mount, umount, kill-daemon, start-daemon or down (see --help)" >&2; exit 2 ;;
esac
WORK=$(realpath -m "$WORK")
CDIR=$(realpath -m "${SC_CEPH_DIR:-/var/tmp/stackcrypt-ceph}")
PORT=${SC_CEPH_PORT:-3301}
OSD_SIZE=${SC_CEPH_OSD_SIZE:-8G}
HOST=${SC_CEPH_HOST:-$(hostname)}
CONF=$CDIR/ceph.conf
[[ $PORT =~ ^[0-9]{1,5}$ ]] && ((PORT > 0 && PORT < 65536)) ||
	{ echo "$prog: SC_CEPH_PORT '$PORT' is not a port number" >&2; exit 2; }

check_host() { check_loopback_host "$HOST" Ceph SC_CEPH_HOST; }

check_tools() {
	local t missing=()

	for t in ceph ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse ceph-authtool monmaptool flock setsid "$PY"; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	"$PY" -c 'import cephfs' 2>/dev/null || missing+=(python3-cephfs)
	[ ${#missing[@]} -eq 0 ] ||
		die "missing ${missing[*]}: run 'bash scripts/deps.sh ceph' (Ceph is required; not skipping)"
	[ "$(id -u)" -eq 0 ] || die "must run as root (Ceph's daemons, FUSE mounts)"
	[ -c /dev/fuse ] && (exec 9<>/dev/fuse) 2>/dev/null ||
		die "/dev/fuse is missing or cannot be opened (ceph-fuse needs FUSE; not skipping)"
}

# The last line of file $1 that is not blank.
last_line() { grep -v '^[[:space:]]*$' "$1" | tail -n 1; }

# Every ceph CLI call: bounded, output kept for errors.
cli() {
	timeout 120 ceph -c "$CONF" --connect-timeout 60 "$@" >"$CDIR/ceph.out" 2>&1
}

lock() {
	mkdir -p "$CDIR/users" || die "cannot make $CDIR"
	exec 9>"$CDIR/lock"
	flock 9 || die "cannot lock $CDIR/lock"
}

user_id() { printf '%s' "$WORK" | tr -c 'A-Za-z0-9._-' '_'; }

# The pids of the processes of our cluster: those started with `-c
# $CONF` (a whole argument), which ceph-fuse clients are too.
cluster_pids() {
	local f

	for f in $(grep -lzxF -f <(printf "%s\n" "$CONF") /proc/[0-9]*/cmdline 2>/dev/null); do
		f=${f#/proc/}
		echo "${f%/cmdline}"
	done
}

# The pid of daemon $1 (mon.a, mgr.x, osd.0, mds.a) if it runs.
daemon_pid() {
	local pid

	pid=$(cat "$CDIR/run/$1.pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ -e "/proc/$pid" ] || return 1
	grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null && return 1
	grep -qzxF -e "$CONF" "/proc/$pid/cmdline" 2>/dev/null || return 1
	echo "$pid"
}

cluster_up() {
	local d

	[ -e "$CDIR/ours" ] || return 1
	for d in mon.a mgr.x osd.0 mds.a; do
		daemon_pid "$d" >/dev/null || return 1
	done
	timeout 30 ceph -c "$CONF" --connect-timeout 10 fs get "$FS" >/dev/null 2>&1
}

# Waits until process $1 has ended (or is a zombie), at most $2 seconds.
wait_gone() {
	local pid=$1 i

	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "/proc/$pid" ] || return 0
		grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# Stops every process of the cluster, by pid, the clients first, then the
# MDS, OSD, manager and monitor, and removes SC_CEPH_DIR's state.  Called
# with the lock held.  Each daemon is asked to stop and killed 2 s later:
# the cluster's data is thrown away, and the MDS alone took 6.7 s to stop
# on SIGTERM.
stop_cluster() {
	local d pid pids round

	for pid in $(cluster_pids); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = ceph-fuse ] || continue
		# one just unmounted ends by itself, a moment later
		wait_gone "$pid" 5 && continue
		echo "$prog: a ceph-fuse client ($pid) of the cluster is still running: stopping it" >&2
		kill "$pid" 2>/dev/null
		wait_gone "$pid" 10 || { kill -KILL "$pid" 2>/dev/null; wait_gone "$pid" 10; }
	done
	for d in mds.a osd.0 mgr.x mon.a; do
		pid=$(daemon_pid "$d") || continue
		kill "$pid" 2>/dev/null
		wait_gone "$pid" 2 || { kill -KILL "$pid" 2>/dev/null; wait_gone "$pid" 10; }
	done
	# any left: a daemon whose pid file was not written yet, or the child
	# of one still forking into the background (so: until none is found)
	for ((round = 0; round < 20; round++)); do
		pids=$(cluster_pids)
		[ -n "$pids" ] || break
		for pid in $pids; do
			kill -KILL "$pid" 2>/dev/null
			wait_gone "$pid" 10
		done
		sleep 0.2
	done
	rm -rf "$CDIR/ceph.conf" "$CDIR/keyring" "$CDIR/monmap" "$CDIR/ceph.out" "$CDIR/ours" "$CDIR/cephx" \
		"$CDIR"/mon.* "$CDIR"/mgr.* "$CDIR"/osd.* "$CDIR"/mds.* "$CDIR/run" "$CDIR/log" "$CDIR/crash" \
		"$CDIR/osd-secret.json" "$CDIR/start.log" "$CDIR/killed"
}

write_conf() {
	local fsid=$1 auth=none

	[ "$CEPHX" = on ] && auth=cephx
	cat >"$CONF" <<-EOF
		# Written by $prog: a one-node cluster on loopback, its state in $CDIR.
		[global]
		fsid = $fsid
		mon host = [v2:127.0.0.1:$PORT]
		public addr = 127.0.0.1
		cluster addr = 127.0.0.1
		ms bind ipv4 = true
		ms bind ipv6 = false
		ms bind msgr1 = false
		auth cluster required = $auth
		auth service required = $auth
		auth client required = $auth
		keyring = $CDIR/keyring
		run dir = $CDIR/run
		pid file = $CDIR/run/\$name.pid
		admin socket = $CDIR/run/\$name.asok
		log file = $CDIR/log/\$name.log
		mon cluster log file = $CDIR/log/cluster.log
		crash dir = $CDIR/crash
		log to syslog = false
		err to syslog = false
		osd pool default size = 1
		osd pool default min size = 1
		osd pool default pg autoscale mode = off
		osd crush chooseleaf type = 0
		mon allow pool size one = true
		mon allow pool delete = true
		mon warn on pool no redundancy = false
		auth allow insecure global id reclaim = false

		[mon]
		mon data = $CDIR/mon.\$id
		mon data avail warn = 2
		mon data avail crit = 1

		[mgr]
		mgr data = $CDIR/mgr.\$id
		keyring = $CDIR/mgr.\$id/keyring
		mgr initial modules = iostat

		[osd]
		osd data = $CDIR/osd.\$id
		keyring = $CDIR/osd.\$id/keyring
		osd objectstore = bluestore
		bluestore block create = true
		bluestore block size = $(numfmt --from=iec "$OSD_SIZE")
		bluestore block db create = false
		bluestore block wal create = false
		bluestore fsck on mkfs = false
		osd memory target = 939524096

		[mds]
		mds data = $CDIR/mds.\$id
		keyring = $CDIR/mds.\$id/keyring
		mds cache memory limit = 134217728

		[client]
		# none: each ceph-fuse would lock the one file of client.admin
		pid file =
		admin socket = $CDIR/run/\$name.\$pid.asok
		log file = $CDIR/log/\$name.\$pid.log
	EOF
}

# Runs a daemon at nice 0 (it outlives the caller and serves every later
# test: see scripts/gluster.sh), without the lock's fd, in a session of its
# own: Ceph's daemons fork but keep their caller's process group, and a
# test harness that stops what its command left behind by group (as
# tests/mount/harness.sh does) stopped the MDS that `start-daemon` had
# started from a test (outage_test.py).  It forks and returns once it runs.
start_daemon() {
	local type=$1 id=$2

	setsid -w nice -n $((0 - $(nice))) "ceph-$type" -c "$CONF" -i "$id" 9>&- >>"$CDIR/start.log" 2>&1 ||
		die "ceph-$type -i $id failed to start (log: $CDIR/log/$type.$id.log)"
}

# Polls command "$@" until it succeeds, at most $1 seconds.
wait_for() {
	local secs=$1 what=$2 i
	shift 2

	for ((i = 0; i < secs * 5; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	die "$what not reached after $secs s (logs: $CDIR/log)"
}

mds_active() { cli mds stat && grep -q 'up:active' "$CDIR/ceph.out"; }

# Every placement group active: `pg stat` says "N pgs: N active+clean" (or
# active+...) with no other state.
pgs_active() {
	cli pg stat || return 1
	awk '{
		for (i = 1; i <= NF; i++) if ($i == "pgs:") { n = $(i - 1); break }
		sub(/^.*pgs: /, ""); sub(/;.*$/, "")
		split($0, parts, ",")
		sum = 0; bad = 0
		for (p in parts) { split(parts[p], kv, " "); sum += kv[1]; if (kv[2] !~ /^active/) bad = 1 }
		exit !(n > 0 && sum == n && !bad)
	}' "$CDIR/ceph.out"
}

start_cluster() {
	local fsid uuid key id

	stop_cluster	# what a dead cluster left
	mkdir -p "$CDIR/run" "$CDIR/log" "$CDIR/crash" "$CDIR/mon.a" "$CDIR/mgr.x" "$CDIR/osd.0" "$CDIR/mds.a" ||
		die "cannot make $CDIR"
	echo ours >"$CDIR/ours"
	echo "$CEPHX" >"$CDIR/cephx"
	fsid=$(cat /proc/sys/kernel/random/uuid)
	write_conf "$fsid"
	# The keyring holds mon. and client.admin whether cephx is on or not:
	# the monitor's store is made with it, and a later cluster with cephx
	# on finds the same layout.
	ceph-authtool --create-keyring "$CDIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null &&
		ceph-authtool "$CDIR/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
			--cap mds 'allow *' --cap mgr 'allow *' >/dev/null ||
		die "ceph-authtool failed to make $CDIR/keyring"
	chmod 600 "$CDIR/keyring"
	monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$PORT]" "$CDIR/monmap" >/dev/null 2>"$CDIR/ceph.out" ||
		die "monmaptool failed: $(last_line "$CDIR/ceph.out")"
	ceph-mon -c "$CONF" --mkfs -i a --monmap "$CDIR/monmap" --keyring "$CDIR/keyring" >"$CDIR/ceph.out" 2>&1 ||
		die "ceph-mon --mkfs failed: $(last_line "$CDIR/ceph.out")"
	start_daemon mon a
	wait_for 60 "the monitor's answer" cli mon stat

	cli auth get-or-create mgr.x mon 'allow profile mgr' mds 'allow *' osd 'allow *' -o "$CDIR/mgr.x/keyring" ||
		die "auth get-or-create mgr.x failed: $(last_line "$CDIR/ceph.out")"
	start_daemon mgr x

	# The OSD: its key given to `osd new` (which assigns id 0), then a
	# bluestore made on a sparse block file in its data directory.
	uuid=$(cat /proc/sys/kernel/random/uuid)
	key=$(ceph-authtool --gen-print-key) || die "ceph-authtool --gen-print-key failed"
	(umask 077 && printf '{"cephx_secret": "%s"}\n' "$key" >"$CDIR/osd-secret.json")
	timeout 120 ceph -c "$CONF" osd new "$uuid" -i "$CDIR/osd-secret.json" >"$CDIR/ceph.out" 2>&1 ||
		die "osd new failed: $(last_line "$CDIR/ceph.out")"
	rm -f "$CDIR/osd-secret.json"
	id=$(last_line "$CDIR/ceph.out")
	[ "$id" = 0 ] || die "osd new gave id '$id', want 0"
	ceph-osd -c "$CONF" -i 0 --mkfs --key "$key" --osd-uuid "$uuid" >"$CDIR/ceph.out" 2>&1 ||
		die "ceph-osd --mkfs failed: $(last_line "$CDIR/ceph.out")"
	(umask 077 && ceph-authtool --create-keyring "$CDIR/osd.0/keyring" -n osd.0 --add-key "$key" >/dev/null) ||
		die "ceph-authtool failed to make $CDIR/osd.0/keyring"
	key=
	start_daemon osd 0

	cli auth get-or-create mds.a mon 'allow profile mds' osd 'allow rw tag cephfs *=*' mds 'allow' \
		mgr 'allow profile mds' -o "$CDIR/mds.a/keyring" ||
		die "auth get-or-create mds.a failed: $(last_line "$CDIR/ceph.out")"
	start_daemon mds a

	cli osd pool create "${FS}_meta" 16 && cli osd pool create "${FS}_data" 32 ||
		die "osd pool create failed: $(last_line "$CDIR/ceph.out")"
	cli fs new "$FS" "${FS}_meta" "${FS}_data" || die "fs new $FS failed: $(last_line "$CDIR/ceph.out")"
	wait_for 120 "an active MDS" mds_active
	wait_for 120 "every placement group active" pgs_active
}

# The rest of a failed start: nothing of it may stay.
# shellcheck disable=SC2317  # run by trap
undo_start() {
	rm -rf "$WORK/failed-start"
	mkdir -p "$WORK/failed-start" && cp -r "$CDIR/log" "$CDIR/start.log" "$WORK/failed-start/" 2>/dev/null
	echo "$prog: the cluster did not start: stopping what was started (its logs: $WORK/failed-start)" >&2
	rm -f "$CDIR/users/$(user_id)"
	stop_cluster
}

# Refuses to go on while a daemon is down on purpose (kill-daemon): the
# cluster is not to be started afresh under the test that killed it.
not_killed() {
	local killed

	killed=$(cat "$CDIR/killed" 2>/dev/null) || return 0
	die "$1: the cluster's ${killed%% *} was stopped on purpose by 'kill-daemon' (WORKDIR ${killed#* }); try again once it has run 'start-daemon' or 'down'"
}

cmd_up() {
	local have

	[ $# -eq 0 ] || { echo "$prog: usage: up" >&2; exit 2; }
	mkdir -p "$WORK" || die "cannot make WORKDIR $WORK"
	lock
	not_killed up
	if cluster_up; then
		have=$(cat "$CDIR/cephx" 2>/dev/null)
		[ "$have" = "$CEPHX" ] ||
			die "the cluster in $CDIR runs with cephx $have, not $CEPHX: 'down' its users first"
	else
		[ -n "$(ls -A "$CDIR/users")" ] &&
			echo "$prog: the cluster in $CDIR is not running, though $(ls "$CDIR/users" | wc -l) WORKDIR(s) used it: starting it afresh" >&2
		rm -f "$CDIR"/users/*
		trap undo_start EXIT
		start_cluster
		trap - EXIT
	fi
	: >"$CDIR/users/$(user_id)"
	echo "127.0.0.1:$PORT"
}

cmd_status() {
	local d pid

	[ $# -eq 0 ] || { echo "$prog: usage: status" >&2; exit 2; }
	if ! cluster_up; then
		echo "not running (SC_CEPH_DIR $CDIR)"
		exit 3
	fi
	echo "running: monitor 127.0.0.1:$PORT, cephx $(cat "$CDIR/cephx"), file system $FS, SC_CEPH_DIR $CDIR"
	for d in mon.a mgr.x osd.0 mds.a; do
		pid=$(daemon_pid "$d")
		echo "$d pid $pid, $(awk '/^VmRSS/ { print $2 / 1024 " MiB resident" }' "/proc/$pid/status")"
	done
	echo "users: $(ls "$CDIR/users" | wc -l)"
	cli health && echo "health: $(head -n 1 "$CDIR/ceph.out")"
}

# libcephfs through Debian's python: `fs_dir mk PATH` makes directory PATH
# of the file system and prints the first of its parts that was missing
# (exit 0), or exits 10 if it exists already; `fs_dir rm
# PATH` removes directory PATH and all it holds.
fs_dir() {
	"$PY" - "$CONF" "$FS" "$1" "$2" <<-'EOF'
		import sys, cephfs
		conf, name, op, path = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].encode()
		fs = cephfs.LibCephFS(conffile=conf, auth_id="admin")
		fs.mount(filesystem_name=name.encode())
		def rmtree(p):
		    d = fs.opendir(p)
		    names = []
		    e = fs.readdir(d)
		    while e:
		        if e.d_name not in (b".", b".."):
		            names.append((e.d_name, e.is_dir()))
		        e = fs.readdir(d)
		    fs.closedir(d)
		    for n, isdir in names:
		        q = p + b"/" + n
		        if isdir:
		            rmtree(q)
		            fs.rmdir(q)
		        else:
		            fs.unlink(q)
		rc = 0
		try:
		    if op == "rm":
		        rmtree(path)
		        fs.rmdir(path)
		    else:
		        # prints the first part it makes, which `down` removes
		        top = b""
		        for part in path.strip(b"/").split(b"/"):
		            top += b"/" + part
		            try:
		                fs.stat(top)
		            except cephfs.ObjectNotFound:
		                fs.mkdirs(path, 0o755)
		                print(top.decode())
		                break
		        else:
		            rc = 10
		except cephfs.Error as e:
		    print("%s: %s" % (path.decode(errors="replace"), e), file=sys.stderr)
		    rc = 1
		finally:
		    fs.shutdown()
		sys.exit(rc)
	EOF
}

valid_path() {
	[[ $1 =~ ^[A-Za-z0-9._/-]{0,200}$ ]] && [[ ! $1 =~ (^|/)\.\.?(/|$) ]] || {
		echo "$prog: bad path '$1': letters, digits, '.', '-', '_' and '/' only, no . or .. parts" >&2
		exit 2
	}
}

cmd_mount() {
	local spec=${1:-} dir=${2:-} fs path

	[ $# -eq 2 ] || { echo "$prog: usage: mount FS/PATH DIR" >&2; exit 2; }
	fs=${spec%%/*}
	path=/${spec#"$fs"}
	path=$(printf '%s' "$path" | tr -s /)
	path=${path%/}
	[ "$fs" = "$FS" ] || { echo "$prog: mount: the file system is '$FS', not '$fs'" >&2; exit 2; }
	valid_path "$path"
	[ -d "$dir" ] || die "mount: $dir is not a directory"
	dir=$(realpath "$dir")
	is_mounted "$dir" && die "mount: $dir is already a mount point"
	not_killed mount
	[ -e "$CDIR/users/$(user_id)" ] && cluster_up || die "mount: the cluster is not up for $WORK (run 'up' first)"
	if [ -n "$path" ]; then
		fs_dir mk "$path" >>"$WORK/dirs" 2>"$WORK/mkdir.err"
		case $? in
		0 | 10) ;;
		*) die "mount: cannot make $path: $(tail -n 1 "$WORK/mkdir.err")" ;;
		esac
	fi
	echo "$dir" >>"$WORK/mounts"
	ceph-fuse -c "$CONF" --id admin --client_fs="$FS" -r "${path:-/}" "$dir" >"$WORK/ceph-fuse.out" 2>&1 ||
		die "ceph-fuse $FS:${path:-/} on $dir failed: $(tail -n 1 "$WORK/ceph-fuse.out")"
	is_mounted "$dir" || die "ceph-fuse $FS:${path:-/} on $dir: no mount appeared"
}

valid_daemon() {
	case $1 in osd.0 | mds.a) return 0 ;; esac
	echo "$prog: $2: the daemon is osd.0 or mds.a, not '$1'" >&2
	exit 2
}

# True if daemon $1's admin socket reports state $2 ("active" for an OSD
# that is up in the map, "up:active" for an MDS serving its rank).
daemon_state() {
	timeout 30 ceph -c "$CONF" daemon "$1" status >"$CDIR/ceph.out" 2>&1 &&
		grep -qF "\"state\": \"$2\"" "$CDIR/ceph.out"
}

cmd_kill_daemon() {
	local name=${1:-} pid u others=0

	[ $# -eq 1 ] || { echo "$prog: usage: kill-daemon osd.0|mds.a" >&2; exit 2; }
	valid_daemon "$name" kill-daemon
	lock
	not_killed kill-daemon
	[ -e "$CDIR/users/$(user_id)" ] && cluster_up || die "kill-daemon: the cluster is not up for $WORK (run 'up' first)"
	for u in "$CDIR"/users/*; do
		[ -e "$u" ] && [ "${u##*/}" != "$(user_id)" ] && others=$((others + 1))
	done
	((others == 0)) || die "kill-daemon: $others other WORKDIR(s) use the cluster, and would see the outage"
	pid=$(daemon_pid "$name") || die "kill-daemon: $name is not running"
	echo "$name $(user_id)" >"$CDIR/killed"
	kill -KILL "$pid"
	wait_gone "$pid" 60 || die "kill-daemon: $name (pid $pid) did not end 60 s after SIGKILL"
}

cmd_start_daemon() {
	local name=${1:-} killed t0=$SECONDS

	[ $# -eq 1 ] || { echo "$prog: usage: start-daemon osd.0|mds.a" >&2; exit 2; }
	valid_daemon "$name" start-daemon
	lock
	killed=$(cat "$CDIR/killed" 2>/dev/null) || die "start-daemon: no daemon was stopped by 'kill-daemon'"
	[ "$killed" = "$name $(user_id)" ] ||
		die "start-daemon: 'kill-daemon' stopped ${killed%% *} for WORKDIR ${killed#* }, not $name for this one"
	start_daemon "${name%%.*}" "${name#*.}"
	case $name in
	osd.0)
		wait_for 300 "osd.0 active again" daemon_state osd.0 active
		wait_for 300 "every placement group active again" pgs_active
		;;
	mds.a) wait_for 300 "mds.a up:active again" daemon_state mds.a up:active ;;
	esac
	rm -f "$CDIR/killed"
	echo "$name serves again after $((SECONDS - t0)) s"
}

cmd_down() {
	local dir path rc=0

	[ $# -eq 0 ] || { echo "$prog: usage: down" >&2; exit 2; }
	if [ -d "$WORK" ] && [ -s "$WORK/mounts" ]; then
		while read -r dir; do
			unmount_dir "$dir"
			is_mounted "$dir" && { echo "$prog: $dir is still mounted" >&2; rc=1; }
		done < <(tac "$WORK/mounts")
	fi
	[ -d "$CDIR" ] || { rm -rf "$WORK"; return $rc; }
	lock
	rm -f "$CDIR/users/$(user_id)"
	if [ -z "$(ls -A "$CDIR/users")" ]; then
		stop_cluster
	elif [ -s "$WORK/dirs" ]; then
		if cluster_up; then
			while read -r path; do
				fs_dir rm "$path" >"$WORK/rmdir.err" 2>&1 ||
					{ echo "$prog: cannot remove $path: $(tail -n 1 "$WORK/rmdir.err")" >&2; rc=1; }
			done < <(tac "$WORK/dirs")
		fi
	fi
	if ((rc == 0)) && [ -d "$WORK" ]; then
		rm -f "$WORK/mounts" "$WORK/mounts.tmp" "$WORK/dirs" "$WORK/mkdir.err" "$WORK/rmdir.err" "$WORK/ceph-fuse.out"
		rm -rf "$WORK/failed-start"
		rmdir "$WORK" 2>/dev/null
	fi
	return $rc
}

if [ "$cmd" != down ] && [ "$cmd" != status ]; then
	check_host
	check_tools
fi
case $cmd in
check) echo "$prog: $HOST resolves to loopback; Ceph $(ceph --version | awk '{ print $3 }') is installed" ;;
up) cmd_up "$@" ;;
status) cmd_status "$@" ;;
mount) cmd_mount "$@" ;;
umount) cmd_umount "$@" ;;
kill-daemon) cmd_kill_daemon "$@" ;;
start-daemon) cmd_start_daemon "$@" ;;
down) cmd_down "$@" ;;
esac
