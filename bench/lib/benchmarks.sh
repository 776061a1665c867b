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
		bl_log "bench: $CUR_FS/$CUR_SYS has no O_DIRECT: no fioqd table for it (with buffered I/O the engine is synchronous)"
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

# bl_direct_ok [DIR]: true if DIR (default: the view) reads and writes with
# O_DIRECT (probed with dd), and its system does not declare that it only
# seems to (SYS_NAME_DIRECT=0: fscrypt on ext4 accepts O_DIRECT and serves
# it through the page cache when there is no inline encryption hardware).
bl_direct_ok()
{
	local p=${1:-$VIEW}/.directprobe rc=0 fake
	fake=SYS_$(sys_fn "$CUR_SYS")_DIRECT
	[ "${!fake:-1}" = 0 ] && return 1
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
# With two clients (--fs=gluster-2c: VIEWS holds both clients' views, each
# a stackcrypt volume of its own) every phase runs in both at once, T
# threads in each (2T in all), and the rows hold the aggregate: the
# operations of both over the wall time of both (bl_scale_clients), the
# sum of both fio IOPS (bl_fio_record_clients), both daemons' CPU.
bench_scale()
{
	local v t maxt=0 direct=1 row json tag ops
	tag=$(bl_fio_tag)
	for t in $SCALE_THREADS; do ((t > maxt)) && maxt=$t; done
	for v in "${VIEWS[@]}"; do
		bl_direct_ok "$v" || direct=0
	done
	bl_record scale.info direct "$direct"
	for v in "${VIEWS[@]}"; do
		mkdir -p "$v/scale/fio" || return 1
	done
	bl_timed scale.layout scale_fio "" --size="${SCALE_FIO_MIB}M" \
		--numjobs="$maxt" --thread --rw=write --bs=1M --ioengine=psync --end_fsync=1 || return 1
	for t in $SCALE_THREADS; do
		for v in "${VIEWS[@]}"; do
			mkdir -p "$v/scale/files" || return 1
		done
		sync
		bl_scale_files create "scale.create.t$t" "$t" || return 1
		sync
		bl_drop_caches
		bl_scale_files stat "scale.stat.t$t" "$t" || return 1
		for v in "${VIEWS[@]}"; do
			rm -rf "$v/scale/files"
		done
		sync

		row=scale.randwrite.t$t
		json=$OUT/fio/$tag-scale-randwrite-$t
		[ "$direct" = 0 ] && bl_drop_caches
		bl_timed "$row" scale_fio "$json" --size="${SCALE_FIO_MIB}M" \
			--numjobs="$t" --thread --rw=randwrite --bs=4k --ioengine=psync \
			--direct="$direct" --group_reporting \
			--time_based --runtime="$FIO_RUNTIME" --ramp_time=1 || return 1
		if ((${#VIEWS[@]} == 1)); then
			bl_fio_record "$row" "$json.json" randwrite || return 1
		else
			bl_fio_record_clients "$row" "$json" || return 1
		fi
		ops=$(awk -F'\t' -v f="$CUR_FS" -v s="$CUR_SYS" -v r="$CUR_REP" -v row="$row" \
			'$1 == f && $2 == s && $3 == r && $4 == row && $5 == "iops" { v = $6 } END { print v }' "$OUT/raw.tsv")
		bl_record "$row" ops "$ops"
	done
	for v in "${VIEWS[@]}"; do
		rm -rf "$v/scale"
	done
	sync
}

# scale_fio JSON FIO_ARGS...: fio --name=scale in the scale/fio directory
# of every client at once, its JSON report in JSON.json (one client) or
# JSON-cN.json (client N; none when JSON is empty); fails if any fio did.
# Two fio processes cannot share a start line; each measures its own
# window after its 1 s ramp, and both windows lie inside the other's run
# but for the few milliseconds between their starts, so the sum of their
# IOPS is the aggregate rate to within that skew.
scale_fio()
{
	local json=$1 i n=${#VIEWS[@]} rc=0 p pids=() out=()
	shift
	if ((n == 1)); then
		[ -n "$json" ] && out=(--output-format=json --output="$json.json")
		fio --name=scale --directory="${VIEWS[0]}/scale/fio" "$@" "${out[@]}"
		return
	fi
	for ((i = 0; i < n; i++)); do
		out=()
		[ -n "$json" ] && out=(--output-format=json --output="$json-c$((i + 1)).json")
		fio --name=scale --directory="${VIEWS[i]}/scale/fio" "$@" "${out[@]}" &
		pids+=($!)
		BG_PIDS+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	BG_PIDS=()
	return $rc
}

# bl_fio_record_clients ROW STEM: the randwrite figures of every client's
# STEM-cN.json as one row: iops the sum (and iops_cN each client's), mean
# latency weighted by IOPS, p99 the worse client's (a percentile of the
# union cannot be formed from two percentiles; no p50 for the same reason).
bl_fio_record_clients()
{
	local row=$1 stem=$2 i vals sum=0 wsum=0 p99=0
	for ((i = 1; i <= ${#VIEWS[@]}; i++)); do
		vals=$(bl_json_eval "$stem-c$i.json" randwrite) || {
			bl_log "bench: $CUR_FS/$CUR_SYS: cannot read $row from $stem-c$i.json"
			bl_record "$row" failed 1
			return 1
		}
		set -- $vals
		bl_record "$row" "iops_c$i" "$1"
		sum=$((sum + $1))
		wsum=$(awk -v w="$wsum" -v i="$1" -v m="$4" 'BEGIN{printf "%.3f", w + i * m}')
		p99=$(awk -v a="$p99" -v b="$3" 'BEGIN{printf "%.3f", (b > a) ? b : a}')
	done
	bl_record "$row" iops "$sum"
	bl_record "$row" p99_us "$p99"
	bl_record "$row" mean_us "$(awk -v w="$wsum" -v s="$sum" 'BEGIN{printf "%.3f", (s > 0) ? w / s : 0}')"
	bl_record "$row" us_op "$(awk -v i="$sum" 'BEGIN{printf "%.3f", (i > 0) ? 1e6/i : 0}')"
}

# bl_scale_files OP ROW T: one sc-scale phase in every client's
# scale/files; records the drivers' own time (threads started and
# directories made before their clocks start), the rate, and the daemons'
# CPU seconds over the phase.
bl_scale_files()
{
	local op=$1 row=$2 t=$3 c0 c1 out dir
	bl_progress "$row"
	c0=$(bl_daemon_cpu)
	if ((${#VIEWS[@]} > 1)); then
		bl_scale_clients "$op" "$row" "$t" || {
			bl_log "bench: $CUR_FS/$CUR_SYS: sc-scale $op in ${#VIEWS[@]} clients failed, see $OUT/run.log"
			bl_record "$row" failed 1
			return 1
		}
	else
		dir=${VIEWS[0]}/scale/files
		if ! out=$("$SCALE_BIN" "$op" "$dir" "$t" "$SCALE_FILES" 2>>"$OUT/run.log"); then
			bl_log "bench: $CUR_FS/$CUR_SYS: sc-scale $op $dir $t $SCALE_FILES failed, see $OUT/run.log"
			bl_record "$row" failed 1
			return 1
		fi
		printf '%s %s: %s\n' "$CUR_SYS" "$row" "$out" >>"$OUT/run.log"
		bl_record "$row" sec "$(sed -n 's/.* sec=\([0-9.]*\) .*/\1/p' <<<"$out")"
		bl_record "$row" ops "$(sed -n 's/.* ops_per_sec=\([0-9.]*\).*/\1/p' <<<"$out")"
	fi
	c1=$(bl_daemon_cpu)
	[ -n "$DAEMON_PIDS" ] && bl_record "$row" cpu_s "$(bl_sub "$c1" "$c0")"
	return 0
}

# bl_scale_clients OP ROW T: sc-scale OP with T threads in every client's
# scale/files at once, and the aggregate recorded under ROW.
# The start: every driver makes its directories and threads, announces it
# (a file) and waits on one FIFO; once all have announced, one write gives
# each its byte, so their clocks start within microseconds of each other
# (a driver that fails first makes the runner close the FIFO instead: the
# others read end of file and give up).
# The aggregate: the operations of all clients over the wall time from the
# earliest start to the latest end (each driver prints its CLOCK_MONOTONIC
# start and end, one clock for the whole host). Every operation counted
# lies inside that window, so the figure is never above the real aggregate
# rate; a skew between the starts could only lower it, and is recorded
# (start_skew_ms). The sum of the per-client rates would instead credit a
# client that finished early with its rate over the whole window, though
# the other ran alone at the end. Each client's own rate is kept too
# (ops_cN).
bl_scale_clients()
{
	local op=$1 row=$2 t=$3 n=${#VIEWS[@]} i p gfd rc=0 ready dead bytes pids=()
	local gate=$SCRATCH/scale-gate
	rm -f "$gate" "$gate".ready.* "$SCRATCH"/scale-out.*
	mkfifo "$gate" || return 1
	# Held open for reading and writing: the drivers' opens never wait,
	# and a write never meets a FIFO without a reader.
	exec {gfd}<>"$gate" || return 1
	# The drivers must not inherit the runner's descriptor: a writer of
	# their own would keep them from ever seeing the end of file.
	for ((i = 1; i <= n; i++)); do
		"$SCALE_BIN" "$op" "${VIEWS[i - 1]}/scale/files" "$t" "$SCALE_FILES" \
			"$gate" "$gate.ready.$i" >"$SCRATCH/scale-out.$i" 2>>"$OUT/run.log" {gfd}>&- &
		pids+=($!)
		BG_PIDS+=($!)
	done
	while :; do
		ready=0 dead=
		for ((i = 1; i <= n; i++)); do
			if [ -e "$gate.ready.$i" ]; then
				ready=$((ready + 1))
			elif ! bl_alive "${pids[i - 1]}"; then
				dead=1
			fi
		done
		((ready == n)) && break
		[ -n "$dead" ] && break
		sleep 0.01
	done
	if ((ready == n)); then
		printf -v bytes '%*s' "$n" ''
		printf '%s' "$bytes" >&"$gfd"
	fi
	exec {gfd}>&-
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	BG_PIDS=()
	rm -f "$gate" "$gate".ready.*
	((rc == 0)) || return 1
	for ((i = 1; i <= n; i++)); do
		printf '%s %s c%d: %s\n' "$CUR_SYS" "$row" "$i" "$(cat "$SCRATCH/scale-out.$i")" >>"$OUT/run.log"
	done
	local agg
	agg=$(awk -v n="$n" -v want="$SCALE_FILES" '
		{ delete v; for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		  if (v["ops"] != want || v["start"] == "" || v["end"] == "") bad = 1
		  c++; ops += v["ops"]; rate[c] = v["ops_per_sec"]
		  if (c == 1 || v["start"] + 0 < s0) s0 = v["start"] + 0
		  if (c == 1 || v["start"] + 0 > s1) s1 = v["start"] + 0
		  if (c == 1 || v["end"] + 0 > e1) e1 = v["end"] + 0 }
		END { if (bad || c != n || e1 <= s0) exit 1
		  printf "%.6f %.1f %.3f", e1 - s0, ops / (e1 - s0), (s1 - s0) * 1000
		  for (i = 1; i <= c; i++) printf " %s", rate[i] }' "$SCRATCH"/scale-out.*) || {
		bl_log "bench: $CUR_FS/$CUR_SYS: $row: cannot read the drivers' output (see $OUT/run.log)"
		return 1
	}
	set -- $agg
	bl_record "$row" sec "$1"
	bl_record "$row" ops "$2"
	bl_record "$row" start_skew_ms "$3"
	shift 3
	for ((i = 1; i <= n; i++)); do
		bl_record "$row" "ops_c$i" "${!i}"
	done
}
