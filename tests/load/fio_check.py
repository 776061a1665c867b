#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fio_check.py - decide from fio's JSON output whether a verify run was clean.
#
#   fio_check.py WRITE_JSON [VERIFY_JSON]
#
# fio's exit status alone is not enough: a job that verified nothing (a
# wrong option, a zero-length file, verify silently off) also exits 0.  So
# every job must report error 0, must have moved a non-zero number of bytes,
# and must have read back (verified) exactly the bytes it wrote.  With
# VERIFY_JSON -- the output of a later `--verify_only` pass over the same job
# file -- each job of that pass must also be error-free and have read the
# same number of bytes its namesake wrote in the first run.  Prints one
# summary line; exit 0 if clean, 1 otherwise.

import json
import sys


def load(path):
    """The parsed JSON of one fio run (fio may print error lines before it)."""
    with open(path, encoding='utf-8', errors='replace') as f:
        text = f.read()
    start = text.find('{')
    if start < 0:
        raise ValueError(f'{path}: no JSON object in fio output')
    return json.loads(text[start:])


def jobs(doc):
    """Jobs grouped by name: {name: [job, ...]} (numjobs clones share a name)."""
    out = {}
    for j in doc.get('jobs', []):
        out.setdefault(j['jobname'], []).append(j)
    return out


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    problems = []
    wjobs = jobs(load(argv[1]))
    if not wjobs:
        problems.append('write run: no jobs in JSON')
    njobs = written = verified = 0
    for name, js in wjobs.items():
        for j in js:
            w, r = j['write']['io_bytes'], j['read']['io_bytes']
            njobs += 1
            written += w
            verified += r
            if j['error'] != 0:
                problems.append(f'write run {name}: error {j["error"]}')
            if w == 0:
                problems.append(f'write run {name}: a job wrote nothing')
            if r != w:
                problems.append(f'write run {name}: a job wrote {w} bytes but verified {r}')
    reverified = 0
    if len(argv) == 3:
        # The JSON lists clones in completion order, not by clone number, and
        # each clone's byte count differs (random block sizes): compare the
        # sorted byte counts per job name.
        vjobs = jobs(load(argv[2]))
        if sorted(vjobs) != sorted(wjobs):
            problems.append(f'verify run: jobs {sorted(vjobs)} != write run {sorted(wjobs)}')
        for name, js in vjobs.items():
            got = sorted(j['read']['io_bytes'] for j in js)
            want = sorted(j['write']['io_bytes'] for j in wjobs.get(name, []))
            reverified += sum(got)
            for j in js:
                if j['error'] != 0:
                    problems.append(f'verify run {name}: error {j["error"]}')
            if got != want:
                problems.append(f'verify run {name}: verified {got} bytes per job, '
                                f'written {want}')
    for p in problems:
        print('fio_check: FAIL: ' + p)
    print(f'fio_check: {njobs} jobs, {written} bytes written, {verified} verified '
          f'in the write run, {reverified} re-verified after remount, '
          f'{len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
