#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""t_selftest.py - the reliability tests' own detectors can fire.

    harness.sh passthrough tmp -- t_selftest.py

hang:   with the daemon stopped (SIGSTOP), mount_lib.op(stat) must fail the
        calling test with "hang" instead of blocking -- it returns while
        the daemon is still stopped, so it did not wait for the daemon;
        the daemon is then continued and must answer again.  No deadline
        of our own: op() blocking for ever is a hang meson's timeout
        reports.
marker: a plaintext marker written through a passthrough mount must be
        found in the backing directory by mount_lib.grep_backing (the check
        the AES tests rely on to prove its absence).
"""
import os
import signal
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from mount_lib import check, daemon_alive, daemon_pid, grep_backing, summary, write_file  # noqa: E402

MNT = os.environ["MNT"]
LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")


def main():
    marker = b"SC-SELFTEST-MARKER-0c4f"
    write_file(os.path.join(MNT, "m"), b"x" + marker + b"y")
    check(grep_backing(os.environ["BACKING"], marker), "grep_backing misses a plaintext marker")
    pid = daemon_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        code = ("import os, sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1]); "
                "import mount_lib; mount_lib.op(os.stat, os.path.join(sys.argv[2], 'new'), timeout=2)")
        r = subprocess.run([sys.executable, "-c", code, LIB, MNT], capture_output=True,
                           text=True)
    finally:
        os.kill(pid, signal.SIGCONT)
    check(r.returncode == 1 and "hang" in r.stderr,
          f"op() on a stopped daemon: exit {r.returncode}, stderr {r.stderr!r}")
    daemon_alive("after SIGCONT")
    summary("selftest=hang,marker")
    return 0


if __name__ == "__main__":
    sys.exit(main())
