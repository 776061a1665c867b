#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/run.sh: the stackcrypt benchmark runner (issue #6). It answers the
# 2012 HekaFS crypt-translator report: the same dd and mongo-style tests over
# A) a FUSE stack without the crypt layer (stackcrypt passthrough), B) the
# crypt layer with an identity cipher (null) and C) a real cipher (aes-xts,
# aes-cbc, aes-gcm), beside the raw backing filesystem and the encrypting
# FUSE filesystems a user would pick instead; and issue #17's table of 4 KiB
# random I/O against the I/O depth (fioqd) and issue #19's table of
# small-file create/stat and 4 KiB random write against the number of
# application threads (scale). Everything it makes (loop images,
# filesystems, volumes, mounts) lives in one scratch dir and is removed on
# exit, Ctrl-C included. Layout: lib/common.sh (helpers, cleanup),
# lib/systems.sh (what is measured), lib/benchmarks.sh (how),
# lib/report.sh (tables, JSON, charts, target checks), smallfiles.c,
# scale.c.
set -u -o pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
. "$BENCH_DIR/lib/common.sh"
. "$BENCH_DIR/lib/systems.sh"
. "$BENCH_DIR/lib/benchmarks.sh"
. "$BENCH_DIR/lib/report.sh"

usage()
{
	cat <<EOF
usage: bench/run.sh [--full] [--systems=a,b,...] [--fs=ext4,xfs] [--reps=N]
                    [--bench=dd,mongo,bigdir,tree,fio,fioqd,scale] [--bin=NAME=PATH]
                    [--out=DIR] [options]

Quick mode (default, a few minutes): raw, passthrough, null, aes-xts, aes-cbc
and default (the volume a bare 'stackcrypt init' makes: aes-gcm with
encrypted names; aes-xts and the others are made with --plaintext-names) on
ext4, 1 repetition, dd of 200 MB (bs=4K count=50000) instead of 800 MB,
5 000 small files. --full: ext4 and XFS, 3 repetitions (median, min, max),
dd exactly bs=4K count=200000 (800 MB), 50 000 small files, the /usr/include
tree, a directory of 100 000 entries, fio on a 1 GiB file, the fio iodepth
table (fioqd), the thread-scaling table (scale), and the peers gocryptfs, securefs, encfs, cryfs (installed
with apt-get when missing and root); aes-gcm and the -names systems too when
the binary offers them.

  --full               the full suite (defaults above)
  --systems=LIST       from: $ALL_SYSTEMS
                       (null-names, aes-xts-names, aes-gcm-names: volumes
                       made with init --encrypt-names, only with a binary
                       that has it; aes-gcm, aes-gcm-names: init
                       --cipher=aes-gcm, only with a binary that makes it;
                       integrity: init --integrity, the default volume
                       with files bound to names, sizes and versions);
                       or a variant of a stackcrypt system, a column of its
                       own run interleaved with the others:
                         NAME+OPTS  mounted with -o OPTS
                                    (aes-xts,aes-xts+max_threads=2: a lever)
                         NAME@BIN   run by the binary --bin=BIN=PATH names
                                    (aes-xts,aes-xts@base: two builds)
                         NAME@BIN+OPTS  both
  --bin=NAME=PATH      a stackcrypt binary that NAME@BIN systems run (repeat
                       for more); NAME is [A-Za-z0-9_]; plain systems run SC_BIN
  --fs=LIST            ext4,xfs (root only; otherwise a temp dir is used);
                       gluster, gluster-dist: a directory of a GlusterFS
                       volume's FUSE mount (one brick; two bricks,
                       distribute), a fresh volume on XFS loop-image bricks
                       for every system and repetition (scripts/gluster.sh,
                       loopback only; raw = the GlusterFS mount itself);
                       gluster-2c: two clients of one single-brick volume
                       (two GlusterFS FUSE mounts, two glusterfs client
                       processes), every system run twice at once, one
                       instance per client on a subdirectory of its own
                       (backing/c1 through client 1, backing/c2 through
                       client 2; the -gfapi systems two daemons, each its
                       own libgfapi client; raw the two directories): only
                       the scale benchmark (the default then), T threads
                       per client, the figures both clients' aggregate
  --reps=N             repetitions; systems are interleaved within each one
  --bench=LIST         from: dd,mongo,bigdir,tree,fio,fioqd,scale (quick:
                       dd,mongo; full: all). fioqd: 4 KiB randread,
                       randwrite, 70/30 randrw, 1 job, an asynchronous
                       engine, direct=1, at each --qd-depths; IOPS, mean and
                       p99 latency per cell. scale: at each --scale-threads
                       count T, create --scale-files files of 4 KiB with T
                       threads (a directory each), lstat them all (cold),
                       and fio 4 KiB randwrite, psync, numjobs=T threads, a
                       file per job; operations/s per cell
  --out=DIR            results dir (default bench/results/<UTC timestamp>)
  --dd-bytes=N         bytes per dd run (quick 204800000, full 819200000)
  --mongo-files=N      small files (quick 5000, full 50000)
  --bigdir-files=N     entries of the bigdir directory (default 100000)
  --fio-size=MIB       fio file size (quick 256, full 1024)
  --fio-runtime=S      seconds per fio run after 1 s ramp (quick 3, full 5)
  --qd-depths=LIST     fioqd I/O depths (default 1,4,8,16,32,64)
  --qd-engine=NAME     fioqd engine: libaio (default) or io_uring
  --scale-threads=LIST scale: application thread counts (default 1,2,4,8,16)
  --scale-files=N      scale: files per create/stat cell, a multiple of
                       every thread count (quick 4000, full 16000)
  --scale-fio-size=MIB scale: fio file size per job (quick 16, full 64)
  --tree=DIR           the tree to untar/list/read/remove (default /usr/include)
  --scratch=DIR        parent of the scratch dir (default \$TMPDIR or /tmp)
  --no-install         never apt-get the peers
  --dry-run            print the plan and its estimated time, run nothing
  --estimate-from=DIR  base the estimate on the wall times of an earlier run
                       (its raw.tsv + meta.tsv), scaled to this run's sizes
  -h, --help           this text

Environment: SC_BIN = the stackcrypt binary (default $REPO/build/fs/stackcrypt,
which the README's build command makes); SC_MOUNT_OPTS = -o options for every
stackcrypt mount (e.g. writeback), recorded in the results.
Output: results.md (tables, targets), results.json, raw.tsv (every figure
of every run), *.png charts (gnuplot), run.log, fio/*.json.
Root: scratch ext4/XFS loop images (6 GiB sparse), a fresh mkfs for every
system in every repetition, caches dropped before reads. Non-root: a temp
dir on whatever /tmp is, no cache drops, no write amplification.
EOF
}

# ---------------------------------------------------------------- options
FULL=0
OPT_SYSTEMS= OPT_FS= OPT_REPS= OPT_BENCH= OPT_OUT= OPT_DD= OPT_MONGO=
TREE_SRC=/usr/include OPT_FIO_SIZE= OPT_FIO_RT= OPT_SCRATCH=${TMPDIR:-/tmp} NO_INSTALL=0 DRY_RUN=0 OPT_EST=
BIGDIR_N=100000
QD_DEPTHS=1,4,8,16,32,64 QD_ENGINE=libaio
SCALE_THREADS=1,2,4,8,16 OPT_SCALE_FILES= OPT_SCALE_FIO=
ARGS="$*"
for arg in "$@"; do
	case $arg in
	--full) FULL=1 ;;
	--systems=*) OPT_SYSTEMS=${arg#*=} ;;
	--fs=*) OPT_FS=${arg#*=} ;;
	--reps=*) OPT_REPS=${arg#*=} ;;
	--bench=*) OPT_BENCH=${arg#*=} ;;
	--out=*) OPT_OUT=${arg#*=} ;;
	--dd-bytes=*) OPT_DD=${arg#*=} ;;
	--mongo-files=*) OPT_MONGO=${arg#*=} ;;
	--bigdir-files=*) BIGDIR_N=${arg#*=} ;;
	--bin=*)
		b=${arg#--bin=}
		case $b in
		[A-Za-z0-9_]*=?*) ;;
		*) echo "bench: --bin needs NAME=PATH, got '${arg#--bin=}'" >&2; exit 2 ;;
		esac
		case ${b%%=*} in *[!A-Za-z0-9_]*) echo "bench: --bin name '${b%%=*}' may hold only A-Z a-z 0-9 _" >&2; exit 2 ;; esac
		p=${b#*=}
		case $p in /*) ;; *) p=$PWD/$p ;; esac
		[ -x "$p" ] || { echo "bench: --bin=$b: $p is not an executable file" >&2; exit 2; }
		SC_BIN_OF[${b%%=*}]=$p
		;;
	--fio-size=*) OPT_FIO_SIZE=${arg#*=} ;;
	--fio-runtime=*) OPT_FIO_RT=${arg#*=} ;;
	--qd-depths=*) QD_DEPTHS=${arg#*=} ;;
	--qd-engine=*) QD_ENGINE=${arg#*=} ;;
	--scale-threads=*) SCALE_THREADS=${arg#*=} ;;
	--scale-files=*) OPT_SCALE_FILES=${arg#*=} ;;
	--scale-fio-size=*) OPT_SCALE_FIO=${arg#*=} ;;
	--tree=*) TREE_SRC=${arg#*=} ;;
	--scratch=*) OPT_SCRATCH=${arg#*=} ;;
	--no-install) NO_INSTALL=1 ;;
	--dry-run) DRY_RUN=1 ;;
	--estimate-from=*) OPT_EST=${arg#*=} ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench: unknown option $arg (see --help)" >&2; exit 2 ;;
	esac
done

if [ "$FULL" = 1 ]; then
	SYSTEMS=$OPT_SYSTEMS	# empty: every system the binary offers, below
	FSLIST=${OPT_FS:-ext4,xfs}
	REPS=${OPT_REPS:-3}
	BENCHES=${OPT_BENCH:-dd,mongo,bigdir,tree,fio,fioqd,scale}
	DD_BYTES=${OPT_DD:-819200000}
	MONGO_N=${OPT_MONGO:-50000}
	FIO_SIZE=${OPT_FIO_SIZE:-1024}
	FIO_RUNTIME=${OPT_FIO_RT:-5}
	FIO_VERIFY_SIZE=64
	SCALE_FILES=${OPT_SCALE_FILES:-16000}
	SCALE_FIO_MIB=${OPT_SCALE_FIO:-64}
	MODE=full
else
	SYSTEMS=${OPT_SYSTEMS:-raw passthrough null aes-xts aes-cbc default}
	FSLIST=${OPT_FS:-ext4}
	REPS=${OPT_REPS:-1}
	BENCHES=${OPT_BENCH:-dd,mongo}
	DD_BYTES=${OPT_DD:-204800000}
	MONGO_N=${OPT_MONGO:-5000}
	FIO_SIZE=${OPT_FIO_SIZE:-256}
	FIO_RUNTIME=${OPT_FIO_RT:-3}
	FIO_VERIFY_SIZE=32
	SCALE_FILES=${OPT_SCALE_FILES:-4000}
	SCALE_FIO_MIB=${OPT_SCALE_FIO:-16}
	MODE=quick
fi
SYSTEMS=${SYSTEMS//,/ }
FSLIST=${FSLIST//,/ }
BENCHES=${BENCHES//,/ }
MONGO_SEED=42
case $REPS in '' | *[!0-9]* | 0) echo "bench: --reps needs a positive number" >&2; exit 2 ;; esac
case $BIGDIR_N in '' | *[!0-9]* | 0) echo "bench: --bigdir-files needs a positive number" >&2; exit 2 ;; esac
for b in $BENCHES; do
	case $b in dd | mongo | bigdir | tree | fio | fioqd | scale) ;; *) echo "bench: unknown benchmark $b" >&2; exit 2 ;; esac
done
# Two clients at once: only the scaling table has an aggregate to show;
# every other benchmark is a one-client measurement.
case " $FSLIST " in *" gluster-2c "*)
	[ -z "$OPT_BENCH" ] && BENCHES=scale
	for b in $BENCHES; do
		[ "$b" = scale ] ||
			{ echo "bench: --fs=gluster-2c runs only --bench=scale (two clients at once); $b is a one-client benchmark" >&2; exit 2; }
	done ;;
esac
QD_DEPTHS=${QD_DEPTHS//,/ }
[ -n "${QD_DEPTHS// /}" ] || { echo "bench: --qd-depths needs at least one depth" >&2; exit 2; }
for d in $QD_DEPTHS; do
	case $d in *[!0-9]* | 0*) echo "bench: --qd-depths: '$d' is not a depth from 1 to 4096" >&2; exit 2 ;; esac
	((d <= 4096)) || { echo "bench: --qd-depths: '$d' is not a depth from 1 to 4096" >&2; exit 2; }
done
case $QD_ENGINE in libaio | io_uring) ;; *) echo "bench: --qd-engine must be libaio or io_uring, not '$QD_ENGINE'" >&2; exit 2 ;; esac
SCALE_THREADS=${SCALE_THREADS//,/ }
[ -n "${SCALE_THREADS// /}" ] || { echo "bench: --scale-threads needs at least one thread count" >&2; exit 2; }
for t in $SCALE_THREADS; do
	case $t in *[!0-9]* | 0*) echo "bench: --scale-threads: '$t' is not a thread count from 1 to 64" >&2; exit 2 ;; esac
	((t <= 64)) || { echo "bench: --scale-threads: '$t' is not a thread count from 1 to 64" >&2; exit 2; }
done
case $SCALE_FILES in '' | *[!0-9]* | 0*) echo "bench: --scale-files needs a positive number" >&2; exit 2 ;; esac
for t in $SCALE_THREADS; do
	((SCALE_FILES % t == 0)) || { echo "bench: --scale-files=$SCALE_FILES is not a multiple of the thread count $t" >&2; exit 2; }
done
case $SCALE_FIO_MIB in '' | *[!0-9]* | 0*) echo "bench: --scale-fio-size needs a positive number of MiB" >&2; exit 2 ;; esac
SC_BIN=${SC_BIN:-$REPO/build/fs/stackcrypt}
case $SC_BIN in /*) ;; *) SC_BIN=$PWD/$SC_BIN ;; esac
if [ -z "$SYSTEMS" ]; then
	for s in $ALL_SYSTEMS; do
		case " $NAMES_SYSTEMS " in *" $s "*) [ -x "$SC_BIN" ] && sys_names_offered "$SC_BIN" || continue ;; esac
		case " $GCM_SYSTEMS " in *" $s "*) [ -x "$SC_BIN" ] && sys_cipher_offered "$SC_BIN" aes-gcm >/dev/null || continue ;; esac
		case " $DEFAULT_SYSTEMS " in *" $s "*) [ -x "$SC_BIN" ] && sys_plain_names_offered "$SC_BIN" || continue ;; esac
		SYSTEMS="$SYSTEMS $s"
	done
fi
for s in $SYSTEMS; do
	[ -n "${SYS_DESC[$s]:-}" ] || sys_variant "$s" || {
		case $s in
		*@*) [ -n "${SC_BIN_OF[$(sys_binname "$s")]:-}" ] ||
			{ echo "bench: system $s names binary '$(sys_binname "$s")', which no --bin=$(sys_binname "$s")=PATH gives" >&2; exit 2; } ;;
		esac
		echo "bench: unknown system $s (known: $ALL_SYSTEMS, or NAME+OPTS, NAME@BIN, NAME@BIN+OPTS for one of $STACKCRYPT_SYSTEMS)" >&2
		exit 2
	}
	# Asked for by name, a names system the binary lacks is an error, not a skip.
	case " $NAMES_SYSTEMS " in *" $(sys_base "$s") "*)
		b=$(sys_bin "$s")
		if [ -x "$b" ] && ! sys_names_offered "$b"; then
			echo "bench: system $s needs 'stackcrypt init --encrypt-names', which $b does not offer (build a tree with issue #16)" >&2
			exit 2
		fi ;;
	esac
	# So is an aes-gcm system whose binary refuses the cipher (issue #17).
	case " $GCM_SYSTEMS " in *" $(sys_base "$s") "*)
		b=$(sys_bin "$s")
		if [ -x "$b" ] && ! why=$(sys_cipher_offered "$b" aes-gcm); then
			echo "bench: system $s needs 'stackcrypt init --cipher=aes-gcm', which $b refuses: $why" >&2
			exit 2
		fi ;;
	esac
done
IS_ROOT=0
[ "$(id -u)" = 0 ] && IS_ROOT=1
CLK_TCK=$(getconf CLK_TCK)
if [ "$IS_ROOT" = 0 ]; then
	FSLIST=tmpdir
fi
for f in $FSLIST; do
	case $f in ext4 | xfs | tmpdir) ;;
	gluster | gluster-dist | gluster-2c)
		GLUSTER_SH=$REPO/scripts/gluster.sh
		"$GLUSTER_SH" check >/dev/null || { echo "bench: --fs=$f: scripts/gluster.sh check failed" >&2; exit 2; } ;;
	*) echo "bench: unknown filesystem $f" >&2; exit 2 ;;
	esac
done

# ---------------------------------------------------------------- ETA model
# Milliseconds a (system, benchmark) unit is expected to take before it has
# been measured once, at full-mode sizes, from REFERENCE.md's peer figures
# and first runs on a 2-core VM; a measured duration replaces the guess as
# soon as it exists, so the estimate sharpens after the first repetition.
# Integer arithmetic only: the progress line recomputes it at every phase.
declare -A DUR=() PRIOR=() DONE_B=()
prior()
{
	local sys=$1 b=$2 dd mongo bigdir tree setup lay=3
	# bigdir: seconds for 100 000 entries (guesses, replaced once measured)
	case $(sys_base "$sys") in
	raw) dd=15 mongo=20 bigdir=5 tree=6 setup=1 lay=1 ;;
	gocryptfs) dd=60 mongo=180 bigdir=90 tree=20 setup=2 ;;
	securefs) dd=30 mongo=100 bigdir=60 tree=15 setup=3 ;;
	encfs) dd=60 mongo=180 bigdir=90 tree=25 setup=2 ;;
	cryfs) dd=70 mongo=220 bigdir=200 tree=40 setup=9 lay=6 ;;
	*) dd=80 mongo=250 bigdir=60 tree=30 setup=2 ;;
	esac
	case $b in
	setup) echo $((setup * 1000)) ;;
	dd) echo $((dd * 1000 * (DD_BYTES / 4096) / 200000 + 3000)) ;;
	mongo) echo $((mongo * 1000 * MONGO_N / 50000 + 2000)) ;;
	bigdir) echo $((bigdir * 1000 * BIGDIR_N / 100000 + 2000)) ;;
	tree) echo $((tree * 1000)) ;;
	fio) echo $((6 * (FIO_RUNTIME * 1000 + 1500) + FIO_SIZE * lay * 1000 / 1024 +
		FIO_VERIFY_SIZE * lay * 2000 / 64)) ;;
	fioqd) echo $((3 * $(wc -w <<<"$QD_DEPTHS") * (FIO_RUNTIME * 1000 + 1500) + FIO_SIZE * lay * 1000 / 1024)) ;;
	# per cell: create + stat at mongo's pace per file, plus one fio run
	scale) echo $(($(wc -w <<<"$SCALE_THREADS") * (FIO_RUNTIME * 1000 + 3500 +
		2 * mongo * 1000 * SCALE_FILES / 50000) + 16 * SCALE_FIO_MIB * lay * 1000 / 1024)) ;;
	esac
}
make_plan()
{
	local r f s b
	PLAN=()
	for ((r = 1; r <= REPS; r++)); do
		for f in $FSLIST; do
			for s in $SYSTEMS; do
				PLAN+=("$r $f $s")
			done
		done
	done
	for s in $SYSTEMS; do
		for b in setup $BENCHES; do
			PRIOR[$s/$b]=$(prior "$s" "$b")
		done
	done
	[ -n "$OPT_EST" ] && prior_from_run "$OPT_EST"
	# A variant is expected to take what its base took in the earlier run
	# (prior() already guesses by the base's name).
	for s in $SYSTEMS; do
		case $s in *+* | *@*) for b in setup $BENCHES; do
			PRIOR[$s/$b]=${PRIOR[$(sys_base "$s")/$b]:-${PRIOR[$s/$b]}}
		done ;; esac
	done
}

# Replace the guesses by the wall times an earlier run measured (row
# "wall.BENCH", recorded per system and benchmark), scaled to this run's
# dd bytes, file count and fio run time; the mean over its runs and fs.
prior_from_run()
{
	local dir=$1 line s b ms
	[ -f "$dir/raw.tsv" ] && [ -f "$dir/meta.tsv" ] || { echo "bench: no raw.tsv/meta.tsv in $dir" >&2; exit 2; }
	local odd omongo ofio obig oqd osc
	odd=$(awk -F'\t' '$1 == "dd_bytes" {print $2}' "$dir/meta.tsv")
	omongo=$(awk -F'\t' '$1 == "mongo_files" {print $2}' "$dir/meta.tsv")
	obig=$(awk -F'\t' '$1 == "bigdir_files" {print $2}' "$dir/meta.tsv")
	ofio=$(awk -F'\t' '$1 == "fio_runtime_s" {print $2}' "$dir/meta.tsv")
	oqd=$(awk -F'\t' '$1 == "qd_depths" {print split($2, a, " ")}' "$dir/meta.tsv")
	osc=$(awk -F'\t' '$1 == "scale_files" {print $2}' "$dir/meta.tsv")
	while read -r s b ms; do
		[ -n "${PRIOR[$s/$b]:-}" ] && PRIOR[$s/$b]=$ms
	done < <(awk -F'\t' -v dd="$DD_BYTES" -v odd="$odd" -v n="$MONGO_N" -v on="$omongo" \
		-v rt="$FIO_RUNTIME" -v ort="$ofio" -v bn="$BIGDIR_N" -v obn="${obig:-$BIGDIR_N}" \
		-v nqd="$(wc -w <<<"$QD_DEPTHS")" -v onqd="${oqd:-6}" \
		-v sf="$SCALE_FILES" -v osf="${osc:-$SCALE_FILES}" '
		$4 ~ /^wall\./ { b = substr($4, 6); k = $2 " " b; t[k] += $6; c[k]++ }
		END { for (k in t) { split(k, a, " "); m = t[k] / c[k]
			if (a[2] == "dd") m = m * dd / odd
			else if (a[2] == "mongo") m = m * n / on
			else if (a[2] == "bigdir") m = m * bn / obn
			else if (a[2] == "fio") m = m * (6 * (rt + 1.5) + 4) / (6 * (ort + 1.5) + 4)
			else if (a[2] == "fioqd") m = m * (3 * nqd * (rt + 1.5) + 2) / (3 * onqd * (ort + 1.5) + 2)
			else if (a[2] == "scale") m = m * (sf + 1000 * rt) / (osf + 1000 * ort)
			printf "%s %s %d\n", a[1], a[2], m * 1000 } }' "$dir/raw.tsv")
}
PLAN_POS=0
CUR_BENCH_T0=
CUR_FS=- CUR_SYS=- CUR_REP=0 CUR_BENCH=-
# Seconds left: the rest of the current unit plus every unit after it.
bl_eta_left()
{
	local i r f s b e sum=0 now=$(bl_now_us)
	for ((i = PLAN_POS; i < ${#PLAN[@]}; i++)); do
		read -r r f s <<<"${PLAN[i]}"
		for b in setup $BENCHES; do
			if ((i == PLAN_POS)) && [ -n "${DONE_B[$b]:-}" ]; then continue; fi
			e=${DUR[$f/$s/$b]:-${DUR[$s/$b]:-${PRIOR[$s/$b]}}}
			if ((i == PLAN_POS)) && [ "$b" = "$CUR_BENCH" ] && [ -n "$CUR_BENCH_T0" ]; then
				e=$((e - (now - CUR_BENCH_T0) / 1000))
				((e < 1000)) && e=1000
			fi
			sum=$((sum + e))
		done
	done
	echo $((sum / 1000))
}

# ---------------------------------------------------------------- output dir
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OPT_OUT:-$BENCH_DIR/results/$STAMP}
mkdir -p "$OUT/fio" || exit 1
OUT=$(cd "$OUT" && pwd)
: >"$OUT/raw.tsv"
: >"$OUT/run.log"
exec 3>&2
T_START_US=$(bl_now_us)
PROGRESS_SHOWN=

bl_log "stackcrypt bench ($MODE): $0 $ARGS"
bl_log "  systems: $SYSTEMS; fs: $FSLIST; reps: $REPS; benchmarks: $BENCHES"
if [[ " $BENCHES " == *" dd "* ]] && [ "$DD_BYTES" != 819200000 ]; then
	bl_log "  dd writes $DD_BYTES bytes per run (bs=4K count=$((DD_BYTES / 4096))), not the 2012 test's 819200000 (count=200000, the --full default)"
fi

read -r LOAD1 _ </proc/loadavg
if awk -v l="$LOAD1" -v c="$(nproc)" 'BEGIN{exit !(l > c)}'; then
	bl_log "  warning: load average $LOAD1 on $(nproc) cores: other work competes with every figure (ratios from the same run suffer less)"
fi

# ---------------------------------------------------------------- prerequisites
if [ "$FULL" = 1 ] && [ "$IS_ROOT" = 1 ] && [ "$NO_INSTALL" = 0 ] && [ "$DRY_RUN" = 0 ]; then
	missing=
	for p in gocryptfs securefs encfs cryfs fio; do
		case " $SYSTEMS $BENCHES ${BENCHES//fioqd/fio} ${BENCHES//scale/fio} " in *" $p "*) ;; *) continue ;; esac
		command -v "$p" >/dev/null || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		bl_log "  installing:$missing (apt-get)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y $missing >>"$OUT/run.log" 2>&1 ||
			bl_log "  apt-get install$missing failed; those are skipped below"
	fi
fi
RUN_SYSTEMS=
for s in $SYSTEMS; do
	fn=$(sys_fn "$s")
	SC_SYS_BIN=$(sys_bin "$s")
	if why=$("sys_${fn}_check"); then
		RUN_SYSTEMS="$RUN_SYSTEMS $s"
	else
		bl_log "  skipped system $s: $why"
	fi
done
RUN_SYSTEMS=${RUN_SYSTEMS# }
if [ "$FULL" = 0 ] && [ -z "$OPT_SYSTEMS" ]; then
	bl_log "  peers not run in quick mode ($PEER_SYSTEMS): use --full or --systems="
fi
RUN_BENCHES=
for b in $BENCHES; do
	if { [ "$b" = fio ] || [ "$b" = fioqd ] || [ "$b" = scale ]; } && ! command -v fio >/dev/null; then
		bl_log "  skipped benchmark $b: fio not installed"
		continue
	fi
	# Asked for, an engine this fio lacks is an error, not a skip. (grep
	# reads the whole list: grep -q could SIGPIPE fio and fail the pipeline.)
	if [ "$b" = fioqd ] && ! fio --enghelp 2>/dev/null | grep -cx "[[:space:]]*$QD_ENGINE" >/dev/null; then
		bl_die "fioqd: this fio ($(fio --version)) has no $QD_ENGINE engine (try --qd-engine=libaio or io_uring)"
	fi
	RUN_BENCHES="$RUN_BENCHES $b"
done
BENCHES=${RUN_BENCHES# }
[ -n "$RUN_SYSTEMS" ] || bl_die "no system can run"
if [ "$IS_ROOT" = 0 ]; then
	bl_log "  not root: using a temp dir under $OPT_SCRATCH instead of ext4/XFS loop images; caches are not dropped and write amplification is not measured"
fi

SYSTEMS=$RUN_SYSTEMS
make_plan
bl_log "  plan: ${#PLAN[@]} runs (fs x system x rep), estimated $(bl_fmt_time "$(bl_eta_left)")"
if [ "$DRY_RUN" = 1 ]; then
	for b in setup $BENCHES; do
		line="    $b:"
		for s in $SYSTEMS; do line="$line $s=$((PRIOR[$s/$b] / 1000))s"; done
		bl_log "$line"
	done
	exit 0
fi

# ---------------------------------------------------------------- scratch
trap 'bl_on_signal INT' INT
trap 'bl_on_signal TERM' TERM
trap 'bl_cleanup' EXIT
mkdir -p "$OPT_SCRATCH" || exit 1
SCRATCH=$(mktemp -d "$OPT_SCRATCH/sc-bench.XXXXXX") || bl_die "cannot make a scratch dir"
bl_log "  scratch: $SCRATCH (removed at the end)"
MNT=$SCRATCH/mnt
mkdir -p "$MNT"

# The small-file helper: the one built with the project, else compiled here.
SMALLFILES=
case " $BENCHES " in *" mongo "* | *" bigdir "*)
	for c in "$(dirname "$SC_BIN")/../bench/sc-smallfiles" "$REPO/build/bench/sc-smallfiles"; do
		[ -x "$c" ] && SMALLFILES=$c && break
	done
	if [ -z "$SMALLFILES" ]; then
		SMALLFILES=$SCRATCH/sc-smallfiles
		${CC:-cc} -std=gnu11 -O2 -o "$SMALLFILES" "$BENCH_DIR/smallfiles.c" >>"$OUT/run.log" 2>&1 ||
			bl_die "cannot compile bench/smallfiles.c (need cc)"
	fi
	[[ " $BENCHES " == *" mongo "* ]] &&
		MONGO_BYTES=$("$SMALLFILES" list / "$MONGO_N" "$MONGO_SEED" | sed -n 's/^files=.* bytes=//p')
	printf '  small-file helper: %s\n' "$SMALLFILES" >>"$OUT/run.log"
	;;
esac
# The scaling benchmark's driver, found or compiled the same way.
SCALE_BIN=
case " $BENCHES " in *" scale "*)
	for c in "$(dirname "$SC_BIN")/../bench/sc-scale" "$REPO/build/bench/sc-scale"; do
		[ -x "$c" ] && SCALE_BIN=$c && break
	done
	if [ -z "$SCALE_BIN" ]; then
		SCALE_BIN=$SCRATCH/sc-scale
		${CC:-cc} -std=gnu11 -O2 -pthread -o "$SCALE_BIN" "$BENCH_DIR/scale.c" >>"$OUT/run.log" 2>&1 ||
			bl_die "cannot compile bench/scale.c (need cc)"
	fi
	printf '  scaling helper: %s\n' "$SCALE_BIN" >>"$OUT/run.log"
	;;
esac
case " $BENCHES " in *" tree "*)
	TREE_TAR=$SCRATCH/include.tar
	tar -C "$(dirname "$TREE_SRC")" -cf "$TREE_TAR" "$(basename "$TREE_SRC")" 2>>"$OUT/run.log" ||
		bl_die "cannot tar $TREE_SRC"
	TREE_FILES=$(tar -tf "$TREE_TAR" | grep -vc '/$')
	;;
esac

# Loop images: one per filesystem type, reformatted for every run so each
# system starts on a fresh filesystem with nothing in the caches.
declare -A LOOP_OF=()
IMG_SIZE=6G
if [ "$IS_ROOT" = 1 ]; then
	for f in $FSLIST; do
		case $f in gluster*) continue ;; esac
		truncate -s "$IMG_SIZE" "$SCRATCH/$f.img" || bl_die "cannot create $SCRATCH/$f.img"
		dev=$(losetup -f --show "$SCRATCH/$f.img") || bl_die "losetup failed"
		LOOPS+=("$dev")
		LOOP_OF[$f]=$dev
	done
fi
FSMNT=$SCRATCH/fs
# --fs=gluster-2c: client 2's GlusterFS mount and stackcrypt mount point
# (client 1 has FSMNT and MNT).
FSMNT2=$SCRATCH/fs-c2
MNT2=$SCRATCH/mnt-c2
GLUSTER_WORK=
mkdir -p "$FSMNT"

fs_fresh()
{
	local f=$1
	if [ "$IS_ROOT" = 0 ]; then
		rm -rf "$FSMNT"
		mkdir -p "$FSMNT"
		LOOPDEV=
		return 0
	fi
	mountpoint -q "$FSMNT" && umount "$FSMNT"
	case $f in gluster | gluster-dist | gluster-2c)
		# A volume of its own: GlusterFS's caches and bricks start empty.
		# gluster-2c: a second client, its own glusterfs process, on FSMNT2
		# (`down` unmounts both).
		LOOPDEV=
		GLUSTER_WORK=$SCRATCH/gl-$CUR_REP-${CUR_SYS//[^A-Za-z0-9_]/_}
		GLUSTER_VOL=scbench$$
		"$GLUSTER_SH" -w "$GLUSTER_WORK" up "$([ "$f" = gluster-dist ] && echo dist || echo single)" \
			"$GLUSTER_VOL" >>"$OUT/run.log" 2>&1 || return 1
		"$GLUSTER_SH" -w "$GLUSTER_WORK" mount "$GLUSTER_VOL" "$FSMNT" >>"$OUT/run.log" 2>&1 || return 1
		if [ "$f" = gluster-2c ]; then
			mkdir -p "$FSMNT2" || return 1
			"$GLUSTER_SH" -w "$GLUSTER_WORK" mount "$GLUSTER_VOL" "$FSMNT2" >>"$OUT/run.log" 2>&1 || return 1
		fi
		return 0 ;;
	esac
	LOOPDEV=${LOOP_OF[$f]}
	# A system's own mkfs options (SYS_NAME_MKFS_FS: fscrypt's -O encrypt).
	local extra=SYS_$(sys_fn "$CUR_SYS")_MKFS_$f
	case $f in
	ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 ${!extra:-} "$LOOPDEV" ;;
	xfs) mkfs.xfs -q -f ${!extra:-} "$LOOPDEV" ;;
	esac >>"$OUT/run.log" 2>&1 || return 1
	mount "$LOOPDEV" "$FSMNT" || return 1
	case " ${FS_MOUNTS[*]} " in *" $FSMNT "*) ;; *) FS_MOUNTS+=("$FSMNT") ;; esac
}

fs_release()
{
	if [ -n "${GLUSTER_WORK:-}" ]; then
		"$GLUSTER_SH" -w "$GLUSTER_WORK" down >>"$OUT/run.log" 2>&1 ||
			bl_log "bench: scripts/gluster.sh -w $GLUSTER_WORK down failed"
		GLUSTER_WORK=
		return 0
	fi
	[ "$IS_ROOT" = 1 ] && mountpoint -q "$FSMNT" && umount "$FSMNT"
	return 0
}

# ---------------------------------------------------------------- one run
# run_unit REP FS SYSTEM: fresh fs, fresh volume, every benchmark, unmount.
declare -A SKIP_SAID=()
run_unit()
{
	local t0 b tb fn view_kind i v dead why
	fn=$(sys_fn "$3")
	SC_SYS_OPTS=$(sys_opts "$3")
	SC_SYS_BIN=$(sys_bin "$3")
	CUR_REP=$1 CUR_FS=$2 CUR_SYS=$3 CUR_BENCH=setup
	# A system that runs on some backings only (sys_NAME_on): skipped on
	# the others, said once.
	if declare -F "sys_${fn}_on" >/dev/null && ! why=$("sys_${fn}_on" "$2"); then
		[ -n "${SKIP_SAID[$2/$3]:-}" ] || bl_log "bench: $2/$3 skipped: $why"
		SKIP_SAID[$2/$3]=1
		return 0
	fi
	DONE_B=()
	CUR_BENCH_T0=$(bl_now_us)
	t0=$CUR_BENCH_T0
	bl_progress "mkfs + mount"
	# The machine is shared: keep its load beside every run's figures.
	bl_record setup load1 "$(cut -d' ' -f1 /proc/loadavg)"
	fs_fresh "$CUR_FS" || { bl_log "bench: mkfs/mount $CUR_FS failed"; fs_release; return 1; }
	# A backing dir, a mount point and a view per client: one, or the two
	# clients of one GlusterFS volume (gluster-2c), each instance of the
	# system on a subdirectory of its own through its own client.
	if [ "$CUR_FS" = gluster-2c ]; then
		BACKINGS=("$FSMNT/backing/c1" "$FSMNT2/backing/c2")
		MNTS=("$MNT" "$MNT2")
	else
		BACKINGS=("$FSMNT/backing")
		MNTS=("$MNT")
	fi
	for v in "${BACKINGS[@]}"; do
		mkdir -p "$v" || { bl_log "bench: $CUR_FS: cannot make $v"; fs_release; return 1; }
	done
	BACKING=${BACKINGS[0]}
	sys_new_key "$SCRATCH/key"
	head -c 24 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$SCRATCH/pass"
	echo >>"$SCRATCH/pass"
	chmod 600 "$SCRATCH/pass"
	KEYFILE=$SCRATCH/key PASSFILE=$SCRATCH/pass
	DAEMON_PIDS=
	view_kind=SYS_${fn}_VIEW
	if [ "${!view_kind:-}" = backing ]; then
		for v in "${BACKINGS[@]}"; do
			if ! "sys_${fn}_start" "$v" >>"$OUT/run.log" 2>&1; then
				bl_log "bench: $CUR_FS/$CUR_SYS: preparing $v failed, see $OUT/run.log"
				bl_record setup failed 1
				fs_release
				return 1
			fi
		done
		VIEWS=("${BACKINGS[@]}")
	else
		for ((i = 0; i < ${#MNTS[@]}; i++)); do
			mkdir -p "${MNTS[i]}"
			FUSE_MOUNTS+=("${MNTS[i]}")
			if ! "sys_${fn}_start" "${BACKINGS[i]}" "${MNTS[i]}" >>"$OUT/run.log" 2>&1; then
				bl_log "bench: $CUR_FS/$CUR_SYS: mounting ${MNTS[i]} failed, see $OUT/run.log"
				bl_record setup failed 1
				for v in "${MNTS[@]}"; do
					bl_unmount_fuse "$v"
				done
				FUSE_MOUNTS=()
				fs_release
				return 1
			fi
			# Every client's daemon: the CPU figures are their sum.
			v=$(bl_daemon_pids "${MNTS[i]}")
			[ -n "$v" ] ||
				bl_log "bench: $CUR_FS/$CUR_SYS: daemon of ${MNTS[i]} not found by its argv; CPU figures without it"
			DAEMON_PIDS="$DAEMON_PIDS$v"
		done
		VIEWS=("${MNTS[@]}")
	fi
	VIEW=${VIEWS[0]}
	DUR[$CUR_FS/$CUR_SYS/setup]=$((($(bl_now_us) - t0) / 1000))
	DUR[$CUR_SYS/setup]=${DUR[$CUR_FS/$CUR_SYS/setup]}
	DONE_B[setup]=1
	bl_record wall.setup sec "$(printf '%d.%03d' $((DUR[$CUR_FS/$CUR_SYS/setup] / 1000)) $((DUR[$CUR_FS/$CUR_SYS/setup] % 1000)))"
	for b in $BENCHES; do
		CUR_BENCH=$b
		CUR_BENCH_T0=$(bl_now_us)
		if ! "bench_$b"; then
			bl_log "bench: $CUR_FS/$CUR_SYS rep $CUR_REP: $b failed (the rest of it is skipped), see $OUT/run.log"
			for v in "${VIEWS[@]}"; do
				rm -rf "${v:?}/"* 2>/dev/null
			done
		fi
		tb=$((($(bl_now_us) - CUR_BENCH_T0) / 1000))
		DUR[$CUR_FS/$CUR_SYS/$b]=$tb
		bl_record "wall.$b" sec "$(printf '%d.%03d' $((tb / 1000)) $((tb % 1000)))"
		DUR[$CUR_SYS/$b]=$tb
		DONE_B[$b]=1
		# A daemon that died mid-run leaves a dead mount: stop here.
		dead=
		if [ "$VIEW" = "$MNT" ]; then
			for v in "${MNTS[@]}"; do
				stat "$v/." >/dev/null 2>&1 || dead="$dead $v"
			done
		fi
		if [ -n "$dead" ]; then
			bl_log "bench: $CUR_FS/$CUR_SYS: the mount is dead (daemon crashed?):$dead"
			break
		fi
	done
	CUR_BENCH=unmount
	bl_progress "unmount"
	if [ "$VIEW" = "$MNT" ]; then
		for v in "${MNTS[@]}"; do
			bl_unmount_fuse "$v"
		done
		FUSE_MOUNTS=()
	fi
	fs_release
	CUR_BENCH_T0=
}

# ---------------------------------------------------------------- main loop
bl_meta_collect
for ((PLAN_POS = 0; PLAN_POS < ${#PLAN[@]}; PLAN_POS++)); do
	read -r r f s <<<"${PLAN[PLAN_POS]}"
	run_unit "$r" "$f" "$s"
done
PLAN_POS=${#PLAN[@]}
[ -n "$PROGRESS_SHOWN" ] && printf '\n' >&3 && PROGRESS_SHOWN=
bl_log "runs done in $(bl_fmt_time $((($(bl_now_us) - T_START_US) / 1000000))); writing the report"
bl_cleanup
bl_report
