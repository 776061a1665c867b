#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""powerloss_check.py MNT PLAIN LOG NAMED - after a power loss, t_powerloss.sh's files.

LOG: what powerloss_work.py saw acknowledged as durable.  NAMED: the files
fsck named (one mount path a line).  Prints one line per file that breaks
the rule and exits 1 if any did:
  - what was acknowledged durable reads back exactly: a later state the
    workload went on to (its fsync done, the line not yet written; a
    close that synced) is allowed, an earlier one is not;
  - what was never acknowledged is absent, reads as a state the workload
    passed through, or as its own bytes or zeros (never longer), or is
    refused (EIO) and named by fsck;
  - keep, never touched, is as it was; no other file appears.
"""
import errno
import os
import sys

BS = 4096


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def main():
    mnt, plain, log, named_file = sys.argv[1:5]
    p = lambda n: open(os.path.join(plain, n), "rb").read()  # noqa: E731
    tags = set(open(log).read().split())
    named = set(open(named_file).read().split())
    t_new = p("t")[:BS + 100] + p("w") + p("t")[BS + 100 + len(p("w")):]
    # each file: its states in order, and the first the log vouches for
    states = {
        "d/s1": ([p("s1"), p("s1") + p("tail")], "s1"),
        "hl1": ([p("s1"), p("s1") + p("tail")], "link"),	# d/s1's second name
        "d/s2": ([p("s2"), p("s4")], "s2"),
        "d/tmp": ([p("s4")], None),
        "d/s3": ([p("s3")], None),
        "e/s5": ([p("s5")], "mkdir"),
        "ap": ([p("ap"), p("ap") + p("c1"), p("ap") + p("c1") + p("c2")], None),
        "t": ([p("t"), t_new], "t"),
    }
    ap_at = 2 if "ap2" in tags else 1 if "ap1" in tags else 0
    bad = []
    for name, (seq, tag) in states.items():
        got = read(os.path.join(mnt, name))
        vouched = ap_at > 0 if name == "ap" else tag in tags
        if name == "d/s2":
            # replaced by a rename: the old file until the directory's
            # fsync; between the rename and that fsync a power loss may
            # leave the new file bound to its old name (format.md 11.6)
            vouched = "replace" in tags
            if vouched:
                seq, tag = [p("s4")], "replace"
        if isinstance(got, str) and not vouched and "/" + name in named:
            continue	# refused, and fsck says why
        if name == "ap":
            final, floor = seq[-1], seq[ap_at]
            if not (isinstance(got, bytes) and got.startswith(floor) and final.startswith(got)):
                bad.append(f"ap: {describe(got)}, not the acknowledged {len(floor)} bytes "
                           f"or a prefix of what followed")
            continue
        if name == "t":
            ok = isinstance(got, bytes) and (got == t_new if tag in tags else
                                             len(got) == len(t_new) and
                                             all(g in (o, n) for g, o, n in zip(got, p("t"), t_new)))
            if not ok:
                bad.append(f"t: {describe(got)}, not {'the acknowledged overwrite' if tag in tags else 'old or new bytes'}")
            continue
        if tag and tag in tags:
            if got not in seq:
                bad.append(f"{name}: {describe(got)}, acknowledged durable ({len(seq[0])} bytes)")
            continue
        if got is None or (isinstance(got, bytes) and (got in seq or own_or_zero(got, seq[-1]))):
            continue
        bad.append(f"{name}: {describe(got)}, never acknowledged, and "
                   f"{'not named by fsck' if isinstance(got, str) else 'bytes neither its own nor zero'}")
    if read(os.path.join(mnt, "keep")) != p("keep"):
        bad.append("keep: changed")
    seen = sorted(os.path.relpath(os.path.join(top, n), mnt)
                  for top, dirs, names in os.walk(mnt) for n in names)
    extra = [n for n in seen if n not in states and n != "keep"]
    if extra:
        bad.append(f"files no one made: {extra}")
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


def own_or_zero(got, want):
    return len(got) <= len(want) and all(g == 0 or g == w for g, w in zip(got, want))


def describe(got):
    return "absent" if got is None else got if isinstance(got, str) else f"{len(got)} bytes"


if __name__ == "__main__":
    main()
