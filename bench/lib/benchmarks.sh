# SPDX-License-Identifier: GPL-2.0-or-later
# The benchmarks (sourced by bench/run.sh). Each bench_NAME runs in the
# plaintext view $VIEW of the current system and records its figures with
# bl_record / bl_timed (lib/common.sh); row names are "bench.phase" and the
# report (lib/report.sh) knows how to label them. Untimed housekeeping (rm,
# sync between phases) keeps one phase's dirty pages out of the next one.

# ---------------------------------------------------------------- 1. dd
# The 2012 crypt-translator test: dd bs=4K count=200000 from /dev/zero,
# written with and without conv=fdatasync, read back with caches dropped;
# then the same bytes with bs=128K and bs=1M. The write without fdatasync
# is the 2012 figure; its flush is left to the sync that follows (untimed)
# but is included in the write amplification.
bench_dd()
{
	local f=$VIEW/largefile bs bsb count bytes w0 w1
	for bs in 4K 128K 1M; do
		case $bs in 4K) bsb=4096 ;; 128K) bsb=131072 ;; 1M) bsb=1048576 ;; esac
		count=$((DD_BYTES / bsb))
		bytes=$((count * bsb))
		local tag=${bs,,}
		rm -f "$f"
		sync

		w0=$(bl_dev_written)
		bl_timed "dd.w.$tag" dd if=/dev/zero of="$f" bs="$bs" count="$count" || return 1
		bl_record "dd.w.$tag" mbps "$(awk -v b=$bytes -v t=$T_ELAPSED 'BEGIN{printf "%.1f", b/t/1e6}')"
		sync
		w1=$(bl_dev_written)
		bl_record_wa "dd.w.$tag" "$w0" "$w1" "$bytes"
		rm -f "$f"
		sync

		w0=$(bl_dev_written)
		bl_timed "dd.wf.$tag" dd if=/dev/zero of="$f" bs="$bs" count="$count" conv=fdatasync || return 1
		bl_record "dd.wf.$tag" mbps "$(awk -v b=$bytes -v t=$T_ELAPSED 'BEGIN{printf "%.1f", b/t/1e6}')"
		sync
		w1=$(bl_dev_written)
		bl_record_wa "dd.wf.$tag" "$w0" "$w1" "$bytes"

		bl_drop_caches
		bl_timed "dd.r.$tag" dd if="$f" of=/dev/null bs="$bs" || return 1
		bl_record "dd.r.$tag" mbps "$(awk -v b=$bytes -v t=$T_ELAPSED 'BEGIN{printf "%.1f", b/t/1e6}')"
	done
	rm -f "$f"
	sync
}

# bl_record_wa ROW W0 W1 BYTES: loop-device bytes written per byte written.
bl_record_wa()
{
	[ -n "$LOOPDEV" ] || return 0
	bl_record "$1" wa "$(awk -v a="$2" -v b="$3" -v n="$4" 'BEGIN{printf "%.4f", (b-a)/n}')"
}

# ---------------------------------------------------------------- 2. mongo
# Small files after ReiserFS's mongo: N files (sizes 0-32 KiB, mean 8 KiB,
# fixed seed, see bench/smallfiles.c) in 16x16 directories. Phases: create
# (+sync), copy (cp -a, no reflinks), read every byte of the copy (verified)
# and stat every file after a cache drop, rename every file, delete.
bench_mongo()
{
	local a=$VIEW/mongo/a b=$VIEW/mongo/b w0 w1 n=$MONGO_N
	mkdir -p "$a" || return 1
	sync
	w0=$(bl_dev_written)
	bl_timed mongo.create sh -c '"$1" create "$2" "$3" "$4" && sync' sh \
		"$SMALLFILES" "$a" "$n" "$MONGO_SEED" || return 1
	bl_mongo_rate mongo.create
	w1=$(bl_dev_written)
	bl_record_wa mongo.create "$w0" "$w1" "$MONGO_BYTES"

	bl_timed mongo.copy cp -a --reflink=never "$a" "$b" || return 1
	bl_mongo_rate mongo.copy
	sync

	bl_drop_caches
	bl_timed mongo.read "$SMALLFILES" read "$b" "$n" "$MONGO_SEED" || return 1
	bl_mongo_rate mongo.read

	bl_drop_caches
	bl_timed mongo.stat "$SMALLFILES" stat "$a" "$n" "$MONGO_SEED" || return 1
	bl_mongo_rate mongo.stat

	bl_timed mongo.rename "$SMALLFILES" rename "$a" "$n" "$MONGO_SEED" || return 1
	bl_mongo_rate mongo.rename

	bl_timed mongo.delete "$SMALLFILES" delete "$a" "$n" "$MONGO_SEED" || return 1
	bl_mongo_rate mongo.delete
	rm -rf "$VIEW/mongo"
	sync
}

bl_mongo_rate()
{
	bl_record "$1" fps "$(awk -v n="$MONGO_N" -v t="$T_ELAPSED" 'BEGIN{printf "%.0f", n/t}')"
}

# ---------------------------------------------------------------- 2b. bigdir
# One directory of BIGDIR_N empty files (names of 9-33 bytes, fixed seed, see
# bench/smallfiles.c): what a name-encrypting layer pays per lookup and per
# directory entry. Phases: create every entry (+sync), lstat every name
# after a cache drop (each one a LOOKUP through the daemon), list the whole
# directory with getdents64 after a cache drop (the count is checked), and
# unlink every entry.
bench_bigdir()
{
	local d=$VIEW/bigdir n=$BIGDIR_N
	mkdir -p "$d" || return 1
	sync
	bl_timed bigdir.create sh -c '"$1" bigdir-create "$2" "$3" "$4" && sync' sh \
		"$SMALLFILES" "$d" "$n" "$MONGO_SEED" || return 1
	bl_bigdir_rate bigdir.create

	bl_drop_caches
	bl_timed bigdir.stat "$SMALLFILES" bigdir-stat "$d" "$n" "$MONGO_SEED" || return 1
	bl_bigdir_rate bigdir.stat

	bl_drop_caches
	bl_timed bigdir.list "$SMALLFILES" bigdir-list "$d" "$n" "$MONGO_SEED" || return 1
	bl_bigdir_rate bigdir.list

	bl_timed bigdir.delete "$SMALLFILES" bigdir-delete "$d" "$n" "$MONGO_SEED" || return 1
	bl_bigdir_rate bigdir.delete
	rmdir "$d" || return 1
	sync
}

bl_bigdir_rate()
{
	bl_record "$1" fps "$(awk -v n="$BIGDIR_N" -v t="$T_ELAPSED" 'BEGIN{printf "%.0f", n/t}')"
}

# ---------------------------------------------------------------- 3. tree
# A real tree, the shape of gocryptfs's benchmark: untar /usr/include (the
# tarball is made once, in the scratch dir outside every system), ls -lR
# (warm), read every file after a cache drop, rm -rf.
bench_tree()
{
	local t=$VIEW/tree
	mkdir -p "$t" || return 1
	bl_timed tree.untar tar -C "$t" -xf "$TREE_TAR" || return 1
	bl_timed tree.lsR sh -c 'ls -lR "$1" >/dev/null' sh "$t" || return 1
	sync
	bl_drop_caches
	bl_timed tree.read sh -c 'find "$1" -type f -print0 | xargs -0 -r cat >/dev/null' sh "$t" || return 1
	bl_timed tree.rm rm -rf "$t" || return 1
	sync
}

# ---------------------------------------------------------------- 4. fio
# 4 KiB random read, write and 70/30 mix with psync on one shared file of
# FIO_SIZE MiB, 1 and 4 jobs; O_DIRECT when the view accepts it (so the
# encryption path is measured, not the page cache), buffered with a cache
# drop otherwise (recorded as fio.direct 0). Then one verified run.
bench_fio()
{
	local f=$VIEW/fio.dat direct=1 rw jobs row json
	local tag
	tag=$(bl_fio_tag)
	bl_direct_ok || direct=0
	bl_record fio.info direct "$direct"

	bl_timed fio.layout fio --name=layout --filename="$f" --size="${FIO_SIZE}M" \
		--rw=write --bs=1M --ioengine=psync --end_fsync=1 || return 1
	for rw in randread randwrite randrw; do
		for jobs in 1 4; do
			row=fio.$rw.j$jobs
			json=$OUT/fio/$tag-$rw-j$jobs.json
			[ "$direct" = 0 ] && bl_drop_caches
			bl_timed "$row" fio --name="$rw" --filename="$f" --size="${FIO_SIZE}M" \
				--rw="$rw" --rwmixread=70 --bs=4k --ioengine=psync \
				--direct="$direct" --numjobs="$jobs" --group_reporting \
				--time_based --runtime="$FIO_RUNTIME" --ramp_time=1 \
				--output-format=json --output="$json" || return 1
			bl_fio_record "$row" "$json" "$rw" || return 1
		done
	done
	rm -f "$f"

	f=$VIEW/fio-verify.dat
	bl_timed fio.verify fio --name=verify --filename="$f" --size="${FIO_VERIFY_SIZE}M" \
		--rw=randwrite --bs=4k --ioengine=psync --direct="$direct" \
		--verify=xxhash --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		--output-format=json --output="$OUT/fio/$tag-verify.json"
	local rc=$?
	bl_record fio.verify ok "$([ $rc = 0 ] && echo 1 || echo 0)"
	rm -f "$f"
	sync
	return $rc
}

# ---------------------------------------------------------------- 5. fioqd
# Issue #17's table, after the Ceph cephx measurement: 4 KiB random read,
# write and 70/30 mix at each I/O depth of QD_DEPTHS, one job, the
# asynchronous engine QD_ENGINE (libaio by default: on a FUSE file io_uring
# reaches the same kernel path, fuse_direct_IO, and io_uring may be disabled
# on a host), direct=1 always, on one file of FIO_SIZE MiB laid out first.
# Latency is fio's total latency (lat_ns: submission to completion), not
# clat: a daemon without asynchronous direct I/O (gocryptfs) does each I/O
# inside io_submit, where clat would show ~1 us. A view that refuses
# O_DIRECT (securefs) gets no table: an asynchronous engine on buffered I/O
# is synchronous, so its I/O depth would be a fiction.
bench_fioqd()
{
	local f=$VIEW/fioqd.dat rw d row json tag
	tag=$(bl_fio_tag)
	if ! bl_direct_ok; then
		bl_record fioqd.info direct 0
		bl_log "bench: $CUR_FS/$CUR_SYS refuses O_DIRECT: no fioqd table for it (with buffered I/O the engine is synchronous)"
		return 0
	fi
	bl_record fioqd.info direct 1
	bl_timed fioqd.layout fio --name=layout --filename="$f" --size="${FIO_SIZE}M" \
		--rw=write --bs=1M --ioengine=psync --end_fsync=1 || return 1
	for rw in randread randwrite randrw; do
		for d in $QD_DEPTHS; do
			row=fioqd.$rw.qd$d
			json=$OUT/fio/$tag-qd-$rw-$d.json
			bl_timed "$row" fio --name="$rw" --filename="$f" --size="${FIO_SIZE}M" \
				--rw="$rw" --rwmixread=70 --bs=4k --ioengine="$QD_ENGINE" \
				--iodepth="$d" --direct=1 --numjobs=1 --lat_percentiles=1 \
				--time_based --runtime="$FIO_RUNTIME" --ramp_time=1 \
				--output-format=json --output="$json" || return 1
			bl_fio_record "$row" "$json" "$rw" lat_ns || return 1
		done
	done
	rm -f "$f"
	sync
}

# The fio JSON file stem of the current run (variants: no '+', ',' or '=').
bl_fio_tag()
{
	printf '%s' "$CUR_FS-${CUR_SYS//[^A-Za-z0-9_.-]/_}-$CUR_REP"
}

# True if the view reads and writes with O_DIRECT (probed with dd).
bl_direct_ok()
{
	local p=$VIEW/.directprobe rc=0
	rm -f "$p"
	dd if=/dev/zero of="$p" bs=4096 count=1 oflag=direct 2>/dev/null &&
		dd if="$p" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null || rc=1
	rm -f "$p"
	return $rc
}

# bl_fio_record ROW JSON RW [LAT]: IOPS (read+write; randrw also riops and
# wiops, the split), latency in µs from fio's LAT (clat_ns by default,
# lat_ns for the total): mean (randrw: of all I/Os), p50 (randwrite: writes,
# else reads) and p99 (randrw: the worse of reads and writes). us_op =
# 1e6/IOPS is the time-like figure the ratios use.
bl_fio_record()
{
	local row=$1 json=$2 rw=$3 vals
	vals=$(bl_json_eval "$json" "$rw" "${4:-clat_ns}") || {
		bl_log "bench: $CUR_FS/$CUR_SYS: cannot read $row from $json"
		bl_record "$row" failed 1
		return 1
	}
	set -- $vals
	bl_record "$row" iops "$1"
	bl_record "$row" p50_us "$2"
	bl_record "$row" p99_us "$3"
	bl_record "$row" mean_us "$4"
	if [ "$rw" = randrw ]; then
		bl_record "$row" riops "$5"
		bl_record "$row" wiops "$6"
	fi
	bl_record "$row" us_op "$(awk -v i="$1" 'BEGIN{printf "%.3f", (i > 0) ? 1e6/i : 0}')"
}

# bl_json_eval JSON RW [LAT]: prints "IOPS P50 P99 MEAN RIOPS WIOPS" (µs,
# 3 decimals) from fio's JSON, LAT being clat_ns (default) or lat_ns; jq if
# present, else python3. Fails when a percentile the figures need is missing.
bl_json_eval()
{
	local json=$1 rw=$2 lat=${3:-clat_ns} out
	if command -v jq >/dev/null; then
		out=$(jq -r --arg rw "$rw" --arg k "$lat" '
			def need($v; $what): if $v == null then error("no \($what)") else $v end;
			.jobs[0] as $j
			| (if $rw == "randread" then ["read"] elif $rw == "randwrite" then ["write"]
			   else ["read", "write"] end) as $dirs
			| ([$dirs[] as $d | need($j[$d][$k].percentile["99.000000"]; "\($d) \($k) p99")] | max) as $p99
			| (if $rw == "randwrite" then "write" else "read" end) as $pd
			| need($j[$pd][$k].percentile["50.000000"]; "\($pd) \($k) p50") as $p50
			| ([$dirs[] as $d | $j[$d].iops] | add) as $w
			| (if $w > 0 then ([$dirs[] as $d | $j[$d].iops * $j[$d][$k].mean] | add) / $w else 0 end) as $mean
			| "\($j.read.iops + $j.write.iops) \($p50) \($p99) \($mean) \($j.read.iops) \($j.write.iops)"
			' "$json") || return 1
	else
		out=$(python3 - "$json" "$rw" "$lat" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
rw, k = sys.argv[2], sys.argv[3]
dirs = {"randread": ["read"], "randwrite": ["write"]}.get(rw, ["read", "write"])
def need(d, p):
    v = j[d].get(k, {}).get("percentile", {}).get(p)
    if v is None:
        sys.exit("no %s %s %s" % (d, k, p))
    return v
p99 = max(need(d, "99.000000") for d in dirs)
p50 = need("write" if rw == "randwrite" else "read", "50.000000")
w = sum(j[d]["iops"] for d in dirs)
mean = sum(j[d]["iops"] * j[d][k]["mean"] for d in dirs) / w if w > 0 else 0
print(j["read"]["iops"] + j["write"]["iops"], p50, p99, mean, j["read"]["iops"], j["write"]["iops"])
EOF
		) || return 1
	fi
	# One format whichever tool read it (ns -> µs).
	awk '{ printf "%d %.3f %.3f %.3f %d %d\n", $1, $2 / 1000, $3 / 1000, $4 / 1000, $5, $6 }' <<<"$out"
}

# ---------------------------------------------------------------- 6. scale
# Issue #19's scaling table: at each thread count T of SCALE_THREADS,
# small-file create (SCALE_FILES files of 4 KiB, T threads each in a
# directory of its own, bench/scale.c) then lstat of every one of them
# after a cache drop, then 4 KiB random write by fio with numjobs=T
# (threads, psync, a file of SCALE_FIO_MIB MiB per job, all laid out once
# at the largest T so every T writes into allocated files; direct=1 when
# the view accepts O_DIRECT, else buffered and recorded as scale.info
# direct 0). Rows scale.OP.tT, figure "ops" (operations per second: files
# created or stat'ed, or fio's IOPS); create and stat also "sec". The small
# files are removed (untimed, then sync) before the next T.
bench_scale()
{
	local d=$VIEW/scale t maxt=0 direct=1 row json tag out ops
	tag=$(bl_fio_tag)
	for t in $SCALE_THREADS; do ((t > maxt)) && maxt=$t; done
	bl_direct_ok || direct=0
	bl_record scale.info direct "$direct"
	mkdir -p "$d/fio" || return 1
	bl_timed scale.layout fio --name=scale --directory="$d/fio" --size="${SCALE_FIO_MIB}M" \
		--numjobs="$maxt" --thread --rw=write --bs=1M --ioengine=psync --end_fsync=1 || return 1
	for t in $SCALE_THREADS; do
		mkdir -p "$d/files" || return 1
		sync
		bl_scale_files create "scale.create.t$t" "$d/files" "$t" || return 1
		sync
		bl_drop_caches
		bl_scale_files stat "scale.stat.t$t" "$d/files" "$t" || return 1
		rm -rf "$d/files"
		sync

		row=scale.randwrite.t$t
		json=$OUT/fio/$tag-scale-randwrite-$t.json
		[ "$direct" = 0 ] && bl_drop_caches
		bl_timed "$row" fio --name=scale --directory="$d/fio" --size="${SCALE_FIO_MIB}M" \
			--numjobs="$t" --thread --rw=randwrite --bs=4k --ioengine=psync \
			--direct="$direct" --group_reporting \
			--time_based --runtime="$FIO_RUNTIME" --ramp_time=1 \
			--output-format=json --output="$json" || return 1
		bl_fio_record "$row" "$json" randwrite || return 1
		ops=$(awk -F'\t' -v f="$CUR_FS" -v s="$CUR_SYS" -v r="$CUR_REP" -v row="$row" \
			'$1 == f && $2 == s && $3 == r && $4 == row && $5 == "iops" { v = $6 } END { print v }' "$OUT/raw.tsv")
		bl_record "$row" ops "$ops"
	done
	rm -rf "$d"
	sync
}

# bl_scale_files OP ROW DIR T: one sc-scale phase; records the driver's own
# time (threads started and directories made before its clock starts), the
# rate, and the daemon's CPU seconds over the phase.
bl_scale_files()
{
	local op=$1 row=$2 dir=$3 t=$4 c0 c1 out
	bl_progress "$row"
	c0=$(bl_daemon_cpu)
	if ! out=$("$SCALE_BIN" "$op" "$dir" "$t" "$SCALE_FILES" 2>>"$OUT/run.log"); then
		bl_log "bench: $CUR_FS/$CUR_SYS: sc-scale $op $dir $t $SCALE_FILES failed, see $OUT/run.log"
		bl_record "$row" failed 1
		return 1
	fi
	c1=$(bl_daemon_cpu)
	printf '%s %s: %s\n' "$CUR_SYS" "$row" "$out" >>"$OUT/run.log"
	bl_record "$row" sec "$(sed -n 's/.* sec=\([0-9.]*\) .*/\1/p' <<<"$out")"
	bl_record "$row" ops "$(sed -n 's/.* ops_per_sec=\([0-9.]*\)$/\1/p' <<<"$out")"
	[ -n "$DAEMON_PIDS" ] && bl_record "$row" cpu_s "$(bl_sub "$c1" "$c0")"
	return 0
}
