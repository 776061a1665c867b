# SPDX-License-Identifier: GPL-2.0-or-later
# Turns raw.tsv (one line per measured figure per run) into the results
# (sourced by bench/run.sh): agg.tsv (median, min, max per figure),
# ratio.tsv (time ratios computed within each repetition, then their median
# as the 2012 report did), iopsratio.tsv (the same for the IOPS of the fioqd
# rows and the operations/s of the scale rows), targets.tsv (issue #6, #8,
# #17 and #19 targets, checked here and never
# by a timed test), results.md, results.json and gnuplot charts. Everything is recomputable from raw.tsv + meta.tsv:
#   bash bench/report.sh DIR

# ---------------------------------------------------------------- row catalogue
# Row id -> label, in display order. The time-like figure of a row (what the
# ratios divide) is "sec", except fio rows where it is us_op = 1e6/IOPS.
DD_ROWS="dd.w.4k dd.wf.4k dd.r.4k dd.w.128k dd.wf.128k dd.r.128k dd.w.1m dd.wf.1m dd.r.1m"
MONGO_ROWS="mongo.create mongo.copy mongo.read mongo.stat mongo.rename mongo.delete"
BIGDIR_ROWS="bigdir.create bigdir.stat bigdir.list bigdir.delete"
TREE_ROWS="tree.untar tree.lsR tree.read tree.rm"
FIO_ROWS="fio.randread.j1 fio.randread.j4 fio.randwrite.j1 fio.randwrite.j4 fio.randrw.j1 fio.randrw.j4"
declare -A LABEL=(
	[dd.w.4k]="dd bs=4K write" [dd.wf.4k]="dd bs=4K write+fdatasync" [dd.r.4k]="dd bs=4K read (cold)"
	[dd.w.128k]="dd bs=128K write" [dd.wf.128k]="dd bs=128K write+fdatasync" [dd.r.128k]="dd bs=128K read (cold)"
	[dd.w.1m]="dd bs=1M write" [dd.wf.1m]="dd bs=1M write+fdatasync" [dd.r.1m]="dd bs=1M read (cold)"
	[mongo.create]="small files: create+sync" [mongo.copy]="small files: cp -a" [mongo.read]="small files: read (cold)"
	[mongo.stat]="small files: stat (cold)" [mongo.rename]="small files: rename" [mongo.delete]="small files: delete"
	[bigdir.create]="big dir: create+sync" [bigdir.stat]="big dir: stat every name (cold)"
	[bigdir.list]="big dir: getdents (cold)" [bigdir.delete]="big dir: delete"
	[tree.untar]="tree: untar" [tree.lsR]="tree: ls -lR" [tree.read]="tree: read all (cold)" [tree.rm]="tree: rm -rf"
	[fio.randread.j1]="fio randread 1 job" [fio.randread.j4]="fio randread 4 jobs"
	[fio.randwrite.j1]="fio randwrite 1 job" [fio.randwrite.j4]="fio randwrite 4 jobs"
	[fio.randrw.j1]="fio 70/30 randrw 1 job" [fio.randrw.j4]="fio 70/30 randrw 4 jobs"
	[fio.verify]="fio randwrite verify=xxhash" [fio.layout]="fio layout (1M writes)"
)
# Short chart labels.
declare -A SHORT=(
	[dd.w.4k]="w4K" [dd.wf.4k]="wf4K" [dd.r.4k]="r4K" [dd.w.128k]="w128K" [dd.wf.128k]="wf128K"
	[dd.r.128k]="r128K" [dd.w.1m]="w1M" [dd.wf.1m]="wf1M" [dd.r.1m]="r1M"
	[mongo.create]="create" [mongo.copy]="copy" [mongo.read]="read" [mongo.stat]="stat"
	[mongo.rename]="rename" [mongo.delete]="delete"
	[bigdir.create]="bd-create" [bigdir.stat]="bd-stat" [bigdir.list]="bd-list" [bigdir.delete]="bd-delete"
	[tree.untar]="untar" [tree.lsR]="ls-lR" [tree.read]="read" [tree.rm]="rm"
	[fio.randread.j1]="rr1" [fio.randread.j4]="rr4" [fio.randwrite.j1]="rw1" [fio.randwrite.j4]="rw4"
	[fio.randrw.j1]="mix1" [fio.randrw.j4]="mix4"
)
ALL_ROWS="$DD_ROWS $MONGO_ROWS $BIGDIR_ROWS $TREE_ROWS $FIO_ROWS"
# Issue #6's "benchmarks 1-4" (bigdir came later, with issue #16).
ROWS_1TO4="$DD_ROWS $MONGO_ROWS $TREE_ROWS $FIO_ROWS"
# fioqd rows are fioqd.OP.qdDEPTH, for the depths the run used (meta.tsv):
# qd_rows_init adds them to ALL_ROWS with their labels.
QD_OPS="randread randwrite randrw"
declare -A QD_OP_LABEL=([randread]="random read" [randwrite]="random write" [randrw]="70/30 random read/write")
declare -A QD_OP_SHORT=([randread]="rr" [randwrite]="rw" [randrw]="mix")
QD_ROWS= QD_DEPTH_LIST=
qd_rows_init()
{
	local op d
	QD_DEPTH_LIST=$(meta qd_depths)
	QD_ROWS=
	for op in $QD_OPS; do
		for d in $QD_DEPTH_LIST; do
			QD_ROWS="$QD_ROWS fioqd.$op.qd$d"
			LABEL[fioqd.$op.qd$d]="fio $op iodepth $d"
			SHORT[fioqd.$op.qd$d]="${QD_OP_SHORT[$op]}@$d"
		done
	done
	QD_ROWS=${QD_ROWS# }
	case " $ALL_ROWS " in *" fioqd."*) ;; *) ALL_ROWS="$ALL_ROWS $QD_ROWS" ;; esac
}

declare -A AGG=() RAT=() RATI=()

# names_pairs: "NAMES:PLAIN" for every names system in $SYSTEMS against the
# same cipher without names: the same variant when it was run
# (aes-xts-names@new -> aes-xts@new), else the plain system (-> aes-xts).
names_pairs()
{
	local s base plain ref out=
	for s in $SYSTEMS; do
		base=$(sys_base "$s")
		case " $NAMES_SYSTEMS " in *" $base "*) ;; *) continue ;; esac
		plain=${base%-names}
		ref=$plain${s#"$base"}
		[[ " $SYSTEMS " == *" $ref "* ]] || ref=$plain
		out="$out $s:$ref"
	done
	echo "${out# }"
}

# variant_pairs: "VARIANT:REF" for every variant in $SYSTEMS, REF being the
# same spec without its +OPTS when that was run too (aes-xts@base+stats ->
# aes-xts@base), else the plain system (aes-xts@base -> aes-xts).
variant_pairs()
{
	local s ref out=
	for s in $SYSTEMS; do
		case $s in *+* | *@*) ;; *) continue ;; esac
		ref=${s%%+*}
		if [ "$ref" = "$s" ] || [[ " $SYSTEMS " != *" $ref "* ]]; then
			ref=$(sys_base "$s")
		fi
		out="$out $s:$ref"
	done
	echo "${out# }"
}

# fscrypt_pairs: every system run here against fscrypt, the kernel's own
# encryption (issue #35's reference), when it ran.
fscrypt_pairs()
{
	local s out=
	[[ " $SYSTEMS " == *" fscrypt "* ]] || return 0
	for s in $SYSTEMS; do
		[ "$s" = fscrypt ] || [ "$s" = raw ] || out="$out $s:fscrypt"
	done
	echo "${out# }"
}

# pair_table FS PAIRS: one column per NUM:DEN pair run here, one row per
# benchmark row that has a ratio; nothing when no pair was run.
pair_table()
{
	local fs=$1 p r line hdr= sep= any= pairs=
	for p in $2; do
		[ -n "$(awk -F'\t' -v f="$fs" -v n="${p%%:*}" -v d="${p#*:}" \
			'$1 == f && $3 == n && $4 == d' "$OUT/ratio.tsv")" ] || continue
		pairs="$pairs $p"
		hdr="$hdr ${p%%:*} / ${p#*:} |"
		sep="$sep---|"
	done
	[ -n "$pairs" ] || return 0
	echo "| |$hdr"
	echo "|---|$sep"
	for r in $ALL_ROWS; do
		line="| ${LABEL[$r]} |"
		any=
		for p in $pairs; do
			line="$line $(rcell "$fs" "$r" "${p%%:*}" "${p#*:}") |"
			[ -n "${RAT[$fs/$r/${p%%:*}/${p#*:}]:-}" ] && any=1
		done
		[ -n "$any" ] && echo "$line"
	done
	echo
}

# ---------------------------------------------------------------- aggregation
rep_aggregate()
{
	local out=$1
	# agg.tsv: fs sys row metric n median min max
	awk -F'\t' '
	function med(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		lo = a[1]; hi = a[n]; cnt = n
		return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{ k = $1 "\t" $2 "\t" $4 "\t" $5; v[k] = (k in v) ? v[k] " " $6 : $6; if (!(k in seen)) { seen[k] = 1; order[++no] = k } }
	END { for (i = 1; i <= no; i++) { k = order[i]; m = med(v[k]); printf "%s\t%d\t%.6g\t%.6g\t%.6g\n", k, cnt, m, lo, hi } }
	' "$out/raw.tsv" >"$out/agg.tsv"

	# ratio.tsv: fs row num den n median min max, each ratio formed within
	# one repetition (same run), then summarised across repetitions.
	local pairs="null:passthrough aes-xts:passthrough aes-cbc:passthrough aes-xts:null aes-cbc:null"
	local s
	for s in passthrough null aes-xts aes-cbc null-names aes-xts-names gocryptfs securefs encfs cryfs; do pairs="$pairs $s:raw"; done
	for s in gocryptfs securefs encfs cryfs; do pairs="$pairs aes-xts:$s aes-xts-names:$s aes-gcm:$s aes-gcm-names:$s"; done
	pairs="$pairs aes-gcm:raw aes-gcm-names:raw aes-gcm:aes-xts aes-gcm:null aes-gcm:passthrough"
	pairs="$pairs default:raw default:passthrough default:aes-xts default:aes-gcm-names"
	# Issue #29: integrity volumes against the default and the peers.
	pairs="$pairs integrity:default integrity:raw integrity:aes-xts"
	for s in gocryptfs securefs; do pairs="$pairs default:$s integrity:$s"; done
	pairs="$pairs $(names_pairs) $(variant_pairs) $(fscrypt_pairs) fscrypt:raw"
	# Issue #18: the stacks on the gluster translator against the same over
	# the GlusterFS FUSE mount, the peers there, and their own passthrough.
	for s in passthrough null aes-xts aes-cbc; do pairs="$pairs $s-gfapi:$s $s-gfapi:raw"; done
	for s in null aes-xts aes-cbc; do pairs="$pairs $s-gfapi:passthrough-gfapi"; done
	for s in gocryptfs securefs; do pairs="$pairs aes-xts-gfapi:$s"; done
	# Issue #19: aes-xts (and its variants) against every other system run.
	local n d
	for n in $SYSTEMS; do
		[ "$(sys_base "$n")" = aes-xts ] || continue
		for d in $SYSTEMS; do
			[ "$d" = "$n" ] || [[ " $pairs " == *" $n:$d "* ]] || pairs="$pairs $n:$d"
		done
	done
	# iopsratio.tsv: the same from the IOPS of the fioqd rows and the
	# operations/s of the scale rows (higher is better).
	awk -F'\t' -v pairs="$pairs" -v iofile="$out/iopsratio.tsv" '
	function med(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		lo = a[1]; hi = a[n]; cnt = n
		return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	# emit(c, file): NUM/DEN of the figures c[fs rep row sys], per run, then
	# the median over the runs, one line per fs, row and pair.
	function emit(c, file,   i, j, f, q, a, b, k, r, seen, order, no, m) {
		no = 0
		for (i = 1; i <= nr; i++) {
			split(rk[i], f, "\t")
			for (j = 1; j <= np; j++) {
				split(p[j], q, ":")
				a = rk[i] "\t" q[1]; b = rk[i] "\t" q[2]
				if ((a in c) && (b in c) && c[b] > 0) {
					k = f[1] "\t" f[3] "\t" q[1] "\t" q[2]
					r[k] = (k in r) ? r[k] " " c[a] / c[b] : c[a] / c[b]
					if (!(k in seen)) { seen[k] = 1; order[++no] = k }
				}
			}
		}
		printf "" >file
		for (i = 1; i <= no; i++) { k = order[i]; m = med(r[k]); printf "%s\t%d\t%.4f\t%.4f\t%.4f\n", k, cnt, m, lo, hi >file }
	}
	($4 ~ /^fio(qd)?\./ && $5 == "us_op") || ($4 !~ /^(fio(qd)?|scale)\./ && $5 == "sec") {
		c[$1 "\t" $3 "\t" $4 "\t" $2] = $6
		k = $1 "\t" $3 "\t" $4; if (!(k in runs)) { runs[k] = 1; rk[++nr] = k }
	}
	($4 ~ /^fioqd\./ && $5 == "iops") || ($4 ~ /^scale\./ && $5 == "ops") {
		ci[$1 "\t" $3 "\t" $4 "\t" $2] = $6
		k = $1 "\t" $3 "\t" $4; if (!(k in runs)) { runs[k] = 1; rk[++nr] = k }
	}
	END {
		np = split(pairs, p, " ")
		emit(c, "/dev/stdout")
		emit(ci, iofile)
	}' "$out/raw.tsv" >"$out/ratio.tsv"

	local fs sys row metric n m lo hi num den
	AGG=() RAT=() RATI=()
	while IFS=$'\t' read -r fs sys row metric n m lo hi; do
		AGG[$fs/$sys/$row/$metric]="$n $m $lo $hi"
	done <"$out/agg.tsv"
	while IFS=$'\t' read -r fs row num den n m lo hi; do
		RAT[$fs/$row/$num/$den]="$n $m $lo $hi"
	done <"$out/ratio.tsv"
	while IFS=$'\t' read -r fs row num den n m lo hi; do
		RATI[$fs/$row/$num/$den]="$n $m $lo $hi"
	done <"$out/iopsratio.tsv"
}

# ---------------------------------------------------------------- formatting
# fmt_num X: 3 significant digits, no exponent, thousands as "k" above 10^4.
fmt_num()
{
	awk -v x="$1" 'BEGIN {
		a = (x < 0) ? -x : x
		if (a >= 10000) printf "%.1fk", x / 1000
		else if (a >= 100) printf "%.0f", x
		else if (a >= 10) printf "%.1f", x
		else if (a >= 1) printf "%.2f", x
		else printf "%.3f", x }'
}

# cell FS SYS ROW METRIC: "median" or "median (min–max)" or "–".
cell()
{
	local v=${AGG[$1/$2/$3/$4]:-}
	[ -n "$v" ] || { printf '–'; return; }
	set -- $v
	if [ "$1" -gt 1 ]; then
		printf '%s (%s–%s)' "$(fmt_num "$2")" "$(fmt_num "$3")" "$(fmt_num "$4")"
	else
		fmt_num "$2"
	fi
}

rcell()
{
	local v=${RAT[$1/$2/$3/$4]:-}
	[ -n "$v" ] || { printf '–'; return; }
	set -- $v
	if [ "$1" -gt 1 ]; then
		printf '%.2f (%.2f–%.2f)' "$2" "$3" "$4"
	else
		printf '%.2f' "$2"
	fi
}

# med FS SYS ROW METRIC -> the median or empty
med()
{
	local v=${AGG[$1/$2/$3/$4]:-}
	[ -n "$v" ] && set -- $v && printf '%s' "$2"
}

rmed()
{
	local v=${RAT[$1/$2/$3/$4]:-}
	[ -n "$v" ] && set -- $v && printf '%s' "$2"
}

# rimed FS ROW NUM DEN -> the median IOPS ratio (fioqd rows) or empty
rimed()
{
	local v=${RATI[$1/$2/$3/$4]:-}
	[ -n "$v" ] && set -- $v && printf '%s' "$2"
}

# has_rows FS ROWS...: true if any system has a "sec" figure for a row.
has_rows()
{
	has_metric "$1" sec "${@:2}"
}

# has_metric FS METRIC ROWS...: true if any system has METRIC for a row.
has_metric()
{
	local fs=$1 metric=$2 r s
	shift 2
	for r in "$@"; do
		for s in $SYSTEMS; do
			[ -n "${AGG[$fs/$s/$r/$metric]:-}" ] && return 0
		done
	done
	return 1
}

# table FS METRIC ROWS: rows x systems
table()
{
	local fs=$1 metric=$2 r s line
	shift 2
	line="| |"
	for s in $SYSTEMS; do line="$line $s |"; done
	echo "$line"
	line="|---|"
	for s in $SYSTEMS; do line="$line---|"; done
	echo "$line"
	for r in "$@"; do
		has_metric "$fs" "$metric" "$r" || continue
		line="| ${LABEL[$r]} |"
		for s in $SYSTEMS; do line="$line $(cell "$fs" "$s" "$r" "$metric") |"; done
		echo "$line"
	done
	echo
}

# ---------------------------------------------------------------- targets
# tgt ID FS STATUS TEXT DETAIL -> targets.tsv
tgt()
{
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$OUT/targets.tsv"
}

# check_ratio_all ID FS TEXT NUM DEN OP LIMIT ROWS...: every row's median
# time ratio NUM/DEN must satisfy OP LIMIT (le: <=, lt: <); OP ge: the
# median IOPS ratio (fioqd rows) must be >= LIMIT.
check_ratio_all()
{
	local id=$1 fs=$2 text=$3 num=$4 den=$5 op=$6 lim=$7 r v bad= good=0 tot=0 detail= worst= kind=time
	shift 7
	[ "$op" = ge ] && kind=IOPS
	for r in "$@"; do
		if [ "$op" = ge ]; then v=$(rimed "$fs" "$r" "$num" "$den"); else v=$(rmed "$fs" "$r" "$num" "$den"); fi
		[ -n "$v" ] || continue
		tot=$((tot + 1))
		if awk -v v="$v" -v l="$lim" -v op="$op" \
			'BEGIN{exit !((op == "le") ? v <= l : (op == "ge") ? v >= l : v < l)}'; then
			good=$((good + 1))
		else
			bad="$bad, ${SHORT[$r]:-$r} $(printf '%.2f' "$v")"
		fi
		detail="$detail, ${SHORT[$r]:-$r} $(printf '%.2f' "$v")"
	done
	if [ "$tot" = 0 ]; then
		tgt "$id" "$fs" "n/a" "$text" "not measured ($num or $den not run)"
	elif [ -z "$bad" ]; then
		tgt "$id" "$fs" met "$text" "$num/$den $kind ratio:${detail#,}"
	else
		tgt "$id" "$fs" missed "$text" "$good of $tot rows; missed:${bad#,} (limit $lim)"
	fi
}

# check_val_all ID FS TEXT SYS METRIC MODE LIMIT ROWS...: SYS's median of
# METRIC against a limit; MODE "ge_x REF" = >= LIMIT x REF's median,
# "le_x REF" = <= LIMIT x REF's, "ge_best" / "le_best" against the best peer.
check_val_all()
{
	local id=$1 fs=$2 text=$3 sys=$4 metric=$5 mode=$6 ref=$7 lim=$8 r v rv bad= good=0 tot=0 detail= p pv
	shift 8
	for r in "$@"; do
		v=$(med "$fs" "$sys" "$r" "$metric")
		[ -n "$v" ] || continue
		if [ "$ref" = bestpeer ]; then
			rv=
			for p in $PEER_SYSTEMS; do
				pv=$(med "$fs" "$p" "$r" "$metric")
				[ -n "$pv" ] || continue
				if [ -z "$rv" ] || awk -v a="$pv" -v b="$rv" -v m="$mode" \
					'BEGIN{exit !((m ~ /^ge/) ? a > b : a < b)}'; then
					rv=$pv
				fi
			done
		else
			rv=$(med "$fs" "$ref" "$r" "$metric")
		fi
		[ -n "$rv" ] || continue
		tot=$((tot + 1))
		if awk -v v="$v" -v rv="$rv" -v l="$lim" -v m="$mode" \
			'BEGIN{exit !((m ~ /^ge/) ? v >= l * rv : v <= l * rv)}'; then
			good=$((good + 1))
		else
			bad="$bad, ${SHORT[$r]:-$r} $(fmt_num "$v") vs $(fmt_num "$rv")"
		fi
		detail="$detail, ${SHORT[$r]:-$r} $(fmt_num "$v") vs $(fmt_num "$rv")"
	done
	if [ "$tot" = 0 ]; then
		tgt "$id" "$fs" "n/a" "$text" "not measured ($sys or $ref not run)"
	elif [ -z "$bad" ]; then
		tgt "$id" "$fs" met "$text" "$metric $sys vs $ref:${detail#,}"
	else
		tgt "$id" "$fs" missed "$text" "$good of $tot rows; missed ($metric $sys vs $ref):${bad#,}"
	fi
}

check_targets()
{
	local fs
	: >"$OUT/targets.tsv"
	for fs in $FSLIST; do
		# Issue #6
		check_ratio_all 6.1 "$fs" "dd bs=4K write and read: aes-xts within 10 % of null (time)" \
			aes-xts null le 1.10 dd.w.4k dd.wf.4k dd.r.4k
		check_ratio_all 6.2 "$fs" "dd bs=4K write and read: null within 15 % of passthrough (time)" \
			null passthrough le 1.15 dd.w.4k dd.wf.4k dd.r.4k
		check_ratio_all 6.3 "$fs" "aes-xts faster than gocryptfs on every row of benchmarks 1-4" \
			aes-xts gocryptfs lt 1.0 $ROWS_1TO4
		check_ratio_all 6.4 "$fs" "passthrough within 2x of raw on every dd row (time)" \
			passthrough raw le 2.0 $DD_ROWS
		check_val_all 6.5 "$fs" "write amplification of aes-xts <= raw's + 5 % (dd, small-file create)" \
			aes-xts wa le_x raw 1.05 dd.w.4k dd.wf.4k dd.w.128k dd.wf.128k dd.w.1m dd.wf.1m mongo.create
		# Issue #8 (performance): the same checks, tighter
		check_val_all 8.1 "$fs" "dd bs=4K write: aes-xts >= 0.5x raw" aes-xts mbps ge_x raw 0.5 dd.w.4k dd.wf.4k
		check_val_all 8.2 "$fs" "dd bs=4K write: aes-xts >= 4x gocryptfs" aes-xts mbps ge_x gocryptfs 4 dd.w.4k dd.wf.4k
		check_val_all 8.3 "$fs" "dd bs=4K write: aes-xts >= 2x securefs" aes-xts mbps ge_x securefs 2 dd.w.4k dd.wf.4k
		check_val_all 8.4 "$fs" "dd bs=4K read: aes-xts >= 0.9x raw" aes-xts mbps ge_x raw 0.9 dd.r.4k
		check_val_all 8.5 "$fs" "dd bs=4K read: aes-xts >= the best peer" aes-xts mbps ge_best bestpeer 1 dd.r.4k
		check_val_all 8.6 "$fs" "dd bs=1M write and read: aes-xts >= 1.3x the best peer" aes-xts mbps ge_best bestpeer 1.3 \
			dd.w.1m dd.wf.1m dd.r.1m
		check_ratio_all 8.7 "$fs" "every dd row: aes-xts >= 0.9x null (time ratio <= 1/0.9)" \
			aes-xts null le 1.1111 $DD_ROWS
		check_ratio_all 8.8 "$fs" "every dd row: null >= 0.85x passthrough (time ratio <= 1/0.85)" \
			null passthrough le 1.1765 $DD_ROWS
		check_ratio_all 8.9 "$fs" "dd writes: aes-cbc >= 0.8x null (time ratio <= 1.25)" \
			aes-cbc null le 1.25 dd.w.4k dd.wf.4k dd.w.128k dd.wf.128k dd.w.1m dd.wf.1m
		check_val_all 8.10 "$fs" "small-file and tree phases: aes-xts faster than the best peer" \
			aes-xts sec le_best bestpeer 1 $MONGO_ROWS $TREE_ROWS
		check_ratio_all 8.11 "$fs" "create, stat, rename, delete: aes-xts within 4x raw" \
			aes-xts raw le 4 mongo.create mongo.stat mongo.rename mongo.delete
		check_val_all 8.12 "$fs" "fio: aes-xts IOPS >= the best peer on every row" \
			aes-xts iops ge_best bestpeer 1 $FIO_ROWS
		check_val_all 8.13 "$fs" "fio: aes-xts p99 latency no worse than the best peer's" \
			aes-xts p99_us le_best bestpeer 1 $FIO_ROWS
		check_cpu_per_gb 8.14 "$fs"
		# Issue #17: what authentication costs, by I/O depth (fioqd), and
		# aes-gcm against the peer with the same guarantees.
		check_ratio_all 17.1 "$fs" "fio iodepth table: aes-gcm IOPS >= 0.85x aes-xts at every depth and operation" \
			aes-gcm aes-xts ge 0.85 $QD_ROWS
		check_ratio_all 17.2 "$fs" "fio iodepth table: aes-gcm IOPS >= gocryptfs at every depth and operation" \
			aes-gcm gocryptfs ge 1.0 $QD_ROWS
		check_ratio_all 17.3 "$fs" "aes-gcm faster than gocryptfs on every row of the dd, small-file, tree and fio tables" \
			aes-gcm gocryptfs lt 1.0 $DD_ROWS $MONGO_ROWS $TREE_ROWS $FIO_ROWS
		# Issue #19: at every thread count of the scaling table, aes-xts
		# ahead of every peer (operations/s ratio >= 1, per peer).
		local p
		for p in $PEER_SYSTEMS; do
			check_ratio_all "19.$p" "$fs" "scaling table: aes-xts ahead of $p at every thread count and operation" \
				aes-xts "$p" ge 1.0 $SCALE_ROWS
		done
		# Issue #18: on GlusterFS, the gluster translator (one FUSE hop)
		# against the GlusterFS FUSE mount as backing (two hops).
		case $fs in gluster | gluster-dist | gluster-2c) ;; *) continue ;; esac
		# The scaling rows (operations/s, >= 1: the translator ahead), on
		# every GlusterFS layout, two clients included.
		check_ratio_all 18.1s "$fs" "scaling table: the translator's aes-xts ahead of aes-xts over the FUSE mount at every thread count" \
			aes-xts-gfapi aes-xts ge 1.0 $SCALE_ROWS
		check_ratio_all 18.3s "$fs" "scaling table: the translator's aes-xts ahead of gocryptfs over the FUSE mount at every thread count" \
			aes-xts-gfapi gocryptfs ge 1.0 $SCALE_ROWS
		check_ratio_all 18.4s "$fs" "scaling table: the translator's aes-xts ahead of securefs over the FUSE mount at every thread count" \
			aes-xts-gfapi securefs ge 1.0 $SCALE_ROWS
		[ "$fs" = gluster-2c ] && continue	# scale only (run.sh)
		check_ratio_all 18.1 "$fs" "gluster translator: aes-xts faster than aes-xts over the GlusterFS FUSE mount on every row" \
			aes-xts-gfapi aes-xts lt 1.0 $DD_ROWS $MONGO_ROWS $TREE_ROWS $FIO_ROWS
		check_ratio_all 18.2 "$fs" "gluster translator: small-file phases >= 1.3x aes-xts over the FUSE mount (time ratio <= 1/1.3)" \
			aes-xts-gfapi aes-xts le 0.7692 $MONGO_ROWS
		check_ratio_all 18.3 "$fs" "gluster translator: aes-xts faster than gocryptfs over the FUSE mount on every row" \
			aes-xts-gfapi gocryptfs lt 1.0 $DD_ROWS $MONGO_ROWS $TREE_ROWS $FIO_ROWS
		check_ratio_all 18.4 "$fs" "gluster translator: aes-xts faster than securefs over the FUSE mount on every row" \
			aes-xts-gfapi securefs lt 1.0 $DD_ROWS $MONGO_ROWS $TREE_ROWS $FIO_ROWS
		check_ratio_all 18.5 "$fs" "C/A on 4 KiB dd over the FUSE mount: aes-xts / passthrough <= 1.15 (time; 2012: 1.42 write, 2.36 read)" \
			aes-xts passthrough le 1.15 dd.w.4k dd.wf.4k dd.r.4k
		check_ratio_all 18.6 "$fs" "C/A on 4 KiB dd through the gluster translator: aes-xts / passthrough <= 1.15 (time)" \
			aes-xts-gfapi passthrough-gfapi le 1.15 dd.w.4k dd.wf.4k dd.r.4k
	done
}

# Daemon CPU seconds per GB written (dd bs=4K write+fdatasync): aes-xts
# <= 0.7x gocryptfs.
check_cpu_per_gb()
{
	local id=$1 fs=$2 a g text="daemon CPU s per GB written (dd bs=4K+fdatasync): aes-xts <= 0.7x gocryptfs"
	a=$(med "$fs" aes-xts dd.wf.4k cpu_s)
	g=$(med "$fs" gocryptfs dd.wf.4k cpu_s)
	if [ -z "$a" ] || [ -z "$g" ]; then
		tgt "$id" "$fs" n/a "$text" "not measured (aes-xts or gocryptfs not run)"
		return
	fi
	local gb
	gb=$(awk -v b="$DD_BYTES" 'BEGIN{print int(b / 4096) * 4096 / 1e9}')
	local d
	d=$(awk -v a="$a" -v g="$g" -v gb="$gb" 'BEGIN{printf "aes-xts %.2f s/GB vs gocryptfs %.2f s/GB (%.2fx)", a/gb, g/gb, (g > 0) ? a/g : 0}')
	if awk -v a="$a" -v g="$g" 'BEGIN{exit !(a <= 0.7 * g)}'; then
		tgt "$id" "$fs" met "$text" "$d"
	else
		tgt "$id" "$fs" missed "$text" "$d"
	fi
}

# ---------------------------------------------------------------- meta
bl_meta_collect()
{
	local m=$OUT/meta.tsv s
	{
		printf 'date_utc\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		printf 'command\t%s\n' "bench/run.sh $ARGS"
		printf 'mode\t%s\n' "$MODE"
		printf 'systems\t%s\n' "$SYSTEMS"
		printf 'fs\t%s\n' "$FSLIST"
		printf 'reps\t%s\n' "$REPS"
		printf 'benches\t%s\n' "$BENCHES"
		printf 'dd_bytes\t%s\n' "$DD_BYTES"
		printf 'mongo_files\t%s\n' "$MONGO_N"
		printf 'mongo_bytes\t%s\n' "${MONGO_BYTES:-}"
		printf 'bigdir_files\t%s\n' "${BIGDIR_N:-}"
		printf 'tree_files\t%s\n' "${TREE_FILES:-}"
		printf 'tree_src\t%s\n' "$TREE_SRC"
		printf 'fio_size_mib\t%s\n' "$FIO_SIZE"
		printf 'fio_runtime_s\t%s\n' "$FIO_RUNTIME"
		printf 'qd_depths\t%s\n' "$QD_DEPTHS"
		printf 'qd_engine\t%s\n' "$QD_ENGINE"
		printf 'scale_threads\t%s\n' "$SCALE_THREADS"
		printf 'scale_files\t%s\n' "$SCALE_FILES"
		printf 'scale_fio_mib\t%s\n' "$SCALE_FIO_MIB"
		for s in $FSLIST; do
			printf 'fs_desc_%s\t%s\n' "$s" "$(fs_desc "$s")"
		done
		printf 'cpu\t%s\n' "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
		printf 'cores\t%s\n' "$(nproc)"
		printf 'memory\t%s\n' "$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
		printf 'kernel\t%s\n' "$(uname -r)"
		printf 'os\t%s\n' "$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
		printf 'scratch\t%s\n' "$(findmnt -n -o FSTYPE,SOURCE -T "$SCRATCH" | tr -s ' ')"
		if [ "$IS_ROOT" = 1 ]; then
			printf 'backing\t%s\n' "loop devices on $IMG_SIZE sparse image files in the scratch dir; mkfs before every run (ext4: lazy init off)"
		else
			printf 'backing\t%s\n' "a temp dir (not root): no loop images"
		fi
		printf 'fuse\t%s\n' "$(fusermount3 -V 2>/dev/null)"
		printf 'git\t%s\n' "$(git -C "$REPO" describe --always --dirty 2>/dev/null)"
		printf 'sc_bin\t%s\n' "$SC_BIN"
		printf 'sc_mount_opts\t%s\n' "${SC_MOUNT_OPTS:-}"
		for s in "${!SC_BIN_OF[@]}"; do
			printf 'sc_bin@%s\t%s\n' "$s" "${SC_BIN_OF[$s]}"
		done
		for s in $SYSTEMS; do
			printf 'version_%s\t%s\n' "$s" "$(sys_version "$s")"
		done
	} >"$m"
}

# What a --fs kind is, for results.md (kept in meta.tsv, so report.sh
# redraws it from a results dir alone).
fs_desc()
{
	case $1 in
	ext4 | xfs) echo "$1 on a loop device, made fresh for every system and repetition" ;;
	tmpdir) echo "a temp dir (not root)" ;;
	gluster) echo "a GlusterFS volume of one brick (XFS loop image, loopback), FUSE-mounted, fresh for every system and repetition; raw = the GlusterFS mount" ;;
	gluster-dist) echo "a GlusterFS volume of two bricks, distribute (XFS loop images, loopback), FUSE-mounted, fresh for every system and repetition; raw = the GlusterFS mount" ;;
	gluster-2c) echo "two clients of one GlusterFS volume of one brick (XFS loop image, loopback), fresh for every system and repetition: two GlusterFS FUSE mounts (two glusterfs client processes), every system run twice at once, one instance per client on a subdirectory of its own (backing/c1 through client 1, backing/c2 through client 2; a -gfapi system: two daemons, each its own libgfapi client on gluster://HOST/VOL/backing/cN; raw: the two directories). Only the thread-scaling table: T threads in each client at once (2T in all), figures the aggregate of both clients" ;;
	*) echo "$1" ;;
	esac
}

# The number of clients working at once on a --fs kind.
fs_clients()
{
	case $1 in gluster-2c) echo 2 ;; *) echo 1 ;; esac
}

meta()
{
	awk -F'\t' -v k="$1" '$1 == k { sub(/^[^\t]*\t/, ""); print; exit }' "$OUT/meta.tsv"
}

# ---------------------------------------------------------------- charts
# chart FS NAME TITLE YLABEL METRIC LOG ROWS...
chart()
{
	local fs=$1 name=$2 title=$3 ylabel=$4 metric=$5 logy=$6 r s line v any=
	shift 6
	command -v gnuplot >/dev/null || return 0
	local dat=$OUT/chart-$name-$fs.dat
	line="row"
	for s in $SYSTEMS; do line="$line $s"; done
	echo "$line" >"$dat"
	for r in "$@"; do
		has_rows "$fs" "$r" || continue
		line="${SHORT[$r]:-$r}"
		for s in $SYSTEMS; do
			v=$(med "$fs" "$s" "$r" "$metric")
			line="$line ${v:-?}"
			[ -n "$v" ] && any=1
		done
		echo "$line" >>"$dat"
	done
	[ -n "$any" ] || { rm -f "$dat"; return 0; }
	local ncol=$(($(wc -w <<<"$SYSTEMS") + 1))
	gnuplot <<EOF 2>>"$OUT/run.log"
set terminal pngcairo size 1100,480 font ",10"
set output "$OUT/$name-$fs.png"
set title "$title ($fs, $(meta mode) run, medians)"
set ylabel "$ylabel"
set datafile missing "?"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set yrange [0:*]
$( [ "$logy" = log ] && printf 'set logscale y\nset yrange [*:*]\n' )
plot for [i=2:$ncol] "$dat" using i:xtic(1) title columnheader(i)
EOF
	rm -f "$dat"
	CHARTS="$CHARTS $name-$fs.png"
}

# chart_lines FS NAME METRIC PREFIX XTAG "XLIST" XLABEL YLABEL TITLE LABELS
# OPS...: a PNG NAME-FS.png of one panel per OP (titled by the associative
# array named LABELS), METRIC of row PREFIX.OP.XTAG<x> against x (log2 x,
# log y), a line per system that has figures on FS.
chart_lines()
{
	local fs=$1 name=$2 metric=$3 prefix=$4 xtag=$5 xlist=$6 xlabel=$7 ylabel=$8 title=$9
	local -n lbl=${10}
	shift 10
	local s x op v line cols= plots= dat rows=
	command -v gnuplot >/dev/null || return 0
	for op in "$@"; do
		for x in $xlist; do rows="$rows $prefix.$op.$xtag$x"; done
	done
	has_metric "$fs" "$metric" $rows || return 0
	for s in $SYSTEMS; do
		has_metric_sys "$fs" "$s" "$metric" $rows && cols="$cols $s"
	done
	for op in "$@"; do
		dat=$OUT/chart-$name-$op-$fs.dat
		echo "x$cols" >"$dat"
		for x in $xlist; do
			line=$x
			for s in $cols; do
				v=$(med "$fs" "$s" "$prefix.$op.$xtag$x" "$metric")
				line="$line ${v:-?}"
			done
			echo "$line" >>"$dat"
		done
		plots="$plots
set title \"${lbl[$op]}\"
plot for [i=2:$(($(wc -w <<<"$cols") + 1))] \"$dat\" using 1:i with linespoints lw 2 pt 7 title columnheader(i)"
	done
	# The key below each panel takes a row per two systems: room for it
	# under the x label, so neither covers the other.
	local keyrows=$((($(wc -w <<<"$cols") + 1) / 2))
	gnuplot <<EOF 2>>"$OUT/run.log"
set terminal pngcairo size 1500,$((500 + 16 * keyrows)) font ",10"
set output "$OUT/$name-$fs.png"
set datafile missing "?"
set logscale x 2
set logscale y
set xrange [$(awk -v l="$xlist" 'BEGIN { n = split(l, d, " "); lo = hi = d[1]
	for (i = 2; i <= n; i++) { if (d[i] < lo) lo = d[i]; if (d[i] > hi) hi = d[i] }
	printf "%g:%g", lo / 1.2, hi * 1.2 }')]
set xtics ($(for x in $xlist; do printf '"%s" %s, ' "$x" "$x"; done | sed 's/, $//'))
set xlabel "$xlabel"
set ylabel "$ylabel"
set grid xtics ytics
set key below horizontal width 1
set bmargin $((4 + keyrows))
set multiplot layout 1,$# title "$title ($fs, $(meta mode) run, medians)"
$plots
unset multiplot
EOF
	rm -f "$OUT"/chart-"$name"-*-"$fs".dat
	[ -f "$OUT/$name-$fs.png" ] && CHARTS="$CHARTS $name-$fs.png"
}

# chart_qd FS: IOPS against the I/O depth, one panel per fioqd operation.
chart_qd()
{
	chart_lines "$1" fioqd iops fioqd qd "$QD_DEPTH_LIST" iodepth "IOPS (log)" \
		"fio 4 KiB, $(meta qd_engine), direct=1, 1 job: IOPS against iodepth" QD_OP_LABEL $QD_OPS
}

# ---------------------------------------------------------------- scale (#19)
SCALE_OPS="create stat randwrite"
declare -A SCALE_OP_LABEL=([create]="small-file create (4 KiB each)" [stat]="small-file lstat (cold)"
	[randwrite]="fio 4 KiB random write")
SCALE_ROWS= SCALE_T_LIST=
scale_rows_init()
{
	local op t
	SCALE_T_LIST=$(meta scale_threads)
	SCALE_ROWS=
	for op in $SCALE_OPS; do
		for t in $SCALE_T_LIST; do
			SCALE_ROWS="$SCALE_ROWS scale.$op.t$t"
			LABEL[scale.$op.t$t]="$op, $t threads"
			SHORT[scale.$op.t$t]="$op@$t"
		done
	done
	SCALE_ROWS=${SCALE_ROWS# }
}

# scale_peers: the peers run here (the target's "every peer").
scale_peers()
{
	local s out=
	for s in $SYSTEMS; do
		[[ " $PEER_SYSTEMS " == *" $s "* ]] && out="$out $s"
	done
	echo "${out# }"
}

# scale_section FS: one table per operation: rows thread count, columns
# system (operations/s, median), then aes-xts/X for every other system X
# but raw (ratio of operations/s formed within each repetition, then the
# median), then issue #19's target: aes-xts ahead of every peer.
scale_section()
{
	local fs=$1 op t s x line hdr sep others= peers v bad n nodio= nc th
	peers=$(scale_peers)
	nc=$(fs_clients "$fs")
	for s in $SYSTEMS; do
		[ "$s" = raw ] || [ "$s" = aes-xts ] || others="$others $s"
	done
	if [ "$nc" = 1 ]; then
		echo "### Thread scaling (issue #19): operations/s against application threads"
		th="threads"
	else
		echo "### Thread scaling (issue #19): operations/s of $nc clients together against application threads per client"
		echo
		echo "$nc clients at once, each its own volume and daemon: T = threads in each client (${nc}T in all), and the work below is each client's; operations/s = all clients' operations over the wall time from the first client's start to the last one's end (create, stat; the drivers start together on one FIFO), randwrite = the sum of the clients' fio IOPS; daemon CPU = all daemons'."
		th="threads per client"
	fi
	echo
	echo "create: $(meta scale_files) files of 4 KiB per cell, T threads each creating its share in a directory of its own (open O_CREAT|O_EXCL, one 4 KiB write, close; bench/scale.c); stat: lstat of the same files after a cache drop, same threads; randwrite: fio, 4 KiB, psync, numjobs=T threads, one $(meta scale_fio_mib) MiB file per job, $(meta fio_runtime_s) s after a 1 s ramp. Medians over $(meta reps) repetition(s); ratio columns: aes-xts/X operations/s formed within each repetition, then the median (> 1: aes-xts ahead)."
	for s in $SYSTEMS; do
		[ "$(med "$fs" "$s" scale.info direct)" = 0 ] && nodio="$nodio $s"
	done
	[ -n "$nodio" ] && echo "randwrite buffered (O_DIRECT refused) on:$nodio; direct=1 on the others."
	echo
	for op in $SCALE_OPS; do
		has_metric "$fs" ops $(for t in $SCALE_T_LIST; do echo "scale.$op.t$t"; done) || continue
		echo "#### ${SCALE_OP_LABEL[$op]}"
		echo
		hdr="| $th |" sep="|---|"
		for s in $SYSTEMS; do hdr="$hdr $s |"; sep="$sep---|"; done
		for x in $others; do hdr="$hdr aes-xts/$x |"; sep="$sep---|"; done
		hdr="$hdr aes-xts ahead of every peer at every thread count |"; sep="$sep---|"
		echo "$hdr"
		echo "$sep"
		for t in $SCALE_T_LIST; do
			line="| $t |"
			for s in $SYSTEMS; do
				v=$(med "$fs" "$s" "scale.$op.t$t" ops)
				line="$line $([ -n "$v" ] && fmt_num "$v" || printf '–') |"
			done
			for x in $others; do
				v=$(rimed "$fs" "scale.$op.t$t" aes-xts "$x")
				line="$line $([ -n "$v" ] && printf '%.2f' "$v" || printf '–') |"
			done
			bad= n=0
			for x in $peers; do
				v=$(rimed "$fs" "scale.$op.t$t" aes-xts "$x")
				[ -n "$v" ] || continue
				n=$((n + 1))
				awk -v v="$v" 'BEGIN{exit !(v >= 1)}' || bad="$bad $x"
			done
			if [ "$n" = 0 ]; then
				line="$line – (no peer run) |"
			elif [ -z "$bad" ]; then
				line="$line met |"
			else
				line="$line **missed** (behind${bad}) |"
			fi
			echo "$line"
		done
		echo
	done
	# Daemon CPU per small-file operation: what each thread count costs the
	# daemon (its wake-ups included), however the cores were shared.
	if has_metric "$fs" cpu_s $(for t in $SCALE_T_LIST; do echo "scale.create.t$t scale.stat.t$t"; done); then
		echo "#### Daemon CPU per file (µs: utime+stime of all its threads / files$([ "$nc" = 1 ] || echo ", all $nc daemons / the files of all $nc clients"))"
		echo
		hdr="| $th |" sep="|---|"
		for op in create stat; do
			for s in $SYSTEMS; do
				[ "$s" = raw ] && continue
				hdr="$hdr $op $s |"; sep="$sep---|"
			done
		done
		echo "$hdr"
		echo "$sep"
		for t in $SCALE_T_LIST; do
			line="| $t |"
			for op in create stat; do
				for s in $SYSTEMS; do
					[ "$s" = raw ] && continue
					v=$(med "$fs" "$s" "scale.$op.t$t" cpu_s)
					line="$line $([ -n "$v" ] && fmt_num "$(awk -v c="$v" -v n="$(($(meta scale_files) * nc))" 'BEGIN{print c * 1e6 / n}')" || printf '–') |"
				done
			done
			echo "$line"
		done
		echo
	fi
}

# chart_scale FS: operations/s against application threads, one panel per
# operation of the scaling table.
chart_scale()
{
	local nc
	nc=$(fs_clients "$1")
	if [ "$nc" = 1 ]; then
		chart_lines "$1" scale ops scale t "$SCALE_T_LIST" "application threads" \
			"operations/s (log)" "Thread scaling" SCALE_OP_LABEL $SCALE_OPS
	else
		chart_lines "$1" scale ops scale t "$SCALE_T_LIST" "application threads per client" \
			"operations/s of $nc clients together (log)" "Thread scaling, $nc clients at once" \
			SCALE_OP_LABEL $SCALE_OPS
	fi
}

# has_metric_sys FS SYS METRIC ROWS...: true if SYS has METRIC for a row.
has_metric_sys()
{
	local fs=$1 s=$2 metric=$3 r
	shift 3
	for r in "$@"; do
		[ -n "${AGG[$fs/$s/$r/$metric]:-}" ] && return 0
	done
	return 1
}

# qd_cell FS SYS ROW: "IOPS (mean/p99)" of a fioqd cell, or "–".
qd_cell()
{
	local i m p
	i=$(med "$1" "$2" "$3" iops)
	[ -n "$i" ] || { printf '–'; return; }
	m=$(med "$1" "$2" "$3" mean_us) p=$(med "$1" "$2" "$3" p99_us)
	printf '%s (%s/%s)' "$(fmt_num "$i")" "$(fmt_num "$m")" "$(fmt_num "$p")"
}

# qd_rcell FS ROW NUM DEN LIMIT: the median IOPS ratio and whether it meets
# LIMIT, or "–".
qd_rcell()
{
	local v
	v=$(rimed "$1" "$2" "$3" "$4")
	[ -n "$v" ] || { printf '–'; return; }
	if awk -v v="$v" -v l="$5" 'BEGIN{exit !(v >= l)}'; then
		printf '%.2f met' "$v"
	else
		printf '%.2f **missed**' "$v"
	fi
}

# qd_section FS: issue #17's tables, one per operation: rows iodepth,
# columns system, then aes-gcm/aes-xts and aes-gcm/gocryptfs (IOPS ratios
# against their targets) when both sides ran; then the 70/30 split.
qd_section()
{
	local fs=$1 op d s line hdr sep nodio= rpairs= p a b l i
	echo "### fio iodepth table (issue #17): 4 KiB, $(meta qd_engine), direct=1, 1 job, $(meta fio_size_mib) MiB file"
	echo
	echo "Each cell: IOPS (mean / p99 latency in µs, submission to completion: fio's lat, not clat), medians over $(meta reps) repetition(s); $(meta fio_runtime_s) s per cell after a 1 s ramp. Ratio columns: IOPS ratio formed within each repetition, then the median; the target beside it (issue #17)."
	for s in $SYSTEMS; do
		[ "$(med "$fs" "$s" fioqd.info direct)" = 0 ] && nodio="$nodio $s"
	done
	[ -n "$nodio" ] && echo "Not measured, O_DIRECT refused (with buffered I/O an asynchronous engine is synchronous):$nodio."
	echo
	for p in aes-gcm:aes-xts:0.85 aes-gcm:gocryptfs:1; do
		[[ " $SYSTEMS " == *" ${p%%:*} "* ]] && [[ " $SYSTEMS " == *" $(cut -d: -f2 <<<"$p") "* ]] &&
			rpairs="$rpairs $p"
	done
	for op in $QD_OPS; do
		has_metric "$fs" iops $(for d in $QD_DEPTH_LIST; do echo "fioqd.$op.qd$d"; done) || continue
		echo "#### ${QD_OP_LABEL[$op]} ($op)"
		echo
		hdr="| iodepth |" sep="|---|"
		for s in $SYSTEMS; do hdr="$hdr $s |"; sep="$sep---|"; done
		for p in $rpairs; do
			IFS=: read -r a b l <<<"$p"
			hdr="$hdr $a/$b (>= $l) |"; sep="$sep---|"
		done
		echo "$hdr"
		echo "$sep"
		for d in $QD_DEPTH_LIST; do
			line="| $d |"
			for s in $SYSTEMS; do line="$line $(qd_cell "$fs" "$s" "fioqd.$op.qd$d") |"; done
			for p in $rpairs; do
				IFS=: read -r a b l <<<"$p"
				line="$line $(qd_rcell "$fs" "fioqd.$op.qd$d" "$a" "$b" "$l") |"
			done
			echo "$line"
		done
		echo
		if [ "$op" = randrw ]; then
			echo "70/30 split, read/write IOPS:"
			echo
			hdr="| iodepth |" sep="|---|"
			for s in $SYSTEMS; do hdr="$hdr $s |"; sep="$sep---|"; done
			printf '%s\n%s\n' "$hdr" "$sep"
			for d in $QD_DEPTH_LIST; do
				line="| $d |"
				for s in $SYSTEMS; do
					i=$(med "$fs" "$s" "fioqd.$op.qd$d" riops)
					if [ -n "$i" ]; then
						line="$line $(fmt_num "$i")/$(fmt_num "$(med "$fs" "$s" "fioqd.$op.qd$d" wiops)") |"
					else
						line="$line – |"
					fi
				done
				echo "$line"
			done
			echo
		fi
	done
}

# Ratio chart: B/A, C/A (xts and cbc) per phase, 1.0 = no cost.
chart_ratios()
{
	local fs=$1 r line v any= pair
	command -v gnuplot >/dev/null || return 0
	local dat=$OUT/chart-ratios-$fs.dat
	echo "row B/A(null/passthrough) C/A(aes-xts/passthrough) C/A(aes-cbc/passthrough)" >"$dat"
	for r in $ALL_ROWS; do
		line="${SHORT[$r]}"
		local row_any=
		for pair in null/passthrough aes-xts/passthrough aes-cbc/passthrough; do
			v=$(rmed "$fs" "$r" "${pair%/*}" "${pair#*/}")
			line="$line ${v:-?}"
			[ -n "$v" ] && row_any=1
		done
		[ -n "$row_any" ] && echo "$line" >>"$dat" && any=1
	done
	[ -n "$any" ] || { rm -f "$dat"; return 0; }
	gnuplot <<EOF 2>>"$OUT/run.log"
set terminal pngcairo size 1100,420 font ",10"
set output "$OUT/ratios-$fs.png"
set title "Time ratios per phase ($fs, $(meta mode) run; 1.0 = the crypt layer costs nothing; 2012: dd write C/A 1.42, read 2.36)"
set ylabel "time ratio (lower is better)"
set datafile missing "?"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set key outside right top
set grid ytics
set yrange [0:*]
set xtics rotate by -45
plot for [i=2:4] "$dat" using i:xtic(1) title columnheader(i), 1 with lines lc rgb "black" dt 2 notitle
EOF
	rm -f "$dat"
	CHARTS="$CHARTS ratios-$fs.png"
}

# ---------------------------------------------------------------- results.md
write_md()
{
	local md=$OUT/results.md fs r s line
	{
		echo "# stackcrypt benchmark results ($(meta mode))"
		echo
		echo "Command: \`$(meta command)\` (SC_BIN=$(meta sc_bin)$([ -n "$(meta sc_mount_opts)" ] && echo ", SC_MOUNT_OPTS=$(meta sc_mount_opts)"), git $(meta git)), started $(meta date_utc)."
		echo
		echo "Machine: $(meta cpu), $(meta cores) cores, $(meta memory), kernel $(meta kernel), $(meta os)."
		echo "Backing: $(meta backing); the images live on $(meta scratch)."
		echo "Load average (1 min) when each run started: $(awk -F'\t' '$4 == "setup" && $5 == "load1" { if (n++ == 0 || $6 < lo) lo = $6; if ($6 > hi) hi = $6; s += $6 } END { if (n) printf "%.1f to %.1f, mean %.1f over %d runs", lo, hi, s / n, n; else printf "not recorded" }' "$OUT/raw.tsv") ($(meta cores) cores)."
		echo "Repetitions: $(meta reps), systems interleaved within each; figures are medians, (min–max) when more than one run."
		local sizes=
		case " $(meta benches) " in *" dd "*) sizes="$sizes dd: $(meta dd_bytes) bytes per run ($(($(meta dd_bytes) / 4096)) x 4K)." ;; esac
		case " $(meta benches) " in *" mongo "*) sizes="$sizes Small files: $(meta mongo_files) files, $(meta mongo_bytes) bytes (sizes 0-32 KiB, fixed seed)." ;; esac
		case " $(meta benches) " in *" bigdir "*) sizes="$sizes Big directory: $(meta bigdir_files) empty files in one directory." ;; esac
		case " $(meta benches) " in *" tree "*) sizes="$sizes Tree: $(meta tree_src), $(meta tree_files) files." ;; esac
		case " $(meta benches) " in *" fio "*) sizes="$sizes fio: $(meta fio_size_mib) MiB file, $(meta fio_runtime_s) s per run after a 1 s ramp." ;; esac
		case " $(meta benches) " in *" fioqd "*) sizes="$sizes fio iodepth table: $(meta qd_engine), direct=1, 1 job, iodepth $(meta qd_depths | tr ' ' ','), $(meta fio_size_mib) MiB file, $(meta fio_runtime_s) s per cell after a 1 s ramp." ;; esac
		echo "${sizes# }"
		echo
		echo "| system | what | version |"
		echo "|---|---|---|"
		for s in $SYSTEMS; do
			[ -n "${SYS_DESC[$s]:-}" ] || sys_variant "$s"
			echo "| $s | ${SYS_DESC[$s]:-} | $(meta "version_$s") |"
		done
		echo
		for fs in $FSLIST; do
			echo "## $fs"
			echo
			if [ -n "$(meta "fs_desc_$fs")" ]; then
				meta "fs_desc_$fs"
				echo
			fi
			if has_rows "$fs" $DD_ROWS; then
				echo "### dd throughput (MB/s)"
				echo
				table "$fs" mbps $DD_ROWS
				local rrows=
				for r in $ALL_ROWS; do
					line="| ${LABEL[$r]} | $(rcell "$fs" "$r" null passthrough) | $(rcell "$fs" "$r" aes-xts passthrough) | $(rcell "$fs" "$r" aes-cbc passthrough) | $(rcell "$fs" "$r" aes-xts null) | $(rcell "$fs" "$r" passthrough raw) | $(rcell "$fs" "$r" aes-xts raw) | $(rcell "$fs" "$r" aes-xts gocryptfs) |"
					[[ "${line#| ${LABEL[$r]} |}" =~ [0-9] ]] && rrows="$rrows$line"$'\n'
				done
				if [ -n "$rrows" ]; then
					echo "### Time ratios (same run, then median; the 2012 report: write B/A 1.26, C/A 1.42; read B/A 1.20, C/A 2.36)"
					echo
					echo "| | B/A null/passthrough | C/A aes-xts/passthrough | C/A aes-cbc/passthrough | aes-xts/null | passthrough/raw | aes-xts/raw | aes-xts/gocryptfs |"
					echo "|---|---|---|---|---|---|---|---|"
					printf '%s\n' "$rrows"
				fi
			fi
			if has_rows "$fs" $DD_ROWS && [ "$SYSTEMS" != raw ] && [[ " $SYSTEMS " == *" raw "* ]]; then
				echo "### Each system against raw (time ratio)"
				echo
				echo "| |$(for s in $SYSTEMS; do [ "$s" = raw ] || printf ' %s |' "$s"; done)"
				echo "|---|$(for s in $SYSTEMS; do [ "$s" = raw ] || printf -- '---|'; done)"
				for r in $ALL_ROWS; do
					line="| ${LABEL[$r]} |"
					for s in $SYSTEMS; do [ "$s" = raw ] || line="$line $(rcell "$fs" "$r" "$s" raw) |"; done
					[ -n "$(awk -F'\t' -v f="$fs" -v r="$r" '$1 == f && $2 == r && $4 == "raw"' "$OUT/ratio.tsv")" ] && echo "$line"
				done
				echo
			fi
			if has_rows "$fs" $MONGO_ROWS; then
				echo "### Small files, $(meta mongo_files) files: seconds"
				echo
				table "$fs" sec $MONGO_ROWS
				echo "files/s:"
				echo
				table "$fs" fps $MONGO_ROWS
			fi
			if has_rows "$fs" $BIGDIR_ROWS; then
				echo "### One directory of $(meta bigdir_files) entries: seconds"
				echo
				table "$fs" sec $BIGDIR_ROWS
				echo "entries/s:"
				echo
				table "$fs" fps $BIGDIR_ROWS
			fi
			local np
			np=$(pair_table "$fs" "$(variant_pairs)")
			if [ -n "$np" ]; then
				echo "### Variants against their base (time ratio, same run, then median; < 1: the variant is faster)"
				echo
				printf '%s\n\n' "$np"
			fi
			np=$(pair_table "$fs" "$(names_pairs)")
			if [ -n "$np" ]; then
				echo "### What encrypting names costs (time ratio, same run, then median)"
				echo
				printf '%s\n\n' "$np"
			fi
			np=$(pair_table "$fs" "$(fscrypt_pairs) fscrypt:raw")
			if [ -n "$np" ]; then
				echo "### Against the kernel's own encryption, fscrypt (time ratio, same run, then median; < 1: faster than fscrypt)"
				echo
				printf '%s\n\n' "$np"
			fi
			if has_rows "$fs" $TREE_ROWS; then
				echo "### $(meta tree_src) tree ($(meta tree_files) files): seconds"
				echo
				table "$fs" sec $TREE_ROWS
			fi
			if has_rows "$fs" $FIO_ROWS; then
				echo "### fio 4 KiB, psync, $(meta fio_size_mib) MiB shared file: IOPS"
				echo
				local dio=
				for s in $SYSTEMS; do
					[ "$(med "$fs" "$s" fio.info direct)" = 0 ] && dio="$dio $s"
				done
				if [ -n "$dio" ]; then
					echo "O_DIRECT everywhere except:$dio (no O_DIRECT, refused or only seeming, see bench/README.md: buffered I/O after a cache drop, so the page cache is measured too)."
				else
					echo "O_DIRECT (direct=1) on every system."
				fi
				echo
				table "$fs" iops $FIO_ROWS
				echo "p50 completion latency (µs; randrw: reads):"
				echo
				table "$fs" p50_us $FIO_ROWS
				echo "p99 completion latency (µs; randrw: the worse of reads and writes):"
				echo
				table "$fs" p99_us $FIO_ROWS
				line="| verify=xxhash ($FIO_VERIFY_SIZE MiB randwrite, read back) |"
				local hdr="| |" sep="|---|"
				for s in $SYSTEMS; do
					hdr="$hdr $s |"; sep="$sep---|"
					v=$(med "$fs" "$s" fio.verify ok)
					case $v in 1) line="$line passed |" ;; 0) line="$line FAILED |" ;; *) line="$line – |" ;; esac
				done
				printf '%s\n%s\n%s\n\n' "$hdr" "$sep" "$line"
			fi
			has_metric "$fs" iops $QD_ROWS && qd_section "$fs"
			has_metric "$fs" ops $SCALE_ROWS && scale_section "$fs"
			if has_metric "$fs" cpu_s $ALL_ROWS; then
				echo "### Costs: daemon CPU seconds (utime+stime, all threads) per phase"
				echo
				table "$fs" cpu_s $ALL_ROWS
			fi
			if has_metric "$fs" wa dd.w.4k dd.wf.4k dd.w.128k dd.wf.128k dd.w.1m dd.wf.1m mongo.create; then
				echo "### Costs: write amplification (bytes written to the loop device, incl. the following sync, per byte written)"
				echo
				table "$fs" wa dd.w.4k dd.wf.4k dd.w.128k dd.wf.128k dd.w.1m dd.wf.1m mongo.create
			fi
			local c
			for c in dd mongo bigdir tree fio fioqd scale ratios; do
				[ -f "$OUT/$c-$fs.png" ] && echo "![$c $fs]($c-$fs.png)"
			done
			echo
		done
		local fails
		fails=$(awk -F'\t' '$5 == "failed"' "$OUT/raw.tsv")
		if [ -n "$fails" ]; then
			echo "## Failures"
			echo
			awk -F'\t' '$5 == "failed" { printf "- %s/%s rep %s: %s failed\n", $1, $2, $3, $4 }' "$OUT/raw.tsv"
			echo
		fi
		echo "## Targets (checked by bench/run.sh from the medians above)"
		echo
		echo "| target | fs | status | figures |"
		echo "|---|---|---|---|"
		awk -F'\t' '{ printf "| %s %s | %s | **%s** | %s |\n", $1, $4, $2, $3, $5 }' "$OUT/targets.tsv"
	} >"$md"
}

# ---------------------------------------------------------------- results.json
write_json()
{
	awk -F'\t' -v meta="$OUT/meta.tsv" -v agg="$OUT/agg.tsv" -v rat="$OUT/ratio.tsv" -v irat="$OUT/iopsratio.tsv" -v tg="$OUT/targets.tsv" '
	function q(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/\t/, " ", s); return "\"" s "\"" }
	BEGIN {
		printf "{\n  \"meta\": {"; sep = ""
		while ((getline line < meta) > 0) { split(line, f, "\t"); v = substr(line, length(f[1]) + 2); printf "%s\n    %s: %s", sep, q(f[1]), q(v); sep = "," }
		printf "\n  },\n  \"figures\": ["; sep = ""
		while ((getline line < agg) > 0) { split(line, f, "\t")
			printf "%s\n    {\"fs\": %s, \"system\": %s, \"row\": %s, \"metric\": %s, \"n\": %d, \"median\": %s, \"min\": %s, \"max\": %s}", sep, q(f[1]), q(f[2]), q(f[3]), q(f[4]), f[5], f[6], f[7], f[8]; sep = "," }
		printf "\n  ],\n  \"ratios\": ["; sep = ""
		while ((getline line < rat) > 0) { split(line, f, "\t")
			printf "%s\n    {\"fs\": %s, \"row\": %s, \"num\": %s, \"den\": %s, \"n\": %d, \"median\": %s, \"min\": %s, \"max\": %s}", sep, q(f[1]), q(f[2]), q(f[3]), q(f[4]), f[5], f[6], f[7], f[8]; sep = "," }
		printf "\n  ],\n  \"iops_ratios\": ["; sep = ""
		while ((getline line < irat) > 0) { split(line, f, "\t")
			printf "%s\n    {\"fs\": %s, \"row\": %s, \"num\": %s, \"den\": %s, \"n\": %d, \"median\": %s, \"min\": %s, \"max\": %s}", sep, q(f[1]), q(f[2]), q(f[3]), q(f[4]), f[5], f[6], f[7], f[8]; sep = "," }
		printf "\n  ],\n  \"targets\": ["; sep = ""
		while ((getline line < tg) > 0) { split(line, f, "\t")
			printf "%s\n    {\"id\": %s, \"fs\": %s, \"status\": %s, \"target\": %s, \"detail\": %s}", sep, q(f[1]), q(f[2]), q(f[3]), q(f[4]), q(f[5]); sep = "," }
		printf "\n  ]\n}\n"
	}' >"$OUT/results.json"
}

# ---------------------------------------------------------------- entry
bl_report()
{
	local fs
	CHARTS=
	qd_rows_init
	scale_rows_init
	rep_aggregate "$OUT"
	check_targets
	for fs in $FSLIST; do
		chart "$fs" dd "dd throughput" "MB/s" mbps lin $DD_ROWS
		chart "$fs" mongo "small files ($(meta mongo_files))" "files/s (log)" fps log $MONGO_ROWS
		chart "$fs" bigdir "one directory of $(meta bigdir_files) entries" "entries/s (log)" fps log $BIGDIR_ROWS
		chart "$fs" tree "$(meta tree_src) tree" "seconds (log, lower is better)" sec log $TREE_ROWS
		chart "$fs" fio "fio 4 KiB psync" "IOPS (log)" iops log $FIO_ROWS
		chart_qd "$fs"
		chart_scale "$fs"
		chart_ratios "$fs"
	done
	write_md
	write_json
	bl_log ""
	bl_log "Targets (issues #6, #8, #17, #18 and #19):"
	awk -F'\t' '$3 != "n/a" { printf "  %-4s %-5s %-7s %s\n         %s\n", $1, $2, toupper($3), $4, $5 }
		$3 == "n/a" { na = na " " $1 "/" $2 }
		END { if (na != "") printf "  not checked (a system it needs was not run):%s\n", na }' "$OUT/targets.tsv" |
		while IFS= read -r l; do bl_log "$l"; done
	bl_log ""
	bl_log "results: $OUT/results.md, results.json, raw.tsv${CHARTS:+, charts:$CHARTS}"
}
