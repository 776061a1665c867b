#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/report.sh DIR: rebuild results.md, results.json, the charts and the
# target checks of a finished run from its raw.tsv and meta.tsv, without
# measuring anything again (e.g. after changing a target or a table).
set -u -o pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
. "$BENCH_DIR/lib/common.sh"
. "$BENCH_DIR/lib/systems.sh"
. "$BENCH_DIR/lib/report.sh"
[ $# = 1 ] && [ -f "$1/raw.tsv" ] && [ -f "$1/meta.tsv" ] ||
	{ echo "usage: bench/report.sh RESULTS_DIR (with raw.tsv and meta.tsv)" >&2; exit 2; }
OUT=$(cd "$1" && pwd)
exec 3>&2
PROGRESS_SHOWN=
SYSTEMS=$(meta systems) FSLIST=$(meta fs) MODE=$(meta mode) DD_BYTES=$(meta dd_bytes)
ARGS=$(meta command)
BIGDIR_N=$(meta bigdir_files)
# The binaries NAME@BIN variants ran (their SYS_DESC lines name them).
while IFS=$'\t' read -r k v; do
	SC_BIN_OF[${k#sc_bin@}]=$v
done < <(awk -F'\t' '$1 ~ /^sc_bin@/' "$OUT/meta.tsv")
FIO_VERIFY_SIZE=$([ "$MODE" = full ] && echo 64 || echo 32)
bl_report
