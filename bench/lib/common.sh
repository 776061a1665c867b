# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers of the benchmark runner (sourced by bench/run.sh): logging and
# the progress line, timing, cache drops, the cost counters (daemon CPU from
# /proc, bytes written to the loop device from /sys/block), the measurement
# record (one TSV line per figure) and the cleanup that must run on every exit
# path, Ctrl-C included, so no mount, loop device or scratch file outlives us.

# ---------------------------------------------------------------- logging
# Terminal progress goes to fd 3 (the real stderr); the log file gets all.
bl_log()
{
	printf '%s\n' "$*" >>"$OUT/run.log"
	[ -n "$PROGRESS_SHOWN" ] && printf '\r\033[K' >&3
	PROGRESS_SHOWN=
	printf '%s\n' "$*" >&3
}

bl_die()
{
	bl_log "bench: error: $*"
	exit 1
}

# Seconds, with microseconds, as a decimal string (bash 5 EPOCHREALTIME).
bl_now()
{
	printf '%s' "${EPOCHREALTIME/,/.}"
}

# Microseconds since the epoch as an integer (cheap: no fork).
bl_now_us()
{
	local t=${EPOCHREALTIME/[.,]/}
	printf '%s' "$t"
}

# bl_sub A B -> A-B, 6 decimals
bl_sub()
{
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a - b }'
}

# Whole seconds -> "1h02m" or "3m07s".
bl_fmt_time()
{
	local s=${1%.*}
	if ((s >= 3600)); then
		printf '%dh%02dm' $((s / 3600)) $((s % 3600 / 60))
	else
		printf '%dm%02ds' $((s / 60)) $((s % 60))
	fi
}

# One status line, rewritten in place on a terminal, appended otherwise.
bl_progress()
{
	local phase=$1 el left line
	el=$((($(bl_now_us) - T_START_US) / 1000000))
	left=$(bl_eta_left)
	printf -v line '[%(%H:%M:%S)T] run %d/%d: %-4s rep %d/%d %-11s %-6s %-13s elapsed %s, ~%s left' \
		-1 $((PLAN_POS + 1)) "${#PLAN[@]}" "$CUR_FS" "$CUR_REP" "$REPS" "$CUR_SYS" "$CUR_BENCH" "$phase" \
		"$(bl_fmt_time "$el")" "$(bl_fmt_time "$left")"
	printf '%s\n' "$line" >>"$OUT/run.log"
	if [ -t 3 ]; then
		printf '\r\033[K%s' "${line:0:$((${COLUMNS:-120} - 1))}" >&3
		PROGRESS_SHOWN=1
	else
		printf '%s\n' "$line" >&3
	fi
}

# ---------------------------------------------------------------- caches
bl_drop_caches()
{
	sync
	if [ "$IS_ROOT" = 1 ]; then
		echo 3 >/proc/sys/vm/drop_caches
	fi
}

# ---------------------------------------------------------------- costs
# PIDs of the FUSE daemon(s) serving mount point $1: every process whose
# argv holds the absolute mount point as one argument. gocryptfs and cryfs
# re-exec or fork, so a PID recorded at start-up would be the wrong one.
bl_daemon_pids()
{
	local mnt=$1 p arg
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		while IFS= read -r -d '' arg; do
			if [ "$arg" = "$mnt" ]; then
				printf '%s ' "${p#/proc/}"
				break
			fi
		done 2>/dev/null <"$p/cmdline"
	done 2>/dev/null
}

# CPU seconds (utime+stime, all threads: the thread-group line in
# /proc/PID/stat sums them) of the daemons in $DAEMON_PIDS.
bl_daemon_cpu()
{
	local pid ticks=0 stat rest
	for pid in $DAEMON_PIDS; do
		stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
		rest=${stat##*) }	# comm may hold spaces; fields after it
		# rest starts at field 3 (state); utime=14, stime=15
		set -- $rest
		ticks=$((ticks + ${12} + ${13}))
	done
	awk -v t="$ticks" -v hz="$CLK_TCK" 'BEGIN { printf "%.2f", t / hz }'
}

# Bytes written to the loop device under the scratch filesystem (0 without).
bl_dev_written()
{
	if [ -n "$LOOPDEV" ] && [ -r "/sys/block/${LOOPDEV#/dev/}/stat" ]; then
		awk '{ printf "%.0f", $7 * 512 }' "/sys/block/${LOOPDEV#/dev/}/stat"
	else
		echo 0
	fi
}

# ---------------------------------------------------------------- records
# bl_record ROW METRIC VALUE: one measured figure of the current
# (fs, system, rep) into raw.tsv, the single source of every table.
bl_record()
{
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$CUR_FS" "$CUR_SYS" "$CUR_REP" \
		"$1" "$2" "$3" >>"$OUT/raw.tsv"
}

# bl_timed ROW CMD...: run CMD with the daemon CPU counter around it; sets
# T_ELAPSED (s) and T_CPU (daemon CPU s) and records ROW sec and cpu_s.
bl_timed()
{
	local row=$1 t0 t1 c0 c1 rc=0
	shift
	bl_progress "$row"
	c0=$(bl_daemon_cpu)
	t0=$(bl_now)
	"$@" >>"$OUT/run.log" 2>&1 || rc=$?
	t1=$(bl_now)
	c1=$(bl_daemon_cpu)
	if [ "$rc" -ne 0 ]; then
		bl_log "bench: $CUR_FS/$CUR_SYS: '$*' failed (exit $rc), see $OUT/run.log"
		bl_record "$row" failed 1
		return "$rc"
	fi
	T_ELAPSED=$(bl_sub "$t1" "$t0")
	T_CPU=$(bl_sub "$c1" "$c0")
	bl_record "$row" sec "$T_ELAPSED"
	[ -n "$DAEMON_PIDS" ] && bl_record "$row" cpu_s "$T_CPU"
	return 0
}

# ---------------------------------------------------------------- cleanup
# Everything created is registered here the moment it exists; cleanup walks
# the lists in reverse and is safe to call twice (EXIT after INT).
FUSE_MOUNTS=()
FS_MOUNTS=()
LOOPS=()
SCRATCH=
# Benchmark processes run in the background (two clients at once,
# bench_scale): started with SIGINT ignored, as every background job of a
# script is, so Ctrl-C leaves them to the cleanup, which must end them
# before it can unmount what they work in.
BG_PIDS=()

# bl_alive PID: true while PID runs (a zombie, not yet reaped, does not).
bl_alive()
{
	[ -e "/proc/$1" ] && ! grep -q '^[^)]*) Z' "/proc/$1/stat" 2>/dev/null
}

bl_unmount_fuse()
{
	local mnt=$1 pids i
	mountpoint -q "$mnt" 2>/dev/null || return 0
	pids=$(bl_daemon_pids "$mnt")
	fusermount3 -u "$mnt" 2>/dev/null || fusermount -u "$mnt" 2>/dev/null ||
		umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	# Wait for the daemons to finish writing back (CryFS flushes here)
	# before the filesystem under them goes away.
	for ((i = 0; i < 300; i++)); do
		local alive=
		for p in $pids; do
			bl_alive "$p" && alive=1
		done
		[ -z "$alive" ] && break
		sleep 0.1
	done
}

bl_cleanup()
{
	local i
	trap '' INT TERM
	[ -n "$PROGRESS_SHOWN" ] && printf '\n' >&3 && PROGRESS_SHOWN=
	for i in "${BG_PIDS[@]}"; do
		kill "$i" 2>/dev/null
	done
	for i in "${BG_PIDS[@]}"; do
		wait "$i" 2>/dev/null
	done
	BG_PIDS=()
	for ((i = ${#FUSE_MOUNTS[@]} - 1; i >= 0; i--)); do
		bl_unmount_fuse "${FUSE_MOUNTS[i]}"
	done
	FUSE_MOUNTS=()
	# A GlusterFS volume of a run that was interrupted (run.sh's fs_fresh).
	if [ -n "${GLUSTER_WORK:-}" ]; then
		"$GLUSTER_SH" -w "$GLUSTER_WORK" down >/dev/null 2>&1 ||
			printf 'bench: scripts/gluster.sh -w %s down failed\n' "$GLUSTER_WORK" >&3
		GLUSTER_WORK=
	fi
	for ((i = ${#FS_MOUNTS[@]} - 1; i >= 0; i--)); do
		mountpoint -q "${FS_MOUNTS[i]}" 2>/dev/null &&
			{ umount "${FS_MOUNTS[i]}" 2>/dev/null || umount -l "${FS_MOUNTS[i]}"; }
	done
	FS_MOUNTS=()
	for ((i = ${#LOOPS[@]} - 1; i >= 0; i--)); do
		losetup -d "${LOOPS[i]}" 2>/dev/null
	done
	LOOPS=()
	if [ -n "$SCRATCH" ] && [ -d "$SCRATCH" ]; then
		# Never delete through a mount that failed to go away.
		if findmnt -rn -o TARGET | grep -q "^$SCRATCH"; then
			printf 'bench: still mounted under %s, not removing it\n' "$SCRATCH" >&3
		else
			rm -rf --one-file-system "$SCRATCH"
		fi
	fi
	SCRATCH=
}

bl_on_signal()
{
	printf '\nbench: interrupted (%s), cleaning up\n' "$1" >&3
	bl_cleanup
	trap - EXIT
	exit 130
}
