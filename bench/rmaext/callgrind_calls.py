#!/usr/bin/env python3
"""Calls made while callgrind collected (e.g. inside flushes with --toggle-collect), summed
per called function over every callgrind output file given: prints 'name calls' lines,
most called first. Also 'Ir <instructions>' (instructions collected in all).

usage: callgrind_calls.py FILE... [--grep REGEX]
"""
import re
import sys


def parse(path, calls, totals):
    names = {}
    cfn = None

    def name_of(spec):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?", spec)
        if not m:
            return spec.strip()
        if m.group(2):
            names[m.group(1)] = m.group(2).strip()
        return names.get(m.group(1), "?")

    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("cfn="):
                cfn = name_of(line[4:])
            elif line.startswith("fn="):
                name_of(line[3:])
            elif line.startswith("calls=") and cfn is not None:
                calls[cfn] = calls.get(cfn, 0) + int(line[6:].split()[0])
                cfn = None
            elif line.startswith("totals:") or line.startswith("summary:"):
                totals[0] = max(totals[0], int(line.split()[1]))


def main():
    args = sys.argv[1:]
    pattern = None
    if "--grep" in args:
        i = args.index("--grep")
        pattern = re.compile(args[i + 1])
        del args[i : i + 2]
    calls, totals = {}, [0]
    for path in args:
        parse(path, calls, totals)
    print(f"Ir {totals[0]}")
    for name, n in sorted(calls.items(), key=lambda kv: -kv[1]):
        if pattern is None or pattern.search(name):
            print(f"{name} {n}")


if __name__ == "__main__":
    main()
