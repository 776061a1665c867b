#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""powerloss_work.py MNT PLAIN LOG - t_powerloss.sh's workload.

Small files made durable (written, fsynced, their directory fsynced), an
append fsynced twice, an overwrite across two units fsynced, an atomic
replace (a file made durable, renamed over another, the directory
fsynced), a hard link (its directory fsynced), a new directory and a file
in it (both made durable), then a file and an append
never fsynced.  After each fsync (and directory fsync) that
returned, one line in LOG, itself fsynced: what the mount acknowledged as
durable.  A failure (the daemon killed under it) ends the run quietly.
"""
import os
import sys

BS = 4096


def main():
    mnt, plain, log = sys.argv[1:4]
    p = lambda n: open(os.path.join(plain, n), "rb").read()  # noqa: E731
    lf = open(log, "a")

    def durable(tag):
        lf.write(tag + "\n")
        lf.flush()
        os.fsync(lf.fileno())

    def put(name, flags, data, sync):
        fd = os.open(os.path.join(mnt, name), flags, 0o644)
        try:
            os.write(fd, data)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def make(name, data, sync=True):
        put(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, data, sync)
        if sync:
            dfd = os.open(os.path.dirname(os.path.join(mnt, name)), os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

    def append(name, data, sync=True):
        put(name, os.O_WRONLY | os.O_APPEND, data, sync)

    try:
        make("d/s1", p("s1"))
        durable("s1")
        append("ap", p("c1"))
        durable("ap1")
        make("d/s2", p("s2"))
        durable("s2")
        fd = os.open(os.path.join(mnt, "t"), os.O_WRONLY)
        try:
            os.pwrite(fd, p("w"), BS + 100)
            os.fsync(fd)
        finally:
            os.close(fd)
        durable("t")
        append("ap", p("c2"))
        durable("ap2")
        # the atomic replace: a new file made durable, renamed over s2,
        # the directory fsynced
        make("d/tmp", p("s4"))
        os.rename(os.path.join(mnt, "d/tmp"), os.path.join(mnt, "d/s2"))
        dfd = os.open(os.path.join(mnt, "d"), os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        durable("replace")
        # a second name of d/s1, made durable the POSIX way: its directory fsynced
        os.link(os.path.join(mnt, "d/s1"), os.path.join(mnt, "hl1"))
        dfd = os.open(mnt, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        durable("link")
        # a new directory made durable (its parent fsynced), and a file in
        # it: the directory's nonce file is not fsynced on a local backing,
        # its copy in the xattr is (format.md 9.2)
        os.mkdir(os.path.join(mnt, "e"))
        dfd = os.open(mnt, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        make("e/s5", p("s5"))
        durable("mkdir")
        make("d/s3", p("s3"), sync=False)
        append("d/s1", p("tail"), sync=False)
    except OSError:
        pass


if __name__ == "__main__":
    main()
