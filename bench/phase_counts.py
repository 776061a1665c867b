#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
phase_counts.py - what one benchmark phase costs in counts, not seconds.

Wall-clock ratios on a shared 2-core machine move with the load; these do
not.  For every stackcrypt mount given (each made with `-o stats=all`), the
mongo and tree phases of bench/lib/benchmarks.sh are run one mount at a
time, and for each phase this prints, per mount:

  * the io-stats counts at every layer boundary (`stackcrypt stats --json`,
    difference over the phase): the top boundary ("fuse>...") is the FUSE
    requests the daemon served, the bottom one (">posix") the calls that
    reached the backing filesystem layer;
  * the bytes and read requests the loop device below the backing
    filesystem served (/sys/block/loopN/stat), i.e. the directory and inode
    blocks a cold phase had to read;
  * with --strace, the daemon's system calls over the phase (`strace -f
    -y -p PID`, counted per name here): a call on a /dev/fuse descriptor
    is counted as fuse:NAME (fuse:read = requests fetched, fuse:writev =
    replies sent), every other one under its name (the backing syscalls,
    plus futex and the like);
  * with --callgrind, the instructions the daemon executed over the phase,
    for a daemon started under `valgrind --tool=callgrind` (its counters
    are zeroed before the phase and dumped after it, `callgrind_control`):
    total Ir, and the inclusive Ir of every function given with --fn.

Usage (root; the loop device is the one the backing directories live on):
  phase_counts.py --smallfiles BIN/sc-smallfiles --tar include.tar \\
      --loop loop0 --stackcrypt BIN/stackcrypt [--files 10000] [--strace] \\
      [--phases mongo.stat,...] [--callgrind [--fn F,...]] [--peers NAME,...] \\
      NAME=MOUNTPOINT...

--peers names the mounts that are not stackcrypt (securefs, gocryptfs...):
they have no io-stats, so only the strace, CPU and loop figures are printed
for them; their daemon is found the same way (an argv holding "mount" and
the mount point).

--phases measures only the phases named; the other phases of their
benchmarks still run (unmeasured), the other benchmarks do not.

Output: one line per (phase, mount, boundary, operation) with a count that
is not zero, then per phase the loop device read figures:
  PHASE MOUNT BOUNDARY OP COUNT
  PHASE MOUNT cpu ticks N   (the daemon's user+system time, 1/100 s: load-dependent)
  PHASE MOUNT loop read_ios N read_kib N
  PHASE MOUNT callgrind FUNCTION|total IR
"""
import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

SEED = "42"


def stats(sc, mnt):
    out = subprocess.run([sc, "stats", "--json", mnt], check=True, capture_output=True,
                         text=True).stdout
    res = {}
    for layer in json.loads(out)["layers"]:
        for op, v in layer["ops"].items():
            res[(layer["label"], op)] = v["count"]
    return res


def loop_stat(loop):
    with open(f"/sys/block/{loop}/stat") as f:
        v = f.read().split()
    return int(v[0]), int(v[2])	# read I/Os, sectors read


def cpu_ticks(pid):
    """The daemon's user + system CPU time so far, in clock ticks (all threads)."""
    with open(f"/proc/{pid}/stat") as f:
        v = f.read().rsplit(")", 1)[1].split()
    return int(v[11]) + int(v[12])


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def daemon_pid(mnt):
    mnt = os.path.abspath(mnt)
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if b"mount" in args and any(os.path.abspath(a.decode()) == mnt for a in args if a):
            return int(p)
    sys.exit(f"phase_counts: no daemon found for {mnt}")


def phases(a):
    sf, n = a.smallfiles, str(a.files)
    return [
        # name, drop caches first, argv (relative to the mount point)
        ("mongo.create", False, lambda m: [sf, "create", f"{m}/mongo/a", n, SEED]),
        ("mongo.copy", False,
         lambda m: ["cp", "-a", "--reflink=never", f"{m}/mongo/a", f"{m}/mongo/b"]),
        ("mongo.read", True, lambda m: [sf, "read", f"{m}/mongo/b", n, SEED]),
        ("mongo.stat", True, lambda m: [sf, "stat", f"{m}/mongo/a", n, SEED]),
        ("mongo.rename", False, lambda m: [sf, "rename", f"{m}/mongo/a", n, SEED]),
        ("mongo.delete", False, lambda m: [sf, "delete", f"{m}/mongo/a", n, SEED]),
        ("tree.untar", False, lambda m: ["tar", "-C", f"{m}/tree", "-xf", a.tar]),
        ("tree.lsR", False, lambda m: ["sh", "-c", f'ls -lR "{m}/tree" >/dev/null']),
        ("tree.read", True,
         lambda m: ["sh", "-c", f'find "{m}/tree" -type f -print0 | xargs -0 -r cat >/dev/null']),
        ("tree.rm", False, lambda m: ["rm", "-rf", f"{m}/tree"]),
    ]


def strace_start(pid, out):
    p = subprocess.Popen(["strace", "-f", "-qq", "-y", "-o", out, "-p", str(pid)],
                         stderr=subprocess.DEVNULL)
    time.sleep(1)	# attach to every thread before the phase starts (counts only)
    return p


# "PID name(FD</path>, ..." or "PID name(..." at the start of a call; the
# "<... name resumed>" half of a call split by another thread is not a call.
STRACE_CALL = re.compile(r"^\d+\s+(\w+)\((?:(\d+)<([^>]*)>)?")


def strace_stop(p, out):
    """The calls strace saw: {name or fuse:name: count}."""
    p.send_signal(signal.SIGINT)
    p.wait()
    res = {}
    with open(out, errors="replace") as f:
        for line in f:
            m = STRACE_CALL.match(line)
            if not m:
                continue
            name = m.group(1)
            if m.group(3) == "/dev/fuse":
                name = "fuse:" + name
            res[name] = res.get(name, 0) + 1
    os.unlink(out)
    return res


def callgrind_dump(pid, fns):
    """Dumps the daemon's counters since the last zeroing: {fn or 'total': Ir}."""
    subprocess.run(["callgrind_control", "-d", str(pid)], check=True,
                   stdout=subprocess.DEVNULL)
    # The daemon runs with --callgrind-out-file=/tmp/callgrind.out.%p: a dump
    # is that name plus ".N"; the newest one is this phase's.
    dumps = glob.glob(f"/tmp/callgrind.out.{pid}.*")
    if not dumps:
        sys.exit(f"phase_counts: no /tmp/callgrind.out.{pid}.N: start the daemon under "
                 "valgrind --tool=callgrind --callgrind-out-file=/tmp/callgrind.out.%p")
    path = max(dumps, key=os.path.getmtime)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                         check=True, capture_output=True, text=True).stdout
    os.unlink(path)
    res = {}
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?PROGRAM TOTALS", line)
        if m:
            res["total"] = int(m.group(1).replace(",", ""))
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?\S*:(\w+)(?:'\d+)?\s", line)
        if m and m.group(2) in fns and m.group(2) not in res:
            res[m.group(2)] = int(m.group(1).replace(",", ""))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smallfiles", required=True)
    ap.add_argument("--tar", required=True)
    ap.add_argument("--loop", required=True)
    ap.add_argument("--stackcrypt", required=True)
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--phases", default="")
    ap.add_argument("--strace", action="store_true")
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--fn", default="")
    ap.add_argument("--peers", default="")
    ap.add_argument("mounts", nargs="+")
    a = ap.parse_args()
    peers = set(filter(None, a.peers.split(",")))
    want = set(a.phases.split(",")) if a.phases else None
    mounts = [m.split("=", 1) for m in a.mounts]
    for m in mounts:
        if len(m) != 2 or not m[0] or not m[1]:
            sys.exit(f"phase_counts: '{'='.join(m)}' is not NAME=MOUNTPOINT")
    unknown = peers - {name for name, _ in mounts}
    if unknown:
        sys.exit(f"phase_counts: --peers names no mount: {','.join(sorted(unknown))}")
    # A peer has no io-stats: an empty count map in its place.
    def counts(name, mnt):
        return {} if name in peers else stats(a.stackcrypt, mnt)
    for name, mnt in mounts:
        os.makedirs(f"{mnt}/mongo/a", exist_ok=True)
        os.makedirs(f"{mnt}/tree", exist_ok=True)
    # Mount after mount, every phase in order: as bench/run.sh runs one
    # system at a time, so each phase finds the caches the previous left.
    for name, mnt in mounts:
        for ph, drop, argv in phases(a):
            subprocess.run(["sync"], check=True)
            if drop:
                drop_caches()
            if want is not None and ph not in want:
                # Unmeasured, but run if a later phase of its benchmark needs it.
                if ph.split(".")[0] in {w.split(".")[0] for w in want}:
                    subprocess.run(argv(mnt), check=True, stdout=subprocess.DEVNULL)
                continue
            s0, l0 = counts(name, mnt), loop_stat(a.loop)
            c0 = cpu_ticks(daemon_pid(mnt))
            st = strace_start(daemon_pid(mnt), f"/tmp/phase_counts.{os.getpid()}") \
                if a.strace else None
            if a.callgrind:
                subprocess.run(["callgrind_control", "-z", str(daemon_pid(mnt))], check=True,
                               stdout=subprocess.DEVNULL)
            subprocess.run(argv(mnt), check=True, stdout=subprocess.DEVNULL)
            sc = strace_stop(st, f"/tmp/phase_counts.{os.getpid()}") if st else {}
            cg = callgrind_dump(daemon_pid(mnt), set(filter(None, a.fn.split(",")))) \
                if a.callgrind else {}
            c1 = cpu_ticks(daemon_pid(mnt))
            l1, s1 = loop_stat(a.loop), counts(name, mnt)
            for k in sorted(s1):
                d = s1[k] - s0.get(k, 0)
                if d:
                    print(f"{ph} {name} {k[0]} {k[1]} {d}")
            for k in sorted(sc):
                print(f"{ph} {name} strace {k} {sc[k]}")
            for k in sorted(cg):
                print(f"{ph} {name} callgrind {k} {cg[k]}")
            print(f"{ph} {name} cpu ticks {c1 - c0}")
            print(f"{ph} {name} loop read_ios {l1[0] - l0[0]} read_kib {(l1[1] - l0[1]) // 2}")
            sys.stdout.flush()
        # As bench_mongo ends: the copy goes, so the tool can run again.
        subprocess.run(["rm", "-rf", f"{mnt}/mongo"], check=True)


if __name__ == "__main__":
    main()
