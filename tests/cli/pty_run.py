#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""pty_run.py [--typeahead] ANSWER... -- CMD ARG...

Runs CMD on a new pseudo-terminal (its controlling terminal, so /dev/tty
works) and types the next ANSWER plus Enter each time the output ends in a
prompt (text ending in ": "); the answer "^C" types the interrupt key
instead, "^D" the end-of-file key.  With --typeahead, every answer is typed
at once before CMD starts, as a paste would.  Prints everything the terminal
showed and exits with CMD's exit status (CMD is killed if it is still
running after 600 s, or $PTY_RUN_DEADLINE seconds: a bound on a hang,
never on a speed -- at 60 s, cli-usage's walkthrough, which runs
many steps, reached it at load 9).  Used by the CLI tests to drive password
prompts: what the terminal shows also proves whether echo was off.
"""
import os
import pty
import select
import sys
import time


def main():
    if "--" not in sys.argv:
        sys.exit("usage: pty_run.py ANSWER... -- CMD ARG...")
    sep = sys.argv.index("--")
    answers, cmd = sys.argv[1:sep], sys.argv[sep + 1:]
    typeahead = answers[:1] == ["--typeahead"]
    if typeahead:
        answers = answers[1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    if typeahead:
        # into the terminal's input queue before CMD reads anything
        os.write(fd, b"".join(a.encode() + b"\n" for a in answers))
        answers = []
    out = b""
    pending = b""
    deadline = time.time() + float(os.environ.get("PTY_RUN_DEADLINE", "600"))
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            out += data
            pending += data
            if pending.rstrip(b" ").endswith(b":") and pending.endswith(b": "):
                pending = b""
                if answers:
                    # give the program time to turn echo off before typing
                    time.sleep(0.05)
                    answer = answers.pop(0)
                    if answer == "^C":
                        os.write(fd, b"\x03")  # the terminal's interrupt key
                    elif answer == "^D":
                        os.write(fd, b"\x04")  # the terminal's end-of-file key
                    else:
                        os.write(fd, answer.encode() + b"\n")
    if time.time() >= deadline:
        os.kill(pid, 9)  # a hung CMD (e.g. waiting for input it lost) fails, not hangs
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode(errors="replace"))
    sys.exit(os.waitstatus_to_exitcode(status) & 0xff)


main()
