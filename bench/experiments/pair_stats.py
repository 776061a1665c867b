#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""pair_stats.py - medians and paired ratios of A/B rounds taking turns.

    ... | python3 bench/experiments/pair_stats.py NAME...

Each line of standard input is one round: k figures of A, then the same
k figures of B (k = the number of NAMEs).  Prints, per NAME, the medians
of A and of B and the median of the rounds' ratios B/A with their range:
pairing keeps a ratio meaningful while the machine's speed drifts
(rename_cost.sh, unit_tree_cost.sh).
"""
import statistics
import sys

names = sys.argv[1:]
k = len(names)
rows = [list(map(float, line.split())) for line in sys.stdin if line.strip()]
for i, what in enumerate(names):
    q = [r[k + i] / r[i] for r in rows]
    print("%s: median A %.3f, B %.3f; B/A, median of the pairs: %.3f (%.2f-%.2f)" % (
        what, statistics.median(r[i] for r in rows), statistics.median(r[k + i] for r in rows),
        statistics.median(q), min(q), max(q)))
