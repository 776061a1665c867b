#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ceph_iodepth.sh - issue #34's two Ceph tables on scripts/ceph.sh's
# one-node cluster (root; ceph-fuse mounts only):
#
#   bash bench/ceph_iodepth.sh OUTDIR [iodepth] [osdops] [wamp]
#                                  (iodepth and wamp by default)
#
# iodepth  the cephx table: fio 4 KiB randread, randwrite and randrw
#          (70/30), one job, libaio, direct=1, at each depth of DEPTHS, on
#          one file of SIZE MiB laid out first; IOPS and fio's total latency
#          (lat_ns: mean, p99), as bench/lib/benchmarks.sh's fioqd does.  For
#          each cephx setting of CEPHX the cluster is started afresh (`down`,
#          then `up --cephx=...`) and REPS repetitions run every system of
#          SYSTEMS in turn, the order rotated by one each repetition:
#            cephfuse      the ceph-fuse mount itself
#            passthrough   stackcrypt --stack=passthrough over ceph-fuse
#            xts, default  stackcrypt aes-xts / a bare init (aes-gcm, names
#                          encrypted) over the ceph-fuse mount (two FUSE hops)
#            xts-url, default-url  the same through the cephfs:// translator
#            gocryptfs     gocryptfs (-scryptn 10) over the ceph-fuse mount
# wamp     write amplification, in the cluster of the last cephx setting:
#          for each system of WA_SYSTEMS, a file of WA_MIB MiB laid out and
#          the OSD left to settle, then overwritten once with 4 KiB random
#          writes and once with 4 MiB sequential writes (fio, libaio,
#          iodepth 16, direct=1, end_fsync=1), each followed by the settle
#          wait; per write size the bytes the ceph-osd process wrote to its
#          bluestore block file (/proc/PID/io write_bytes: its O_DIRECT aio
#          writes, data, deferred-write WAL and RocksDB alike) and the bytes
#          its clients sent it (perf dump osd.op_w_in_bytes), and of the
#          first what BlueFS wrote of RocksDB's log and tables, per byte the
#          application wrote.
# osdops   (only when named) for each system of OPS_SYSTEMS, fio 4 KiB
#          randread then randwrite at iodepth 16 against the OSD's counts of
#          client reads and writes: which of the application's I/Os reach
#          the OSD at all (a page cache above ceph-fuse serves the rest).
#
# Environment (defaults): DEPTHS (1 4 8 16 32 64 128), SIZE (256), RUNTIME
# (3 s per point), RAMP (1 s), REPS (2), CEPHX (off on), SYSTEMS (all seven
# above), WA_SYSTEMS (cephfuse xts default xts-url default-url), WA_MIB
# (64), OPS_SYSTEMS (cephfuse xts xts-url gocryptfs), SC_BIN
# (build-rel/fs/stackcrypt).  Writes OUTDIR/raw.tsv (cephx rep system rw
# depth iops mean_us p99_us riops wiops direct), OUTDIR/wa.tsv (system bs
# settle_s device_bytes client_bytes app_bytes rocksdb_log rocksdb_tables),
# OUTDIR/osdops.tsv (system rw fio_ios osd_reads osd_writes), OUTDIR/run.log
# (the load, each step), OUTDIR/fio/*.json; then
# bench/ceph_iodepth.py OUTDIR makes the tables and the chart.  Nothing is
# left mounted and the cluster is stopped on every exit (`down`, which
# stops it only if this script started it).
set -uo pipefail
OUT=${1:?usage: ceph_iodepth.sh OUTDIR [iodepth] [osdops] [wamp]}
shift
PARTS=${*:-iodepth wamp}	# osdops: see run_osdops
top=$(cd "$(dirname "$0")/.." && pwd)
SC=${SC_BIN:-$top/build-rel/fs/stackcrypt}
CS=$top/scripts/ceph.sh
DEPTHS=${DEPTHS:-1 4 8 16 32 64 128}
SIZE=${SIZE:-256}
RUNTIME=${RUNTIME:-3}
RAMP=${RAMP:-1}
REPS=${REPS:-2}
CEPHX=${CEPHX:-off on}
SYSTEMS=${SYSTEMS:-cephfuse passthrough xts default xts-url default-url gocryptfs}
WA_SYSTEMS=${WA_SYSTEMS:-cephfuse xts default xts-url default-url}
WA_MIB=${WA_MIB:-64}
OPS_SYSTEMS=${OPS_SYSTEMS:-cephfuse xts xts-url gocryptfs}
CDIR=${SC_CEPH_DIR:-/var/tmp/stackcrypt-ceph}
export CEPH_CONF=$CDIR/ceph.conf
W=$(mktemp -d /tmp/sc-cephqd.XXXXXX)
CW=$W/ceph
FUSE=$W/fuse
MNT=$W/mnt
SUB=sc-qd-$$
URL=cephfs://admin@127.0.0.1:${SC_CEPH_PORT:-3301}/scfs/$SUB
VIEW=
VPID=
# bl_json_eval: fio's JSON to "IOPS P50 P99 MEAN RIOPS WIOPS" (µs)
# shellcheck source=lib/benchmarks.sh
. "$top/bench/lib/benchmarks.sh"

mkdir -p "$OUT/fio" "$FUSE" "$MNT"
log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$OUT/run.log" >&2; }
die() { log "ceph_iodepth: $*"; exit 1; }
cleanup() {
	view_down
	mountpoint -q "$FUSE" && "$CS" -w "$CW" umount "$FUSE"
	"$CS" -w "$CW" down
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$W/key"
head -c 24 /dev/urandom | base64 >"$W/pass"

# view_up SYSTEM DIR: VIEW is where fio runs for SYSTEM on the fresh
# directory DIR of the ceph-fuse mount; a daemon runs in the foreground
# (VPID) until view_down.
view_up() {
	local sys=$1 dir=$2 src=$FUSE/$2 init=()
	VIEW=$MNT
	case $sys in
	cephfuse) VIEW=$FUSE/$dir; return 0 ;;
	gocryptfs)
		gocryptfs -init -q -passfile "$W/pass" -scryptn 10 "$src" || return 1
		gocryptfs -fg -q -passfile "$W/pass" "$src" "$MNT" >>"$OUT/daemon.log" 2>&1 &
		;;
	passthrough)
		"$SC" mount -f --stack=passthrough "$src" "$MNT" >>"$OUT/daemon.log" 2>&1 &
		;;
	xts | default | xts-url | default-url)
		case $sys in xts*) init=(--cipher=aes-xts) ;; esac
		case $sys in *-url) src=$URL/$dir ;; esac
		"$SC" init "${init[@]}" --keyfile="$W/key" "$src" >>"$OUT/daemon.log" 2>&1 || return 1
		"$SC" mount -f --keyfile="$W/key" "$src" "$MNT" >>"$OUT/daemon.log" 2>&1 &
		;;
	*) die "unknown system $sys" ;;
	esac
	VPID=$!
	while ! mountpoint -q "$MNT"; do
		kill -0 "$VPID" 2>/dev/null || { VPID=; return 1; }
		sleep 0.1
	done
}
view_down() {
	[ -n "$VPID" ] || return 0
	mountpoint -q "$MNT" && fusermount3 -u "$MNT"
	wait "$VPID"
	VPID=
}
# direct_ok: the view reads and writes with O_DIRECT
direct_ok() {
	local p=$VIEW/.directprobe rc=0
	dd if=/dev/zero of="$p" bs=4096 count=1 oflag=direct 2>/dev/null &&
		dd if="$p" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null || rc=1
	rm -f "$p"
	return $rc
}
cluster_up() {
	"$CS" -w "$CW" down || die "down failed"
	"$CS" -w "$CW" --cephx="$1" up >>"$OUT/run.log" 2>&1 || die "up --cephx=$1 failed"
	"$CS" -w "$CW" mount "scfs/$SUB" "$FUSE" || die "ceph-fuse mount failed"
	log "cluster up, cephx $1: $(grep -E '^\s*auth (cluster|client|service) required' "$CEPH_CONF" | tr -s ' \t\n' ' ')"
}

# one_point CEPHX REP SYS RW DEPTH DIRECT
one_point() {
	local cx=$1 rep=$2 sys=$3 rw=$4 d=$5 direct=$6 json vals
	json=$OUT/fio/$cx-$rep-$sys-$rw-$d.json
	fio --name="$rw" --filename="$VIEW/qd.dat" --size="${SIZE}M" \
		--rw="$rw" --rwmixread=70 --bs=4k --ioengine=libaio \
		--iodepth="$d" --direct="$direct" --numjobs=1 --lat_percentiles=1 \
		--time_based --runtime="$RUNTIME" --ramp_time="$RAMP" \
		--output-format=json --output="$json" >/dev/null 2>>"$OUT/run.log" || return 1
	vals=$(bl_json_eval "$json" "$rw" lat_ns) || return 1
	set -- $vals
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$cx" "$rep" "$sys" "$rw" "$d" "$1" "$4" "$3" "$5" "$6" "$direct" >>"$OUT/raw.tsv"
}

run_iodepth() {
	local cx rep sys i n order direct rw d t0
	n=$(wc -w <<<"$SYSTEMS")
	for cx in $CEPHX; do
		cluster_up "$cx"
		for ((rep = 1; rep <= REPS; rep++)); do
			# rotate the order by one each repetition
			read -ra all <<<"$SYSTEMS"
			order=
			for ((i = 0; i < n; i++)); do order+=" ${all[(i + rep - 1) % n]}"; done
			for sys in $order; do
				t0=$SECONDS
				mkdir "$FUSE/qd-$cx-$rep-$sys" || die "mkdir"
				view_up "$sys" "qd-$cx-$rep-$sys" || die "$sys: mount failed: $(tail -2 "$OUT/daemon.log")"
				direct=1
				direct_ok || { direct=0; log "$sys: no O_DIRECT: buffered, the engine synchronous"; }
				fio --name=layout --filename="$VIEW/qd.dat" --size="${SIZE}M" --rw=write --bs=1M \
					--ioengine=psync --end_fsync=1 >/dev/null 2>>"$OUT/run.log" || die "$sys: layout failed"
				for rw in randread randwrite randrw; do
					for d in $DEPTHS; do
						one_point "$cx" "$rep" "$sys" "$rw" "$d" "$direct" || die "$sys $rw qd$d failed"
					done
				done
				rm -f "$VIEW/qd.dat"
				view_down
				log "cephx $cx rep $rep $sys done in $((SECONDS - t0)) s; load: $(cut -d' ' -f1-3 /proc/loadavg)"
			done
		done
	done
}

osd_pid() { cat "$CDIR/run/osd.0.pid"; }
osd_wbytes() { awk '$1 == "write_bytes:" { print $2 }' "/proc/$(osd_pid)/io"; }
# osd_opin: "CLIENT WAL SST": the bytes the OSD's clients sent it
# (osd.op_w_in_bytes), and what BlueFS wrote of RocksDB's log and of its
# tables (compaction) into the same block file
osd_opin() {
	ceph --admin-daemon "$CDIR/run/osd.0.asok" perf dump 2>/dev/null |
		python3 -c 'import json,sys; d=json.load(sys.stdin); b=d["bluefs"]
print(d["osd"]["op_w_in_bytes"], b["bytes_written_wal"], b["bytes_written_sst"])'
}
# settle: waits until the OSD has written less than 64 KiB in each of two
# successive seconds (bluestore applies deferred small writes after their
# commit), at most 60 s; prints the seconds waited
settle() {
	local a b quiet=0 t=0
	a=$(osd_wbytes)
	while ((quiet < 2 && t < 60)); do
		sleep 1
		t=$((t + 1))
		b=$(osd_wbytes)
		if ((b - a < 65536)); then quiet=$((quiet + 1)); else quiet=0; fi
		a=$b
	done
	echo "$t"
}

run_wamp() {
	local sys bs rw w0 w1 o0 o1 l0 l1 t0 t1 s idle0 idle1 rep=1
	# the idle rate: what the OSD writes with no client writing, 20 s
	settle >/dev/null
	idle0=$(osd_wbytes)
	sleep 20
	idle1=$(osd_wbytes)
	log "wamp: OSD idle writes $((idle1 - idle0)) bytes in 20 s"
	printf 'idle\t-\t20\t%s\t0\t0\t0\t0\n' "$((idle1 - idle0))" >>"$OUT/wa.tsv"
	for sys in $WA_SYSTEMS; do
		mkdir "$FUSE/wa-$sys" || die "mkdir"
		view_up "$sys" "wa-$sys" || die "$sys: mount failed: $(tail -2 "$OUT/daemon.log")"
		direct_ok || die "$sys: no O_DIRECT"
		fio --name=layout --filename="$VIEW/wa.dat" --size="${WA_MIB}M" --rw=write --bs=1M \
			--ioengine=psync --end_fsync=1 >/dev/null 2>>"$OUT/run.log" || die "$sys: layout failed"
		settle >/dev/null
		for bs in 4k 4m; do
			rw=randwrite
			[ "$bs" = 4m ] && rw=write
			w0=$(osd_wbytes)
			read -r o0 l0 t0 <<<"$(osd_opin)"
			fio --name="wa$bs" --filename="$VIEW/wa.dat" --size="${WA_MIB}M" --rw="$rw" --bs="$bs" \
				--ioengine=libaio --iodepth=16 --direct=1 --end_fsync=1 \
				--output-format=json --output="$OUT/fio/wa-$sys-$bs.json" >/dev/null 2>>"$OUT/run.log" ||
				die "$sys wa $bs failed"
			s=$(settle)
			w1=$(osd_wbytes)
			read -r o1 l1 t1 <<<"$(osd_opin)"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sys" "$bs" "$s" "$((w1 - w0))" "$((o1 - o0))" \
				"$((WA_MIB * 1048576))" "$((l1 - l0))" "$((t1 - t0))" >>"$OUT/wa.tsv"
			log "wamp $sys $bs: device $((w1 - w0)) B, client ops $((o1 - o0)) B, settled in $s s"
		done
		rm -f "$VIEW/wa.dat"
		view_down
	done
	: "$rep"
}

# osdops: for each system of OPS_SYSTEMS, fio 4 KiB randread then randwrite
# at iodepth 16 for RUNTIME s (direct=1, libaio) on a file of SIZE MiB laid
# out first, against the OSD's counters of client reads and writes (perf
# dump osd.op_r, op_w) over the same fio run: how many of the
# application's I/Os reached the OSD at all.
osd_ops() {
	ceph --admin-daemon "$CDIR/run/osd.0.asok" perf dump osd 2>/dev/null |
		python3 -c 'import json,sys; o=json.load(sys.stdin)["osd"]; print(o["op_r"], o["op_w"])'
}
run_osdops() {
	local sys rw a b ios
	for sys in $OPS_SYSTEMS; do
		mkdir "$FUSE/ops-$sys" || die "mkdir"
		view_up "$sys" "ops-$sys" || die "$sys: mount failed: $(tail -2 "$OUT/daemon.log")"
		fio --name=layout --filename="$VIEW/ops.dat" --size="${SIZE}M" --rw=write --bs=1M \
			--ioengine=psync --end_fsync=1 >/dev/null 2>>"$OUT/run.log" || die "$sys: layout failed"
		for rw in randread randwrite; do
			a=$(osd_ops)
			fio --name="$rw" --filename="$VIEW/ops.dat" --size="${SIZE}M" --rw="$rw" --bs=4k \
				--ioengine=libaio --iodepth=16 --direct=1 --time_based --runtime="$RUNTIME" \
				--output-format=json --output="$OUT/fio/ops-$sys-$rw.json" >/dev/null 2>>"$OUT/run.log" ||
				die "$sys ops $rw failed"
			b=$(osd_ops)
			ios=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(j["read"]["total_ios"] + j["write"]["total_ios"])' \
				"$OUT/fio/ops-$sys-$rw.json")
			set -- $a $b
			printf '%s\t%s\t%s\t%s\t%s\n' "$sys" "$rw" "$ios" "$(($3 - $1))" "$(($4 - $2))" >>"$OUT/osdops.tsv"
			log "osdops $sys $rw: fio $ios I/Os, OSD reads $(($3 - $1)), OSD writes $(($4 - $2))"
		done
		rm -f "$VIEW/ops.dat"
		view_down
	done
}

[ "$(id -u)" = 0 ] || die "run as root (ceph-fuse, the cluster)"
[ -x "$SC" ] || die "no stackcrypt binary $SC"
"$SC" --version | grep -q '+cephfs' || die "$SC has no cephfs:// (build with libcephfs-dev)"
{
	echo "# $(date -u +%FT%TZ) $0 $OUT $PARTS"
	echo "# SIZE=$SIZE RUNTIME=$RUNTIME RAMP=$RAMP REPS=$REPS DEPTHS='$DEPTHS' CEPHX='$CEPHX'"
	echo "# SYSTEMS='$SYSTEMS' WA_SYSTEMS='$WA_SYSTEMS' WA_MIB=$WA_MIB"
	echo "# $("$SC" --version | tr '\n' ' '); $(fio --version); gocryptfs $(gocryptfs -version 2>/dev/null | head -1)"
	echo "# $(ceph --version)"
	echo "# uptime: $(uptime)"
} >>"$OUT/run.log"
case " $PARTS " in *" iodepth "*) run_iodepth ;; esac
case " $PARTS " in *" osdops "*)
	mountpoint -q "$FUSE" || cluster_up "${CEPHX##* }"
	run_osdops
	;;
esac
case " $PARTS " in *" wamp "*)
	# in the cluster of the last cephx setting if the table ran, else anew
	mountpoint -q "$FUSE" || cluster_up "${CEPHX##* }"
	run_wamp
	;;
esac
log "done; uptime: $(uptime)"
