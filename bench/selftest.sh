#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/selftest.sh: checks the benchmark runner itself in about a minute,
# with tiny sizes so the machine stays usable: every benchmark runs on every
# requested system, every figure lands in raw.tsv, results.json parses, the
# targets of issue #6 are all checked, a NAME@BIN variant runs the binary
# --bin names and a names system runs init --encrypt-names; the fio JSON
# reader gives exact figures from a made-up fio JSON (jq and python3), the
# iodepth table, chart and issue #17 targets come out right from a made-up
# run (met and missed), and a real tiny fioqd run records every cell; the
# scaling table, chart and issue #19 targets likewise (made up and real);
# two clients of one GlusterFS volume (--fs=gluster-2c) add up in the
# scaling table and are cleaned up after a SIGINT (where GlusterFS runs);
# bad --bin, names, aes-gcm, fioqd, scale and gluster-2c requests are
# refused in one line, and
# nothing the runner made survives it, neither a normal exit nor a SIGINT
# in the middle of a FUSE mount.
#   bash bench/selftest.sh [SYSTEMS]   (default raw,passthrough,aes-xts)
# Exit 0 = all checks passed; 77 = skipped (not root / no stackcrypt).
set -u -o pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
SYSTEMS=${1:-raw,passthrough,aes-xts}
SC_BIN=${SC_BIN:-$REPO/build/fs/stackcrypt}
export SC_BIN
[ "$(id -u)" = 0 ] || { echo "selftest: needs root (loop devices); skipped"; exit 77; }
case ",$SYSTEMS," in *,passthrough,* | *,null,* | *,aes-*)
	[ -x "$SC_BIN" ] || { echo "selftest: $SC_BIN missing; skipped"; exit 77; } ;;
esac

T=$(mktemp -d /tmp/sc-bench-selftest.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
check()
{
	if eval "$2"; then
		echo "ok   $1"
	else
		echo "FAIL $1"
		fails=$((fails + 1))
	fi
}
leftovers()
{
	! grep -q "$T/sc-bench" /proc/mounts && ! losetup -a | grep -q "$T/sc-bench" &&
		[ -z "$(ls -d "$T"/sc-bench.* 2>/dev/null)" ]
}

# 1. A complete tiny run on ext4 and XFS with every benchmark.
bash "$BENCH_DIR/run.sh" --systems="$SYSTEMS" --fs=ext4,xfs --reps=1 \
	--bench=dd,mongo,bigdir,tree,fio --dd-bytes=4096000 --mongo-files=300 --bigdir-files=300 \
	--fio-size=16 --fio-runtime=1 --tree=/usr/include/linux --scratch="$T" --out="$T/out" >"$T/run1.log" 2>&1
check "run exits 0" '[ $? = 0 ]'
O=$T/out
for s in ${SYSTEMS//,/ }; do
	for fs in ext4 xfs; do
		for row in dd.w.4k dd.wf.4k dd.r.4k dd.r.1m mongo.create mongo.read mongo.delete \
			bigdir.create bigdir.stat bigdir.list bigdir.delete \
			tree.untar tree.read fio.randread.j1 fio.randrw.j4; do
			check "$fs/$s $row recorded" \
				"awk -F'\t' -v f=$fs -v s=$s -v r=$row '\$1==f && \$2==s && \$4==r && \$5==\"sec\"' '$O/raw.tsv' | grep -q ."
		done
		check "$fs/$s fio verify passed" \
			"awk -F'\t' -v f=$fs -v s=$s '\$1==f && \$2==s && \$4==\"fio.verify\" && \$5==\"ok\" && \$6==1' '$O/raw.tsv' | grep -q ."
		[ "$s" = raw ] || check "$fs/$s daemon CPU recorded" \
			"awk -F'\t' -v f=$fs -v s=$s '\$1==f && \$2==s && \$5==\"cpu_s\"' '$O/raw.tsv' | grep -q ."
		check "$fs/$s write amplification recorded" \
			"awk -F'\t' -v f=$fs -v s=$s '\$1==f && \$2==s && \$4==\"mongo.create\" && \$5==\"wa\" && \$6>0' '$O/raw.tsv' | grep -q ."
	done
done
check "no failures recorded" "! awk -F'\t' '\$5==\"failed\"' '$O/raw.tsv' | grep -q ."
if command -v jq >/dev/null; then
	check "results.json parses" "jq -e '.figures | length > 0' '$O/results.json' >/dev/null"
else
	check "results.json parses" "python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))[\"figures\"]' '$O/results.json'"
fi
for id in 6.1 6.2 6.3 6.4 6.5; do
	check "target $id checked on ext4 and xfs" "[ \$(awk -F'\t' '\$1==\"$id\"' '$O/targets.tsv' | wc -l) = 2 ]"
done
check "results.md has the targets section" "grep -q '^## Targets' '$O/results.md'"
check "charts drawn" "[ -f '$O/dd-ext4.png' ] && [ -f '$O/mongo-xfs.png' ]"
check "report is reproducible from raw.tsv" \
	"cp '$O/results.md' '$T/md1' && bash '$BENCH_DIR/report.sh' '$O' >/dev/null 2>&1 && diff -q '$T/md1' '$O/results.md' >/dev/null"
check "results.md has the big-directory table" "grep -q '^### One directory of 300 entries' '$O/results.md'"
check "nothing left after a normal exit" leftovers

# 1b. Binary variants and names systems, on a stand-in binary that logs its
#     calls, offers --encrypt-names in init --help and passes the rest to
#     the real one (so this runs whether or not SC_BIN has issue #16).
if [ -x "$SC_BIN" ]; then
	cat >"$T/fake-sc" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$T/fake.log"
if [ "\$1 \$2" = "init --help" ]; then "$SC_BIN" init --help; echo "  --encrypt-names  (stand-in)"; exit 0; fi
a=(); for x in "\$@"; do [ "\$x" = --encrypt-names ] || a+=("\$x"); done
exec "$SC_BIN" "\${a[@]}"
EOF
	chmod +x "$T/fake-sc"
	bash "$BENCH_DIR/run.sh" --systems=aes-xts,aes-xts@fake,aes-xts-names@fake --bin=fake="$T/fake-sc" \
		--fs=ext4 --reps=1 --bench=bigdir --bigdir-files=100 --scratch="$T" --out="$T/out1b" >"$T/run1b.log" 2>&1
	check "variant run exits 0" '[ $? = 0 ]'
	for s in aes-xts aes-xts@fake aes-xts-names@fake; do
		check "$s bigdir rows recorded" \
			"[ \$(awk -F'\t' -v s=$s '\$2==s && \$4 ~ /^bigdir\\./ && \$5==\"sec\"' '$T/out1b/raw.tsv' | wc -l) = 4 ]"
	done
	check "the --bin binary made two volumes, one with names" \
		"[ \$(grep -c '^init --cipher' '$T/fake.log') = 2 ] && [ \$(grep -c '^init .*--encrypt-names' '$T/fake.log') = 1 ]"
	check "the --bin binary mounted both" "[ \$(grep -c '^mount ' '$T/fake.log') = 2 ]"
	check "results.md compares the variant with its base" "grep -q 'aes-xts@fake / aes-xts |' '$T/out1b/results.md'"
	check "results.md shows what names cost" "grep -q 'aes-xts-names@fake / aes-xts@fake |' '$T/out1b/results.md'"
	check "meta.tsv records the --bin binary" "grep -q '^sc_bin@fake' '$T/out1b/meta.tsv'"
	check "nothing left after the variant run" leftovers
fi

# 1d. The fio JSON reader (bench_fio and bench_fioqd): exact figures from a
#     made-up fio JSON, with jq and with python3 alike; a missing
#     percentile is an error, not a zero.
cat >"$T/fio-rw.json" <<'EOF'
{"jobs": [{"read": {"iops": 700.4,
   "clat_ns": {"mean": 95000, "percentile": {"50.000000": 85000, "99.000000": 390000}},
   "lat_ns": {"mean": 100000, "percentile": {"50.000000": 90000, "99.000000": 400000}}},
  "write": {"iops": 300.3,
   "clat_ns": {"mean": 190000, "percentile": {"50.000000": 170000, "99.000000": 480000}},
   "lat_ns": {"mean": 200000, "percentile": {"50.000000": 180000, "99.000000": 500000}}}}]}
EOF
cat >"$T/fio-rd.json" <<'EOF'
{"jobs": [{"read": {"iops": 500.9,
   "clat_ns": {"mean": 1500, "percentile": {"50.000000": 1000, "99.000000": 7000}},
   "lat_ns": {"mean": 1600}},
  "write": {"iops": 0, "clat_ns": {"mean": 0}, "lat_ns": {"mean": 0}}}]}
EOF
mkdir -p "$T/nojq"
ln -sf "$(python3 -c 'import sys; print(sys.executable)')" "$T/nojq/python3"
ln -sf "$(command -v awk)" "$T/nojq/awk"
for tool in jq python3; do
	jpath=$PATH
	[ "$tool" = python3 ] && jpath=$T/nojq
	command -v "$tool" >/dev/null || { echo "skip fio JSON reader with $tool (not installed)"; continue; }
	jeval()
	{
		(. "$BENCH_DIR/lib/benchmarks.sh" && PATH=$jpath && bl_json_eval "$@") 2>/dev/null
	}
	check "JSON reader ($tool): randrw total latency, mean weighted, the split" \
		'[ "$(jeval "$T/fio-rw.json" randrw lat_ns)" = "1000 90.000 500.000 130.009 700 300" ]'
	check "JSON reader ($tool): randrw completion latency" \
		'[ "$(jeval "$T/fio-rw.json" randrw)" = "1000 85.000 480.000 123.509 700 300" ]'
	check "JSON reader ($tool): randwrite reads only the writes" \
		'[ "$(jeval "$T/fio-rw.json" randwrite lat_ns)" = "1000 180.000 500.000 200.000 700 300" ]'
	check "JSON reader ($tool): randread" '[ "$(jeval "$T/fio-rd.json" randread)" = "500 1.000 7.000 1.500 500 0" ]'
	check "JSON reader ($tool): a missing percentile fails" '! jeval "$T/fio-rd.json" randread lat_ns >/dev/null'
done

# 1e. The iodepth report from a made-up run (bench/report.sh): the table
#     per operation, its cells and ratio columns, the 70/30 split, the
#     chart, and targets 17.1/17.2 both missed and met. aes-gcm's randwrite
#     iodepth-4 IOPS is $2 x aes-xts's, every other aes-gcm cell 0.9x;
#     securefs refused O_DIRECT.
synth()
{
	local d=$1
	mkdir -p "$d"
	printf '%s\t%s\n' date_utc 2026-12-01T00:00:00Z command "bench/run.sh --bench=fioqd (made up)" \
		mode quick systems "raw aes-xts aes-gcm gocryptfs securefs" fs ext4 reps 1 benches fioqd \
		fio_size_mib 16 fio_runtime_s 1 qd_depths "1 4" qd_engine libaio >"$d/meta.tsv"
	awk -v f="$2" 'BEGIN {
		OFS = "\t"
		n = split("raw aes-xts aes-gcm gocryptfs", S, " ")
		x["raw"] = 2; x["aes-xts"] = 1; x["aes-gcm"] = 0.9; x["gocryptfs"] = 0.5
		print "ext4", "securefs", 1, "fioqd.info", "direct", 0
		for (i = 1; i <= n; i++) {
			s = S[i]
			print "ext4", s, 1, "fioqd.info", "direct", 1
			split("randread randwrite randrw", O, " ")
			for (o = 1; o <= 3; o++) for (q = 1; q <= 4; q *= 4) {
				r = "fioqd." O[o] ".qd" q
				k = (s == "aes-gcm" && r == "fioqd.randwrite.qd4") ? f : x[s]
				iops = 10000 * q * k
				print "ext4", s, 1, r, "sec", 1
				print "ext4", s, 1, r, "iops", iops
				print "ext4", s, 1, r, "mean_us", 100 * q / k
				print "ext4", s, 1, r, "p99_us", 300 * q / k
				print "ext4", s, 1, r, "us_op", 1e6 / iops
				if (O[o] == "randrw") { print "ext4", s, 1, r, "riops", 0.7 * iops; print "ext4", s, 1, r, "wiops", 0.3 * iops }
			}
		} }' >"$d/raw.tsv"
}
synth "$T/qd-miss" 0.8
synth "$T/qd-met" 0.86
bash "$BENCH_DIR/report.sh" "$T/qd-miss" >"$T/qd-miss.log" 2>&1 && bash "$BENCH_DIR/report.sh" "$T/qd-met" >"$T/qd-met.log" 2>&1
check "iodepth report: report.sh exits 0" '[ $? = 0 ]'
M=$T/qd-miss/results.md
check "iodepth report: one table per operation, rows iodepth, ratio columns" \
	"[ \$(grep -c '^| iodepth | raw | aes-xts | aes-gcm | gocryptfs | securefs | aes-gcm/aes-xts (>= 0.85) | aes-gcm/gocryptfs (>= 1) |\$' '$M') = 3 ]"
check "iodepth report: cells are IOPS (mean/p99), the missed ratio is marked" \
	"grep -q '^| 4 | 80.0k (200/600) | 40.0k (400/1200) | 32.0k (500/1500) | 20.0k (800/2400) | – | 0.80 \*\*missed\*\* | 1.60 met |\$' '$M'"
check "iodepth report: the 70/30 read/write split" "grep -q '^| 4 | 56.0k/24.0k | 28.0k/12.0k | 25.2k/10.8k | 14.0k/6000 | – |\$' '$M'"
check "iodepth report: a system without O_DIRECT is named" "grep -q 'O_DIRECT refused.*: securefs\.\$' '$M'"
check "iodepth report: the chart" "[ -s '$T/qd-miss/fioqd-ext4.png' ] && grep -q '(fioqd-ext4.png)' '$M'"
check "iodepth report: 17.1 missed, naming the cell" \
	"awk -F'\t' '\$1 == \"17.1\" && \$3 == \"missed\" && \$5 ~ /rw@4 0.80/' '$T/qd-miss/targets.tsv' | grep -q ."
check "iodepth report: 17.2 met" "awk -F'\t' '\$1 == \"17.2\" && \$3 == \"met\"' '$T/qd-miss/targets.tsv' | grep -q ."
check "iodepth report: 17.1 met at 0.86x" "awk -F'\t' '\$1 == \"17.1\" && \$3 == \"met\"' '$T/qd-met/targets.tsv' | grep -q ."
check "iodepth report: IOPS ratios in results.json" \
	"python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))[\"iops_ratios\"]; assert any(x[\"num\"] == \"aes-gcm\" and x[\"den\"] == \"aes-xts\" and x[\"row\"] == \"fioqd.randwrite.qd4\" and abs(x[\"median\"] - 0.8) < 1e-6 for x in r)' '$T/qd-miss/results.json'"

# 1f. A real fioqd run, tiny: aes-gcm by a stand-in binary that makes an
#     aes-xts volume when asked for aes-gcm (so this runs whether or not
#     SC_BIN has issue #17), interleaved with raw and aes-xts.
if [ -x "$SC_BIN" ]; then
	cat >"$T/gcm-sc" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$T/gcm.log"
a=(); for x in "\$@"; do [ "\$x" = --cipher=aes-gcm ] && x=--cipher=aes-xts; a+=("\$x"); done
exec "$SC_BIN" "\${a[@]}"
EOF
	chmod +x "$T/gcm-sc"
	SC_BIN=$T/gcm-sc bash "$BENCH_DIR/run.sh" --systems=raw,aes-xts,aes-gcm --fs=ext4 --reps=1 \
		--bench=fioqd --qd-depths=1,4 --fio-size=16 --fio-runtime=1 --scratch="$T" --out="$T/outqd" >"$T/runqd.log" 2>&1
	check "fioqd run exits 0" '[ $? = 0 ]'
	Q=$T/outqd
	for s in raw aes-xts aes-gcm; do
		for row in fioqd.randread.qd1 fioqd.randread.qd4 fioqd.randwrite.qd1 fioqd.randwrite.qd4 \
			fioqd.randrw.qd1 fioqd.randrw.qd4; do
			check "fioqd $s $row: IOPS, mean and p99 latency recorded" \
				"[ \$(awk -F'\t' -v s=$s -v r=$row '\$2==s && \$4==r && (\$5==\"iops\" || \$5==\"mean_us\" || \$5==\"p99_us\") && \$6>0' '$Q/raw.tsv' | wc -l) = 3 ]"
		done
		check "fioqd $s randrw: the read/write split adds up" \
			"awk -F'\t' -v s=$s '\$2==s && \$4==\"fioqd.randrw.qd4\" { v[\$5] = \$6 } END { exit !(v[\"riops\"] > v[\"wiops\"] && v[\"wiops\"] > 0 && v[\"riops\"] + v[\"wiops\"] - v[\"iops\"] <= 2 && v[\"iops\"] - v[\"riops\"] - v[\"wiops\"] <= 2) }' '$Q/raw.tsv'"
	done
	check "fioqd ran libaio at the asked depths, direct" \
		"[ \$(ls '$Q'/fio/*-qd-*.json | wc -l) = 18 ] && grep -q '\"iodepth\" : \"4\"' '$Q/fio/ext4-aes-gcm-1-qd-randrw-4.json' && grep -q '\"ioengine\" : \"libaio\"' '$Q/fio/ext4-aes-gcm-1-qd-randrw-4.json' && grep -q '\"direct\" : \"1\"' '$Q/fio/ext4-aes-gcm-1-qd-randrw-4.json'"
	check "fioqd: the stand-in was asked for an aes-gcm volume" "grep -q '^init --cipher=aes-gcm' '$T/gcm.log'"
	check "fioqd: three tables and the chart in results.md" \
		"[ \$(grep -c '^| iodepth | raw | aes-xts | aes-gcm | aes-gcm/aes-xts (>= 0.85) |\$' '$Q/results.md') = 3 ] && [ -s '$Q/fioqd-ext4.png' ]"
	check "fioqd: target 17.1 checked" "awk -F'\t' '\$1 == \"17.1\" && (\$3 == \"met\" || \$3 == \"missed\")' '$Q/targets.tsv' | grep -q ."
	check "nothing left after the fioqd run" leftovers
fi

# 1g. The scaling table (issue #19) from a made-up run of two repetitions:
#     operations/s ratios are formed per repetition and their median is
#     shown; a cell where aes-xts trails a peer is marked and named by the
#     #19 target; a peer it leads everywhere meets it.
mkdir -p "$T/sc-made"
printf '%s\t%s\n' date_utc 2026-12-01T00:00:00Z command "bench/run.sh --bench=scale (made up)" \
	mode quick systems "raw aes-xts securefs gocryptfs" fs ext4 reps 2 benches scale \
	scale_threads "1 4" scale_files 400 scale_fio_mib 4 fio_runtime_s 1 qd_depths "1" \
	cores 2 >"$T/sc-made/meta.tsv"
awk 'BEGIN { OFS = "\t"
	# ops/s of aes-xts, securefs, gocryptfs per (op, threads), rep 1; rep 2
	# is the same times 1.08 for aes-xts only: aes-xts/securefs 0.9 and 0.972.
	split("create stat randwrite", O, " "); split("1 4", T, " ")
	for (r = 1; r <= 2; r++) for (o = 1; o <= 3; o++) for (t = 1; t <= 2; t++) {
		row = "scale." O[o] ".t" T[t]; base = 1000 * o * T[t]
		f = (O[o] == "create" && T[t] == 4) ? 0.9 : 2
		print "ext4", "raw", r, row, "ops", base * 10
		print "ext4", "aes-xts", r, row, "ops", base * f * (r == 2 ? 1.08 : 1)
		print "ext4", "securefs", r, row, "ops", base
		print "ext4", "gocryptfs", r, row, "ops", base / 2
	}
	print "ext4", "securefs", 1, "scale.info", "direct", 0 }' >"$T/sc-made/raw.tsv"
bash "$BENCH_DIR/report.sh" "$T/sc-made" >/dev/null 2>&1
check "scaling report: report.sh exits 0" '[ $? = 0 ]'
M=$T/sc-made/results.md
check "scaling report: one table per operation, ratio and target columns" \
	"[ \$(grep -c '^| threads | raw | aes-xts | securefs | gocryptfs | aes-xts/securefs | aes-xts/gocryptfs | aes-xts ahead of every peer at every thread count |\$' '$M') = 3 ]"
check "scaling report: the median of the per-repetition ratios, the miss marked" \
	"grep -q '^| 4 | 40.0k | 3744 | 4000 | 2000 | 0.94 | 1.87 | \*\*missed\*\* (behind securefs) |\$' '$M'"
check "scaling report: a cell ahead of every peer is met" "grep -q '^| 1 | 10.0k | 2080 | 1000 | 500 | 2.08 | 4.16 | met |\$' '$M'"
check "scaling report: buffered randwrite named" "grep -q 'O_DIRECT refused) on: securefs;' '$M'"
check "scaling report: the chart" "[ -s '$T/sc-made/scale-ext4.png' ] && grep -q '(scale-ext4.png)' '$M'"
check "scaling report: 19.securefs missed, naming the cell" \
	"awk -F'\t' '\$1 == \"19.securefs\" && \$3 == \"missed\" && \$5 ~ /create@4 0.94/' '$T/sc-made/targets.tsv' | grep -q ."
check "scaling report: 19.gocryptfs met" "awk -F'\t' '\$1 == \"19.gocryptfs\" && \$3 == \"met\"' '$T/sc-made/targets.tsv' | grep -q ."

# 1h. A real scaling run, tiny: raw and aes-xts, 1 and 2 threads; every
#     cell recorded, the files counted, fio run with the asked job count.
if [ -x "$SC_BIN" ]; then
	bash "$BENCH_DIR/run.sh" --systems=raw,aes-xts --fs=ext4 --reps=1 --bench=scale \
		--scale-threads=1,2 --scale-files=200 --scale-fio-size=4 --fio-runtime=1 \
		--scratch="$T" --out="$T/outsc" >"$T/runsc.log" 2>&1
	check "scale run exits 0" '[ $? = 0 ]'
	S=$T/outsc
	for s in raw aes-xts; do
		for row in scale.create.t1 scale.create.t2 scale.stat.t1 scale.stat.t2 \
			scale.randwrite.t1 scale.randwrite.t2; do
			check "scale $s $row: operations/s recorded" \
				"awk -F'\t' -v s=$s -v r=$row '\$2==s && \$4==r && \$5==\"ops\" && \$6>0' '$S/raw.tsv' | grep -q ."
		done
		check "scale $s: 200 files per create and stat cell" \
			"[ \$(grep -c '^$s scale\.\(create\|stat\)\.t[12]: ops=200 ' '$S/run.log') = 4 ]"
	done
	check "scale: fio ran 2 jobs at 2 threads" \
		"grep -q '\"numjobs\" : \"2\"' '$S/fio/ext4-aes-xts-1-scale-randwrite-2.json'"
	check "scale: three tables and the chart in results.md" \
		"[ \$(grep -c '^| threads | raw | aes-xts | aes-xts ahead of every peer at every thread count |\$' '$S/results.md') = 3 ] && [ -s '$S/scale-ext4.png' ]"
	check "nothing left after the scale run" leftovers
fi

# 1i. Two clients of one GlusterFS volume (--fs=gluster-2c), tiny, where
#     scripts/gluster.sh can run: every cell holds both clients' work (the
#     operations of both over their common wall time, never above the sum
#     of their own rates; the sum of both fio IOPS), both daemons were
#     found; then a SIGTERM to the runner alone (a kill, a CI timeout)
#     while both clients' fio run in the background: the runner must end
#     them itself (nothing else signals them) before it can unmount;
#     nothing left, the volume gone.
if [ -x "$SC_BIN" ] && bash "$REPO/scripts/gluster.sh" check >/dev/null 2>&1; then
	bash "$BENCH_DIR/run.sh" --systems=raw,aes-xts --fs=gluster-2c --bench=scale \
		--scale-threads=1,2 --scale-files=200 --scale-fio-size=4 --fio-runtime=1 \
		--scratch="$T" --out="$T/out2c" >"$T/run2c.log" 2>&1 &
	pid=$!
	wait $pid
	check "gluster-2c run exits 0" '[ $? = 0 ]'
	G=$T/out2c
	for s in raw aes-xts; do
		for row in scale.create.t1 scale.create.t2 scale.stat.t1 scale.stat.t2; do
			check "gluster-2c $s $row: 400 operations over the wall time of both, at most the sum of each client's rate" \
				"awk -F'\t' -v s=$s -v r=$row '\$2==s && \$4==r { v[\$5] = \$6 } END { d = v[\"ops\"] * v[\"sec\"] - 400; exit !(v[\"ops\"] > 0 && d * d < 1 && v[\"ops\"] <= v[\"ops_c1\"] + v[\"ops_c2\"] + 0.1 && v[\"start_skew_ms\"] != \"\") }' '$G/raw.tsv'"
		done
		check "gluster-2c $s: each client's driver did its 200 files per cell" \
			"[ \$(grep -c '^$s scale\.\(create\|stat\)\.t[12] c[12]: ops=200 ' '$G/run.log') = 8 ]"
		for row in scale.randwrite.t1 scale.randwrite.t2; do
			check "gluster-2c $s $row: the sum of both clients' IOPS" \
				"awk -F'\t' -v s=$s -v r=$row '\$2==s && \$4==r { v[\$5] = \$6 } END { exit !(v[\"iops_c1\"] > 0 && v[\"iops_c2\"] > 0 && v[\"ops\"] == v[\"iops_c1\"] + v[\"iops_c2\"]) }' '$G/raw.tsv'"
		done
	done
	check "gluster-2c: fio ran 2 jobs in each client at 2 threads" \
		"grep -q '\"numjobs\" : \"2\"' '$G/fio/gluster-2c-aes-xts-1-scale-randwrite-2-c1.json' && grep -q '\"numjobs\" : \"2\"' '$G/fio/gluster-2c-aes-xts-1-scale-randwrite-2-c2.json'"
	check "gluster-2c: both daemons found, their CPU recorded" \
		"! grep -q 'not found by its argv' '$G/run.log' && awk -F'\t' '\$2==\"aes-xts\" && \$4==\"scale.create.t2\" && \$5==\"cpu_s\"' '$G/raw.tsv' | grep -q ."
	check "gluster-2c: three tables per client and the chart in results.md" \
		"[ \$(grep -c '^| threads per client | raw | aes-xts | aes-xts ahead of every peer at every thread count |\$' '$G/results.md') = 3 ] && [ -s '$G/scale-gluster-2c.png' ]"
	check "nothing left after the gluster-2c run" "leftovers && ! gluster volume info scbench$pid >/dev/null 2>&1"

	bash "$BENCH_DIR/run.sh" --systems=aes-xts --fs=gluster-2c \
		--scale-threads=2 --scale-files=200 --scale-fio-size=4 --fio-runtime=600 \
		--scratch="$T" --out="$T/out2ci" >"$T/run2ci.log" 2>&1 &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		[ "$(pgrep -fc "^fio --name=scale --directory=$T/")" = 2 ] && break
		sleep 0.2
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	check "gluster-2c terminated in both clients' fio exits 130" "[ $rc = 130 ]"
	check "nothing left after SIGTERM in gluster-2c" \
		"leftovers && ! pgrep -f '^fio --name=scale --directory=$T/' >/dev/null && ! pgrep -f '$T/sc-bench.*/mnt' >/dev/null && ! gluster volume info scbench$pid >/dev/null 2>&1"
else
	echo "skip gluster-2c run (no stackcrypt binary, or scripts/gluster.sh check fails here)"
fi

# 1c. Bad requests: one line on stderr, exit 2, nothing run.
printf '#!/bin/sh\necho "usage: stackcrypt init [--cipher=C] BACKING"\n' >"$T/old-sc"
chmod +x "$T/old-sc"
refused()
{
	local err
	err=$(bash "$BENCH_DIR/run.sh" --dry-run --scratch="$T" --out="$T/out-bad" "$@" 2>&1 >/dev/null)
	[ $? = 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [ -n "$err" ]
}
check "a names system on a binary without --encrypt-names is refused" \
	"refused --systems=aes-xts-names@old --bin=old='$T/old-sc'"
check "a variant naming an unknown --bin is refused" "refused --systems=aes-xts@nobin"
check "a --bin without NAME=PATH is refused" "refused --bin=justaname"
printf '#!/bin/sh\n[ "$1 $2" = "init --cipher=aes-gcm" ] && { echo "stackcrypt init: unknown cipher '"'"'aes-gcm'"'"'" >&2; exit 2; }\nexit 0\n' >"$T/nogcm-sc"
chmod +x "$T/nogcm-sc"
check "an aes-gcm system on a binary that refuses the cipher is refused, in its words" \
	"refused --systems=raw,aes-gcm@nogcm --bin=nogcm='$T/nogcm-sc' && { bash '$BENCH_DIR/run.sh' --dry-run --scratch='$T' --out='$T/out-bad' --systems=aes-gcm@nogcm --bin=nogcm='$T/nogcm-sc' 2>&1 || true; } | grep -q \"init --cipher=aes-gcm.*unknown cipher 'aes-gcm'\""
check "a bad --qd-depths is refused" "refused --bench=fioqd --qd-depths=1,x && refused --qd-depths=0 && refused --qd-depths=,"
check "an unknown --qd-engine is refused" "refused --bench=fioqd --qd-engine=posixaio"
check "a bad --scale-threads is refused" "refused --bench=scale --scale-threads=1,x && refused --scale-threads=0 && refused --scale-threads=65"
check "--scale-files not a multiple of every thread count is refused" "refused --bench=scale --scale-threads=1,3 --scale-files=400"
check "gluster-2c refuses every benchmark but scale" \
	"refused --fs=gluster-2c --bench=dd && refused --fs=gluster-2c --bench=scale,mongo && refused --fs=ext4,gluster-2c --bench=fio"

# 2. SIGINT (what Ctrl-C sends to the foreground group) while a FUSE system
#    is mounted: the runner must unmount, detach and remove everything.
last=${SYSTEMS##*,}
# A script's background jobs start with SIGINT ignored, which bash cannot
# undo; env --default-signal restores what a terminal's Ctrl-C would meet.
setsid env --default-signal=INT bash "$BENCH_DIR/run.sh" --systems="$last" \
	--bench=dd --dd-bytes=2048000000 --scratch="$T" --out="$T/out2" >"$T/run2.log" 2>&1 &
pid=$!
for ((i = 0; i < 100; i++)); do
	grep -q "$T/sc-bench" /proc/mounts && [ "$(grep -c "$T/sc-bench" /proc/mounts)" -ge 2 -o "$last" = raw ] && break
	sleep 0.2
done
sleep 1
kill -INT -- -"$pid" 2>/dev/null
wait "$pid"
rc=$?
check "interrupted run exits 130" "[ $rc = 130 ]"
check "nothing left after SIGINT" leftovers

[ "$fails" = 0 ] && echo "selftest: all passed" || echo "selftest: $fails failed (logs in $T kept: see run1.log)"
if [ "$fails" != 0 ]; then trap - EXIT; fi
exit $((fails > 0))
