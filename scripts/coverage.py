#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""coverage.py - which lines of fs/ and crypto/ a set of test runs reached.

    scripts/coverage.py BUILD DIR... [--not DIR...] [--list]

BUILD is a build tree configured with -Db_coverage=true.  Each DIR holds
the counts of one run or more: the GCOV_PREFIX that run had (with
GCOV_PREFIX_STRIP=0, gcov writes BUILD's .gcda files under DIR at their
absolute path), so that runs kept apart can be compared; BUILD itself is a
DIR too (the counts of runs without GCOV_PREFIX).  For example:

    meson setup build-cov -Db_coverage=true -Dbuildtype=debugoptimized
    GCOV_PREFIX=/tmp/cov/a GCOV_PREFIX_STRIP=0 meson test -C build-cov fsx-ext4-aes-gcm
    scripts/coverage.py build-cov /tmp/cov/a --not /tmp/cov/b --list

Prints the number of lines (of fs/ and crypto/, each with a count above
zero) that the DIRs before --not reach together; with --not, also how many
of those the DIRs after it do not reach, and with --list which ones
(FILE:LINE, one a line).  Exit status: 0, or 1 (one line on stderr) when a
DIR holds no counts or gcov fails, 2 on a bad command line.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
KEEP = ('fs/', 'crypto/')


def die(msg):
    print(f'coverage.py: {msg}', file=sys.stderr)
    sys.exit(1)


def gcda_files(build, d):
    """(gcda, gcno) pairs of one DIR: BUILD's own files or a GCOV_PREFIX tree."""
    build = os.path.realpath(build)
    d = os.path.realpath(d)
    pairs = []
    for root, _, files in os.walk(d):
        for f in files:
            if not f.endswith('.gcda'):
                continue
            gcda = os.path.join(root, f)
            orig = gcda if d == build else '/' + os.path.relpath(gcda, d)
            gcno = orig[:-len('.gcda')] + '.gcno'
            if not orig.startswith(build + '/') or not os.path.exists(gcno):
                continue	# another tree's counts, or an object since removed
            pairs.append((gcda, gcno))
    return pairs


def reached(build, dirs):
    """The set of 'FILE:LINE' of fs/ and crypto/ that DIRS reach together."""
    lines = set()
    with tempfile.TemporaryDirectory(prefix='sc-cov.') as tmp:
        for d in dirs:
            pairs = gcda_files(build, d)
            if not pairs:
                die(f'{d}: no .gcda of {build} in it (a -Db_coverage build, GCOV_PREFIX_STRIP=0?)')
            for i, (gcda, gcno) in enumerate(pairs):
                # gcov wants the two files side by side under one stem
                stem = os.path.join(tmp, f'o{i}')
                shutil.copyfile(gcda, stem + '.gcda')
                shutil.copyfile(gcno, stem + '.gcno')
                r = subprocess.run(['gcov', '-j', '-o', tmp, stem + '.gcda'], cwd=tmp,
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    die(f'gcov {gcda}: {r.stderr.strip()}')
                for out in os.listdir(tmp):
                    if not out.endswith('.gcov.json.gz'):
                        continue
                    with gzip.open(os.path.join(tmp, out), 'rt') as f:
                        data = json.load(f)
                    os.unlink(os.path.join(tmp, out))
                    cwd = data.get('current_working_directory', build)
                    for fi in data['files']:
                        src = os.path.relpath(os.path.normpath(os.path.join(cwd, fi['file'])), TOP)
                        if not src.startswith(KEEP):
                            continue
                        for ln in fi['lines']:
                            if ln['count'] > 0:
                                lines.add(f"{src}:{ln['line_number']}")
                os.unlink(stem + '.gcda')
                os.unlink(stem + '.gcno')
    return lines


def main(argv):
    listing = '--list' in argv
    argv = [a for a in argv if a != '--list']
    if len(argv) < 2 or argv[0].startswith('-') or argv[1] == '--not':
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    build, rest = argv[0], argv[1:]
    if '--not' in rest:
        k = rest.index('--not')
        these, others = rest[:k], rest[k + 1:]
        if not others:
            print('coverage.py: --not needs a DIR', file=sys.stderr)
            return 2
    else:
        these, others = rest, None
    a = reached(build, these)
    print(f'{len(a)} lines of fs/ and crypto/ reached by {" ".join(these)}')
    if others is not None:
        b = reached(build, others)
        missed = sorted(a - b, key=lambda s: (s.split(':')[0], int(s.split(':')[1])))
        print(f'{len(b)} reached by {" ".join(others)}; {len(missed)} of the first not among them')
        if listing:
            print('\n'.join(missed))
    elif listing:
        print('\n'.join(sorted(a)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
