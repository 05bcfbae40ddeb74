#!/usr/bin/env python3
"""Layering: data flows one way (docs/architecture.md). Reads every #include "..." line
under src/ and fails on an arrow from a lower layer to a higher one.

Usage: check_layers.py SOURCE_DIR

Layers, highest first (a file may include its own layer and any lower one):
  6 pmpi, locality/sample        entry points: the preload, the sampler library
  5 rmax                         RMA extensions (register hooks on windows)
  4 rma, coll, msg               MPI-facing parts
  3 backends                     how bytes move (MPI, UCX)
  2 common, topo                 options, stats, errors, PMPI shim, topology
  1 cache, match, locality, numa, coll/engine   MPI-free engines
Public headers (clampi/...) may be included from anywhere.

KNOWN lists arrows that exist today and are scheduled to go (each printed on every run);
a new arrow fails, and so does a KNOWN arrow that no longer exists (remove it from the list).
"""
import pathlib
import re
import sys

LAYERS = [  # (path prefix under src/, rank); longest prefix wins
    ("pmpi", 6), ("locality/sample", 6), ("rmax", 5), ("rma", 4), ("coll", 4), ("msg", 4),
    ("backends", 3), ("common", 2), ("topo", 2),
    ("cache", 1), ("match", 1), ("locality", 1), ("numa", 1), ("coll/engine", 1),
]

# (including file's folder, included header) arrows that still run upward: none left. A new
# one fails; one listed here that no longer exists fails too (keep the list honest).
KNOWN = set()


def rank(rel):
    best = None
    for prefix, r in LAYERS:
        if rel == prefix or rel.startswith(prefix + "/"):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, r)
    return best[1] if best else None


def main():
    src = pathlib.Path(sys.argv[1]) / "src"
    new, seen = [], set()
    for path in sorted(list(src.rglob("*.c")) + list(src.rglob("*.h"))):
        rel = path.relative_to(src)
        folder = str(rel.parent)
        r_from = rank(str(rel))
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m or m.group(1).startswith("clampi/"):
                continue
            r_to = rank(m.group(1))
            if r_from is None or r_to is None or r_to <= r_from:
                continue
            if (folder, m.group(1)) in KNOWN:
                seen.add((folder, m.group(1)))
                continue
            new.append(f"src/{rel}:{lineno}: includes {m.group(1)} (layer {r_to} above {r_from})")
    for arrow in sorted(KNOWN - seen):
        new.append(f"KNOWN arrow {arrow[0]} -> {arrow[1]} is gone: remove it from scripts/check_layers.py")
    for folder, header in sorted(seen):
        print(f"known upward arrow (to remove): src/{folder} -> {header}")
    for n in new:
        print(n)
    print(f"check_layers: {len(new)} new upward arrows, {len(seen)} known")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
