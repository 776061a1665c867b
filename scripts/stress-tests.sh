#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# stress-tests.sh - runs the reliability and load suites many times in a row
# on a loaded machine, to show that no verdict depends on timing or load.
#
#   bash scripts/stress-tests.sh [--runs=N] [--asan] [--suite=S]...
#
#   --runs=N   runs in a row (default 20)
#   --asan     the AddressSanitizer + UBSan build (build-asan, configured
#              and run as in scripts/test.sh: same options, same
#              ASAN_OPTIONS, --timeout-multiplier 4) instead of the -Werror
#              build (build-ci)
#   --suite=S  a suite to run (repeatable; default: reliability and load)
#
# The build directory is configured the way scripts/test.sh configures it
# if it does not exist yet, and reused (ninja brings it up to date) if it
# does.  Two CPU-bound processes (`yes >/dev/null`) run beside the tests
# for the whole time; they are stopped on every exit, Ctrl-C included.
# Each run is one `meson test` of the suites with as many processes as
# scripts/test.sh uses.  A failed run keeps its logs (meson's testlog.txt
# and testlog.json) in BUILD/stress-logs/run-K/; the per-test failure counts
# and a last line "N passed, M failed" (runs) are printed at the end.
#
# Exit status: 0 if every run passed, 1 if any failed, 2 on a bad option
# or a failed build.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=20 asan=0 suites=()
for arg in "$@"; do
	case $arg in
	--runs=*)
		runs=${arg#--runs=}
		[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "stress-tests: --runs wants a positive number, not '$runs'" >&2; exit 2; }
		;;
	--asan) asan=1 ;;
	--suite=?*) suites+=("${arg#--suite=}") ;;
	-h | --help) sed -n '4,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "stress-tests: unknown option '$arg' (see --help)" >&2; exit 2 ;;
	esac
done
((${#suites[@]})) || suites=(reliability load)

# The same builds and test options as scripts/test.sh.
test_opts=(--print-errorlogs --num-processes "$(nproc)")
if ((asan)); then
	build="build-asan"
	setup_opts=(-Dwerror=true -Dbuildtype=debugoptimized "-Db_sanitize=address,undefined"
		-Db_lundef=false)
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
	export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	test_opts+=(--timeout-multiplier 4)
else
	build="build-ci"
	setup_opts=(-Dwerror=true -Dbuildtype=debugoptimized)
fi
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "${setup_opts[@]}" >/dev/null || { echo "stress-tests: meson setup $build failed" >&2; exit 2; }
fi
ninja -C "$build" >/dev/null || { echo "stress-tests: ninja -C $build failed" >&2; exit 2; }
for s in "${suites[@]}"; do
	test_opts+=(--suite "$s")
done

logs=$build/stress-logs
rm -rf "$logs"
mkdir -p "$logs"

# The load: two busy processes, stopped by pid on any exit.
load_pids=()
stop_load() {
	local pid

	for pid in "${load_pids[@]}"; do
		kill "$pid" 2>/dev/null || :
	done
	load_pids=()
}
trap stop_load EXIT
trap 'echo "stress-tests: interrupted" >&2; exit 130' INT TERM HUP
for _ in 1 2; do
	yes >/dev/null &
	load_pids+=($!)
done

declare -A fails=()
passed=0 failed=0
echo "stress-tests: $runs runs of suites ${suites[*]} in $build, two 'yes' processes beside them"
for ((k = 1; k <= runs; k++)); do
	t0=$(date +%s)
	rc=0
	meson test -C "$build" "${test_opts[@]}" >"$logs/current.out" 2>&1 || rc=$?
	t1=$(date +%s)
	# Failed tests of this run: every result that is not a pass, an
	# expected failure or a skip, from meson's machine-readable log.
	bad=$(python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t["result"] not in ("OK", "EXPECTEDFAIL", "SKIP"):
        print(f'{t["name"].split(" / ")[-1]}:{t["result"]}')
PY
	) || bad="(testlog.json unreadable):ERROR"
	if ((rc == 0)) && [ -z "$bad" ]; then
		passed=$((passed + 1))
		echo "stress-tests: run $k/$runs passed ($((t1 - t0)) s)"
	else
		failed=$((failed + 1))
		[ -n "$bad" ] || bad="(meson exit $rc):ERROR"
		mkdir -p "$logs/run-$k"
		mv "$logs/current.out" "$logs/run-$k/meson.out"
		cp "$build/meson-logs/testlog.txt" "$build/meson-logs/testlog.json" "$logs/run-$k/" 2>/dev/null || :
		while read -r t; do
			fails[${t%:*}]=$((${fails[${t%:*}]:-0} + 1))
		done <<<"$bad"
		echo "stress-tests: run $k/$runs FAILED ($((t1 - t0)) s): ${bad//$'\n'/ } -- logs in $logs/run-$k/"
	fi
done
rm -f "$logs/current.out"
if ((failed)); then
	echo "stress-tests: failures per test:"
	for t in "${!fails[@]}"; do
		printf '  %-40s %d of %d runs\n' "$t" "${fails[$t]}" "$runs"
	done | sort
fi
echo "$passed passed, $failed failed"
((failed == 0))
