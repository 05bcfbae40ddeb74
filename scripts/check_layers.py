#!/usr/bin/env python3
"""Layering: data flows one way (docs/architecture.md). Reads every #include "..." line
under src/ and fails on an arrow from a lower layer to a higher one. Given a build
directory, it also reads the symbols of every object of libclampi and libclampi_pmpi (nm)
and fails on a reference from a layer to a name defined only in a layer above it, and on
a name defined twice in one library (in two layers, or twice in one; a weak definition
beside a strong one included). The build enforces the first too: each layer links
into a library of its own with the layers below it and -Wl,--no-undefined
(src/CMakeLists.txt, clampi_layer_check_*).

Usage: check_layers.py SOURCE_DIR [BUILD_DIR]

Layers, highest first (a file may include its own layer and any lower one):
  7 pmpi, locality/sample        entry points: the preload, the sampler library
  6 rmax                         RMA extensions (register hooks on windows)
  5 rma, coll, msg               MPI-facing parts
  4 backends                     how bytes move (MPI, UCX)
  3 services                     shared services: the UCX runtime, the node-shared heap
  2 common, topo                 options, stats, errors, PMPI shim, topology
  1 cache, match, locality, numa, coll/engine   MPI-free engines
Public headers (clampi/...) may be included from anywhere. A header named *_internal.h
is its folder's own: only files in that folder (or below it) may include it; other layers
use the folder's interface header (msg/msg.h, coll/coll.h, ...).

SEAMS: a layer that reaches a lower one only through that one's interface: the RMA
extensions reach the backends through backends/backend.h (its tables' rows), never a
backend's own header or function: an #include of any other backends/ header from src/rmax
fails, and so does a reference from an rmax object to a name defined outside the seam's
files.

KNOWN lists arrows that exist today and are scheduled to go (each printed on every run);
a new arrow fails, and so does a KNOWN arrow that no longer exists (remove it from the list).
"""
import pathlib
import re
import subprocess
import sys

LAYERS = [  # (path prefix under src/, rank); longest prefix wins
    ("pmpi", 7), ("locality/sample", 7), ("rmax", 6), ("rma", 5), ("coll", 5), ("msg", 5),
    ("backends", 4), ("services", 3), ("common", 2), ("topo", 2),
    ("cache", 1), ("match", 1), ("locality", 1), ("numa", 1), ("coll/engine", 1),
]

# (layer folder, lower folder, headers it may include there, sources whose names it may use)
SEAMS = [("rmax", "backends", {"backends/backend.h"}, {"backends/backend.c", "backends/intrinsic_ops.c"})]


def seam_of(rel):
    for folder, lower, headers, sources in SEAMS:
        if rel.startswith(folder + "/"):
            return lower, headers, sources
    return None


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


# The object libraries of each shipped library (src/CMakeLists.txt). Objects of the
# MPI-free engines are layer 1 wherever their source sits.
ENGINE_DIRS = ["clampi_engine.dir", "clampi_numa_objs.dir"]
MPI_DIRS = ["clampi_common_objs.dir", "clampi_services_objs.dir", "clampi_backends_objs.dir", "clampi_parts_objs.dir", "clampi_rmax_objs.dir"]
LIBRARIES = {
    "libclampi": ENGINE_DIRS + MPI_DIRS + ["clampi_linked_entry_objs.dir"],
    "libclampi_pmpi": ENGINE_DIRS + MPI_DIRS + ["clampi_pmpi.dir"],
}
DEFINED = set("TDBRGSVWCu")  # nm -P types of a global definition (upper case, weak, unique)
UNDEFINED = set("Uwv")


def objects(srcdir, build, objdir):
    """(object, source path under src/, layer) for every object whose source still exists
    (a build directory can keep objects of deleted files), generated sources included."""
    base = build / "src" / "CMakeFiles" / objdir
    for obj in sorted(base.rglob("*.o")):
        rel = str(obj.relative_to(base))[: -len(".o")]
        if not (srcdir / rel).exists() and not (build / "src" / rel).exists():
            continue
        yield obj, rel, 1 if objdir in ENGINE_DIRS else rank(rel)


def symbols(obj):
    out = subprocess.run(["nm", "-P", str(obj)], capture_output=True, text=True, check=True).stdout
    defined, undefined = [], []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        if parts[1] in UNDEFINED:
            undefined.append(parts[0])
        elif parts[1] in DEFINED:
            defined.append((parts[0], parts[1]))
    return defined, undefined


def check_symbols(srcdir, build):
    bad = []
    for lib, dirs in LIBRARIES.items():
        defs, refs = {}, []
        for objdir in dirs:
            for obj, rel, r in objects(srcdir, build, objdir):
                d, u = symbols(obj)
                for name, kind in d:
                    defs.setdefault(name, []).append((r, rel, kind))
                refs += [(r, rel, name) for name in u]
        if not defs:
            bad.append(f"{lib}: no objects under {build}/src/CMakeFiles (not built?)")
            continue
        for name, where in sorted(defs.items()):
            if len(where) > 1:
                places = ", ".join(f"src/{rel} ({kind}, layer {r})" for r, rel, kind in where)
                bad.append(f"{lib}: {name} defined {len(where)} times: {places}")
        for r, rel, name in sorted(set(refs)):
            where = defs.get(name)
            seam = seam_of(rel)
            if where and seam:
                lower, _, sources = seam
                for _, wrel, _ in where:
                    if wrel.startswith(lower + "/") and wrel not in sources:
                        bad.append(f"{lib}: src/{rel} references {name}, defined in src/{wrel}: "
                                   f"{lower}/ is reached through its interface only (SEAMS)")
            if where and min(w[0] for w in where) > r:
                bad.append(f"{lib}: src/{rel} (layer {r}) references {name}, defined in src/{where[0][1]} "
                           f"(layer {where[0][0]})")
    return bad


def main():
    if len(sys.argv) > 2:
        bad = check_symbols(pathlib.Path(sys.argv[1]) / "src", pathlib.Path(sys.argv[2]))
        for b in bad:
            print(b)
        print(f"check_layers: {len(bad)} symbol offences in {sys.argv[2]}")
        if bad:
            return 1
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
            inc = m.group(1)
            seam = seam_of(str(rel))
            if seam and inc.startswith(seam[0] + "/") and inc not in seam[1]:
                new.append(f"src/{rel}:{lineno}: includes {inc}: {seam[0]}/ is reached through "
                           f"{', '.join(sorted(seam[1]))} only (SEAMS)")
                continue
            home = str(pathlib.PurePath(inc).parent)  # "." for a header named without its folder
            if inc.endswith("_internal.h") and home != "." and not (folder == home or folder.startswith(home + "/")):
                new.append(f"src/{rel}:{lineno}: includes {inc}, another folder's internal header")
                continue
            r_to = rank(inc)
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
    print(f"check_layers: {len(new)} new upward arrows or internal includes, {len(seen)} known")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
