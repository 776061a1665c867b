#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ceph_iodepth.py - the tables and the chart of a bench/ceph_iodepth.sh run.

    python3 bench/ceph_iodepth.py OUTDIR [CHART.png]

Reads OUTDIR/raw.tsv, OUTDIR/wa.tsv and OUTDIR/osdops.tsv (those present); writes OUTDIR/tables.md (the full
iodepth tables, the cephx cost, the ratios to the ceph-fuse mount, the write
amplification) and, when gnuplot is installed, the chart of IOPS against
iodepth (OUTDIR/iodepth.png unless CHART is given).  Figures are medians over
the repetitions; a ratio between systems is formed within one repetition
(the systems ran interleaved) and then its median is taken.  The cephx cost
compares two cluster sessions, one after the other: not interleaved.
"""
import os
import statistics
import subprocess
import sys
from collections import defaultdict

OUT = sys.argv[1]
CHART = sys.argv[2] if len(sys.argv) > 2 else os.path.join(OUT, "iodepth.png")
ORDER = ["cephfuse", "passthrough", "xts", "default", "xts-url", "default-url", "gocryptfs"]
LABEL = {"cephfuse": "ceph-fuse", "passthrough": "passthrough", "xts": "aes-xts",
         "default": "default", "xts-url": "aes-xts cephfs://",
         "default-url": "default cephfs://", "gocryptfs": "gocryptfs"}
RWS = ["randread", "randwrite", "randrw"]
RWL = {"randread": "read", "randwrite": "write", "randrw": "70/30"}

# raw[(cx, sys, rw, d)][rep] = (iops, mean, p99)
raw = defaultdict(dict)
direct = {}
raw_path = os.path.join(OUT, "raw.tsv")
with open(raw_path if os.path.exists(raw_path) else os.devnull) as f:
    for line in f:
        cx, rep, sy, rw, d, iops, mean, p99, _r, _w, dr = line.split("\t")
        raw[(cx, sy, rw, int(d))][rep] = (float(iops), float(mean), float(p99))
        direct[sy] = dr.strip()
cxs = [c for c in ("off", "on") if any(k[0] == c for k in raw)]
systems = [s for s in ORDER if any(k[1] == s for k in raw)]
depths = sorted({k[3] for k in raw})


def med(cx, sy, rw, d, i):
    v = [t[i] for t in raw[(cx, sy, rw, d)].values()]
    return statistics.median(v) if v else None


def ratio(cx, sy, base, rw, d):
    """Median over the repetitions of IOPS(sy) / IOPS(base) in each."""
    a, b = raw[(cx, sy, rw, d)], raw[(cx, base, rw, d)]
    v = [a[r][0] / b[r][0] for r in a if r in b and b[r][0] > 0]
    return statistics.median(v) if v else None


def pct(x):
    return "–" if x is None else "%+.0f %%" % (100 * (x - 1))


def kilo(x):
    if x is None:
        return "–"
    return "%.1fk" % (x / 1000) if x >= 1000 else "%.0f" % x


out = []
if raw:
    out.append("## Full tables (IOPS / mean µs / p99 µs, medians of %d repetitions)\n"
               % max(len(v) for v in raw.values()))
    for cx in cxs:
        for rw in RWS:
            out.append("**cephx %s, 4 KiB %s**\n" % (cx, RWL[rw]))
            out.append("| iodepth | " + " | ".join(LABEL[s] for s in systems) + " |")
            out.append("|---" * (len(systems) + 1) + "|")
            for d in depths:
                cells = []
                for s in systems:
                    i, m, p = (med(cx, s, rw, d, j) for j in range(3))
                    cells.append("–" if i is None else "%s / %.0f / %.0f" % (kilo(i), m, p))
                out.append("| %d | %s |" % (d, " | ".join(cells)))
            out.append("")

    out.append("## The cephx cost: IOPS with cephx on / off − 1 (medians; two cluster sessions)\n")
    out.append("| system | " + " | ".join("%s@%d" % (RWL[rw], d) for rw in RWS for d in depths) + " |")
    out.append("|---" * (1 + len(RWS) * len(depths)) + "|")
    if len(cxs) == 2:
        for s in systems:
            cells = []
            for rw in RWS:
                for d in depths:
                    a, b = med("on", s, rw, d, 0), med("off", s, rw, d, 0)
                    cells.append(pct(a / b) if a and b else "–")
            out.append("| %s | %s |" % (LABEL[s], " | ".join(cells)))
    out.append("")

    for cx in cxs:
        out.append("## IOPS against the ceph-fuse mount, cephx %s (within-repetition ratios, medians)\n" % cx)
        out.append("| system | " + " | ".join("%s@%d" % (RWL[rw], d) for rw in RWS for d in depths) + " |")
        out.append("|---" * (1 + len(RWS) * len(depths)) + "|")
        for s in systems:
            if s == "cephfuse":
                continue
            cells = ["%.2f" % r if r else "–" for r in
                     (ratio(cx, s, "cephfuse", rw, d) for rw in RWS for d in depths)]
            out.append("| %s | %s |" % (LABEL[s], " | ".join(cells)))
        out.append("")
    nodirect = [LABEL[s] for s in systems if direct.get(s) != "1"]
    out.append("O_DIRECT: %s.\n" % ("every system" if not nodirect else "not " + ", ".join(nodirect)))

wa_path = os.path.join(OUT, "wa.tsv")
if os.path.exists(wa_path):
    wa = {}
    idle = None
    with open(wa_path) as f:
        for line in f:
            f8 = line.rstrip("\n").split("\t") + ["", ""]
            sy, bs, sec, dev, ops, app, wal, sst = f8[:8]
            if sy == "idle":
                idle = (int(sec), int(dev))
                continue
            wa[(sy, bs)] = (int(dev), int(ops), int(app), int(sec), wal, sst)
    out.append("## Write amplification (bytes per byte the application wrote)\n")
    if idle:
        out.append("OSD idle writes: %d bytes in %d s.\n" % (idle[1], idle[0]))
    out.append("| system | bs | client ops → OSD | OSD → its block file | of which RocksDB log / tables | device / ceph-fuse's | ≤ 5 % over ceph-fuse |")
    out.append("|---|---|---|---|---|---|---|")
    for s in ORDER:
        for bs in ("4k", "4m"):
            if (s, bs) not in wa:
                continue
            dev, ops, app, _, wal, sst = wa[(s, bs)]
            kv = "%.2f / %.2f" % (int(wal) / app, int(sst) / app) if wal else "–"
            base = wa.get(("cephfuse", bs))
            rel = dev / base[0] if base else None
            met = "" if s == "cephfuse" or rel is None else ("met" if rel <= 1.05 else "missed")
            out.append("| %s | %s | %.2f | %.2f | %s | %s | %s |" % (
                LABEL[s], bs.upper().replace("K", " KiB").replace("M", " MiB"),
                ops / app, dev / app, kv, "–" if s == "cephfuse" or rel is None else "%.2f" % rel, met))
    out.append("")

ops_path = os.path.join(OUT, "osdops.tsv")
if os.path.exists(ops_path):
    out.append("## Which I/Os reached the OSD (4 KiB, iodepth 16, direct=1)\n")
    out.append("| system | fio | its I/Os | OSD client reads | OSD client writes |")
    out.append("|---|---|---|---|---|")
    with open(ops_path) as f:
        for line in f:
            sy, rw, ios, r, w = line.rstrip("\n").split("\t")
            out.append("| %s | %s | %s | %s | %s |" % (LABEL[sy], rw, ios, r, w))
    out.append("")

with open(os.path.join(OUT, "tables.md"), "w") as f:
    f.write("\n".join(out))
print("\n".join(out))

# The chart: IOPS against iodepth, one panel per (cephx, operation).
if not raw or subprocess.call(["sh", "-c", "command -v gnuplot >/dev/null"]) != 0:
    sys.exit(0)
dat = os.path.join(OUT, "iodepth.dat")
with open(dat, "w") as f:
    for cx in cxs:
        for rw in RWS:
            for s in systems:
                f.write("# %s %s %s\n" % (cx, rw, s))
                for d in depths:
                    f.write("%d %.0f\n" % (d, med(cx, s, rw, d, 0)))
                f.write("\n\n")
script = ["set terminal pngcairo size 1500,%d font ',10'" % (450 * len(cxs)),
          "set output '%s'" % CHART,
          "set multiplot layout %d,3" % len(cxs),
          "set logscale xy 2", "set logscale y 10", "set grid",
          "set xtics (1,4,8,16,32,64,128)", "set key outside right font ',8'",
          "set xlabel 'iodepth'", "set ylabel 'IOPS'"]
idx = 0
for cx in cxs:
    for rw in RWS:
        script.append("set title '4 KiB %s, cephx %s'" % (RWL[rw], cx))
        plots = []
        for s in systems:
            plots.append("'%s' index %d with linespoints title '%s'" % (dat, idx, LABEL[s]))
            idx += 1
        script.append("plot " + ", ".join(plots))
script.append("unset multiplot")
subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)
