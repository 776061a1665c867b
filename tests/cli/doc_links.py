#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""doc_links.py - every reference into the docs lands somewhere (run by
tests/cli/t_docs.sh).

  doc_links.py ROOT

Checks, in the source tree at ROOT:
  1. every relative Markdown link [text](path#anchor) in README.md,
     bench/README.md and docs/**/*.md names a file that exists and, with an
     anchor into a Markdown file, a heading of that file (GitHub's anchors:
     lower case, punctuation but '-' and '_' dropped, blanks as '-', a
     repeated heading gets -1, -2, ...);
  2. every "performance.md N" or "performance.md section N.M" written in
     the docs, bench/, tests/, scripts/, fs/, crypto/ and include/ names a
     numbered section (## N. or ### N.M) of docs/performance.md;
  3. every quoted section named after "benchmarks.md," (e.g.
     docs/benchmarks.md, "The journal's cost, attributed") starts a heading
     of docs/benchmarks.md.
The history pages (docs/history/) are records: their own "performance.md
N" references are as they were written, so check 2 and 3 skip them, but
links into them are checked like any other.
Exits 0 if all holds, 1 with one line per broken reference.
"""
import os
import re
import sys

LINK = re.compile(r'(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)')
PERF = re.compile(r'performance\.md\)?,?\s+(?:sections?\s+|item\s+)?(\d+(?:\.\d+)?)\b')
BENCH = re.compile(r'benchmarks\.md,\s+"([^"]+)')
SOURCES = ('.md', '.c', '.h', '.sh', '.py', '.1', '.build', '.txt')


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def headings(path):
    """The heading texts of a Markdown file (outside code fences)."""
    out = []
    fence = False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('```'):
                fence = not fence
            elif not fence:
                m = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
                if m:
                    out.append(m.group(1))
    return out


def anchors(path):
    seen = {}
    out = set()
    for h in headings(path):
        s = slug(h)
        n = seen.get(s, 0)
        out.add(s if n == 0 else f'{s}-{n}')
        seen[s] = n + 1
    return out


def unfence(text):
    """The text with code fences blanked (line numbers kept)."""
    out = []
    fence = False
    for line in text.split('\n'):
        if line.startswith('```'):
            fence = not fence
            out.append('')
        else:
            out.append('' if fence else line)
    return '\n'.join(out)


def main():
    root = sys.argv[1]
    bad = []
    cache = {}

    def anchors_of(path):
        if path not in cache:
            cache[path] = anchors(path)
        return cache[path]

    md = [os.path.join(root, 'README.md'), os.path.join(root, 'bench', 'README.md')]
    for d, _, files in os.walk(os.path.join(root, 'docs')):
        md += [os.path.join(d, f) for f in files if f.endswith('.md')]
    nlinks = 0
    for path in sorted(md):
        if not os.path.exists(path):
            bad.append(f'{os.path.relpath(path, root)}: missing')
            continue
        text = unfence(open(path, encoding='utf-8').read())
        for m in LINK.finditer(text):
            target = m.group(1) or m.group(2)
            if re.match(r'[a-z]+:', target):
                continue
            nlinks += 1
            line = text.count('\n', 0, m.start()) + 1
            where = f'{os.path.relpath(path, root)}:{line}'
            file, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                bad.append(f'{where}: link to missing file {target}')
            elif anchor and dest.endswith('.md') and anchor not in anchors_of(dest):
                bad.append(f'{where}: no heading for anchor {target}')

    perf = os.path.join(root, 'docs', 'performance.md')
    numbered = set()
    for h in headings(perf):
        m = re.match(r'(\d+(?:\.\d+)?)\.?\s', h)
        if m:
            numbered.add(m.group(1))
    bench_heads = headings(os.path.join(root, 'docs', 'benchmarks.md'))
    nrefs = 0
    for top in ('README.md', 'docs', 'bench', 'tests', 'scripts', 'fs', 'crypto', 'include'):
        base = os.path.join(root, top)
        paths = [base] if os.path.isfile(base) else [
            os.path.join(d, f) for d, _, fs in os.walk(base) for f in fs if f.endswith(SOURCES)]
        for path in sorted(paths):
            rel = os.path.relpath(path, root)
            if rel.startswith(os.path.join('docs', 'history')) or rel == os.path.join('tests', 'cli', 'doc_links.py'):
                continue
            # a comment may break the reference over lines: join them
            text = re.sub(r'\n[ \t]*(?:\*|#|//)?[ \t]*', ' ', open(path, encoding='utf-8', errors='replace').read())
            for m in PERF.finditer(text):
                nrefs += 1
                if m.group(1) not in numbered:
                    bad.append(f'{rel}: "{m.group(0)}": docs/performance.md has no section {m.group(1)}')
            for m in BENCH.finditer(text):
                nrefs += 1
                name = m.group(1).strip()
                if not any(h.startswith(name) for h in bench_heads):
                    bad.append(f'{rel}: "{m.group(0)}": docs/benchmarks.md has no such section')
    for b in bad:
        print(b)
    if nlinks == 0 or nrefs == 0:
        print(f'found {nlinks} links and {nrefs} section references: the patterns no longer match')
        return 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
