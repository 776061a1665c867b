#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# help_lists.py KIND: reads a --help text on stdin and prints, one a line,
# what it offers the user, as bash completion must offer it:
#   commands  the COMMAND names of `stackcrypt --help`
#   options   the options of `stackcrypt CMD --help` ("--x[=V]" gives
#             "--x" and "--x="; "--x=V" gives "--x="; "-q, --quiet" both)
#   mount_o   the -o options of `stackcrypt mount --help` ("loop=a|b" gives
#             "loop=a" and "loop=b"; "stats[=W]" gives "stats" and "stats=")
# An option line is indented by two spaces and its names end at two spaces;
# prose lines (with single spaces) are no option.
import re
import sys

NAME = re.compile(r'^(-{0,2}[A-Za-z][\w-]*)(\[=[^\]]*\]|=\S*)?$')


def names(head, o_section):
    out = []
    for part in head.split(', '):
        m = NAME.match(part)
        if not m:
            return []	# prose, not an option line
        name, value = m.group(1), m.group(2) or ''
        if value.startswith('['):
            out += [name, name + '=']
        elif value and o_section and re.fullmatch(r'=[a-z_]+(\|[a-z_]+)+', value):
            out += [name + '=' + v for v in value[1:].split('|')]
        elif value:
            out.append(name + '=')
        else:
            out.append(name)
    return out


def main():
    kind = sys.argv[1]
    text = sys.stdin.read().splitlines()
    got = []
    if kind == 'commands':
        on = False
        for line in text:
            if line.startswith('commands:'):
                on = True
            elif on and (m := re.match(r'^  ([a-z]+) ', line)):
                got.append(m.group(1))
    else:
        o_section = False
        for line in text:
            if line.startswith('Mount options (-o'):
                o_section = True
                continue
            m = re.match(r'^  (\S.*?)(?: {2,}|$)', line)
            if not m or o_section != (kind == 'mount_o'):
                continue
            for n in names(m.group(1), o_section):
                if (kind == 'options') == n.startswith('-'):
                    got.append(n)
    print('\n'.join(sorted(set(got))))


main()
