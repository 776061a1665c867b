#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
uring_trace.py - reads what uring_trace.sh recorded (DIR/TRANSPORT.PHASE.data
and .pstat, DIR/TRANSPORT.pid) and prints, per phase and transport, what
docs/performance.md 15.2 tabulates.  Only the events of the mount's own
FUSE connection (the one the daemon's PID replied on) and of the daemon's
threads are counted: other FUSE mounts on the machine are left out.

  uring_trace.py DIR
"""
import collections
import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"\s*(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)")
CONN = re.compile(r"connection (\d+)")
SEND = re.compile(r"req (\d+) opcode \d+ \((\w+)\)")
UNIQUE = re.compile(r"req (\d+)")
SWITCH = re.compile(r"prev_pid=(\d+) .*next_pid=(\d+)")
WAKEUP = re.compile(r"pid=(\d+) prio=\d+ target_cpu=(\d+)")


def events(path):
    out = subprocess.run(["perf", "script", "-i", path, "-F",
                          "comm,pid,tid,cpu,time,event,trace"],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            comm, pid, tid, cpu, t, ev, tr = m.groups()
            yield comm, pid, tid, int(cpu), float(t), ev, tr


def analyse(path, daemon):
    evs = list(events(path))
    conns = collections.Counter(CONN.search(tr).group(1) for _, pid, _, _, _, ev, tr in evs
                                if ev == "fuse:fuse_request_end" and pid == daemon)
    if not conns:
        return None
    conn = conns.most_common(1)[0][0]
    threads = {tid for _, pid, tid, _, _, _, _ in evs if pid == daemon}
    r = {"ops": collections.Counter(), "lat": collections.defaultdict(list),
         "served": collections.Counter(), "hops": 0, "sends": 0,
         "wake_same": 0, "wake_other": 0, "idle": collections.Counter(),
         "max_inflight": 0}
    sent = {}
    caller_cpu = {}
    inflight = collections.Counter()
    idle_since = {}
    first = last = None
    for comm, pid, tid, cpu, t, ev, tr in evs:
        first = t if first is None else first
        last = t
        if ev.startswith("fuse:"):
            if CONN.search(tr).group(1) != conn:
                continue
            if ev == "fuse:fuse_request_send":
                unique, op = SEND.search(tr).groups()
                r["ops"][op] += 1
                sent[unique] = (t, op, cpu)
                inflight[cpu] += 1
                r["max_inflight"] = max(r["max_inflight"], inflight[cpu])
                if pid != daemon:
                    r["sends"] += 1
                    if caller_cpu.get(tid, cpu) != cpu:
                        r["hops"] += 1
                    caller_cpu[tid] = cpu
            else:
                unique = UNIQUE.search(tr).group(1)
                if pid == daemon:
                    r["served"][(tid, cpu)] += 1
                if unique in sent:
                    t0, op, c = sent.pop(unique)
                    r["lat"][op].append(t - t0)
                    inflight[c] -= 1
        elif ev == "sched:sched_switch":
            prev, nxt = SWITCH.search(tr).groups()
            if nxt == "0":
                idle_since[cpu] = t
            elif prev == "0" and cpu in idle_since:
                r["idle"][cpu] += t - idle_since.pop(cpu)
        elif ev == "sched:sched_wakeup":
            woken, target = WAKEUP.search(tr).groups()
            if woken in threads:
                if int(target) == cpu:
                    r["wake_same"] += 1
                else:
                    r["wake_other"] += 1
    for cpu, t0 in idle_since.items():
        r["idle"][cpu] += last - t0
    r["window"] = (last - first) if first is not None else 0.0
    return r


def pstat(path):
    res = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*([\d,.]+)\s+(?:msec\s+)?(task-clock|context-switches|cpu-migrations)",
                         line)
            if m:
                res[m.group(2)] = float(m.group(1).replace(",", ""))
    return res


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: uring_trace.py DIR")
    d = sys.argv[1]
    for phase in ("untar", "lsR", "read", "rm"):
        for transport in ("devfuse", "io_uring"):
            base = os.path.join(d, f"{transport}.{phase}")
            if not os.path.exists(base + ".data"):
                continue
            with open(os.path.join(d, f"{transport}.pid")) as f:
                daemon = f.read().strip()
            r = analyse(base + ".data", daemon)
            if r is None:
                print(f"{phase} {transport}: no request of the daemon {daemon} in the trace")
                continue
            ps = pstat(base + ".pstat")
            print(f"== {phase} over {transport}")
            print(f"  daemon: CPU {ps.get('task-clock', 0):.0f} ms, "
                  f"{ps.get('context-switches', 0):.0f} context switches, "
                  f"{ps.get('cpu-migrations', 0):.0f} migrations")
            print(f"  requests {sum(r['ops'].values())}: " +
                  ", ".join(f"{op} {n}" for op, n in r["ops"].most_common()))
            for op, v in sorted(r["lat"].items(), key=lambda x: -len(x[1]))[:6]:
                print(f"  latency {op}: median {statistics.median(v) * 1e6:.0f} us "
                      f"({len(v)} requests)")
            served = sorted(r["served"].values(), reverse=True)
            cpus = collections.Counter()
            for (_, cpu), n in r["served"].items():
                cpus[cpu] += n
            print(f"  replies by {len({t for t, _ in r['served']})} daemon threads "
                  f"(largest shares {served[:6]}), per CPU {dict(sorted(cpus.items()))}")
            print(f"  caller's CPU changed between two of its requests: {r['hops']} of "
                  f"{r['sends']}; most requests of one CPU unanswered at once: "
                  f"{r['max_inflight']}")
            print(f"  daemon wake-ups on the waker's CPU {r['wake_same']}, on another "
                  f"{r['wake_other']}; idle seconds per CPU "
                  f"{ {c: round(v, 2) for c, v in sorted(r['idle'].items())} } "
                  f"of {r['window']:.2f}")


if __name__ == "__main__":
    main()
