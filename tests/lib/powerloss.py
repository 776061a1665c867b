#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""powerloss.py - what a power loss leaves of a backing store's files.

  powerloss.py baseline BACKING SHADOW   copies every regular file below
      BACKING to SHADOW/DEV-INO (hex): the state before a run, all durable
  powerloss.py revert BACKING SHADOW     puts back over every regular file
      below BACKING its copy in SHADOW, or empties it when it has none;
      prints one line per file it changed

stackcrypt-testhooks run with SC_TEST_SHADOW=SHADOW adds a copy of a file
to SHADOW after each fsync or fdatasync of it (fs/xlators/posix/posix.c,
px_shadow), so after a kill -9, `revert` leaves every file as its last
fsync left it: what the backing store would hold after a power loss that
keeps the directory tree as it was (names, links, xattrs: the journaled
metadata of ext4 and XFS) and loses every write to a file since its last
fsync (issue #29's model for file contents; docs/format.md 11.8).
The file is rewritten in place, so its inode, links and xattrs stay.
"""
import os
import sys


def files(backing):
    for top, dirs, names in os.walk(backing):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(top, n)
            st = os.lstat(p)
            if (st.st_mode & 0o170000) == 0o100000:
                yield p, "%x-%x" % (st.st_dev, st.st_ino)


def baseline(backing, shadow):
    os.makedirs(shadow, exist_ok=True)
    for p, key in files(backing):
        with open(p, "rb") as f, open(os.path.join(shadow, key), "wb") as out:
            out.write(f.read())


def revert(backing, shadow):
    done = set()
    for p, key in files(backing):
        if key in done:	# another link of one already put back
            continue
        done.add(key)
        copy = os.path.join(shadow, key)
        want = b""
        if os.path.exists(copy):
            with open(copy, "rb") as f:
                want = f.read()
        with open(p, "rb") as f:
            have = f.read()
        if have == want:
            continue
        with open(p, "r+b") as f:
            f.truncate(0)
            f.write(want)
        print("%s: %d bytes back to %d (%s)" % (os.path.relpath(p, backing), len(have), len(want),
                                             "its last fsync" if os.path.exists(copy) else
                                             "never fsynced"))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("baseline", "revert"):
        sys.exit("usage: powerloss.py baseline|revert BACKING SHADOW")
    (baseline if sys.argv[1] == "baseline" else revert)(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
