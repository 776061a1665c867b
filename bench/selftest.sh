#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/selftest.sh: checks the benchmark runner itself in about a minute,
# with tiny sizes so the machine stays usable: every benchmark runs on every
# requested system, every figure lands in raw.tsv, results.json parses, the
# targets of issue #6 are all checked, a NAME@BIN variant runs the binary
# --bin names and a names system runs init --encrypt-names, bad --bin and
# names requests are refused in one line, and nothing the runner made
# survives it, neither a normal exit nor a SIGINT in the middle of a FUSE
# mount.
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
