#!/usr/bin/env python3
"""No re-entry: every MPI call clampi's libraries make for themselves goes to PMPI_.

Usage: check_pmpi.py SOURCE_DIR BUILD_DIR

1. Objects: no object of a clampi library (build/src/CMakeFiles/*) may reference an
   undefined MPI_ function (nm -u). Library code reaches MPI through
   src/common/pmpi_shim.h; a new call needs its line there.
2. Wrappers: the preload's own files (src/pmpi/*.c) and src/*/mpi_entry.c define MPI_
   names, so they are not shimmed; there an MPI_ name may only appear where it is defined, never called (a call
   inside the translation unit that defines it would not show in nm).
3. Fortran entry points (objects pmpi/fortran_*): the Fortran binding of a call is its C
   entry point, as in a Fortran program, so they may reference the MPI_ names of
   src/pmpi/entry_points.tsv (and MPI's MPI_F_/MPI_F08_ status sentinels, data), nothing else.
Exits 1 and lists every offence.
"""
import pathlib
import re
import subprocess
import sys


def undefined_mpi(obj):
    out = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
    return sorted({m.group(1) for m in re.finditer(r"\b(MPI_[A-Z]\w*)", out)})


def defined_pmpi(obj):
    out = subprocess.run(["nm", "--defined-only", str(obj)], capture_output=True, text=True, check=True).stdout
    return sorted({m.group(1) for m in re.finditer(r" [TtWw] (PMPI_[A-Z]\w*)", out)})


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


# A definition: the name follows a return type at the start of a declaration
# ("PRELOAD_API int MPI_Rget(", "int MPI_Wait(").
DEFINITION = re.compile(r"^\s*(?:[A-Z_]+\s+)?(?:int|double)\s+$")
CALL = re.compile(r"\bMPI_[A-Z]\w*\s*\(")


def wrapper_calls(path):
    bad = []
    for lineno, line in enumerate(strip_comments_and_strings(path.read_text()).splitlines(), 1):
        for m in CALL.finditer(line):
            if not DEFINITION.match(line[: m.start()]):
                bad.append(f"{path}:{lineno}: calls {m.group(0).rstrip('( ')} (use PMPI_)")
    return bad


def fortran_allowed(src):
    names = {"MPI_F_STATUS_IGNORE", "MPI_F_STATUSES_IGNORE", "MPI_F08_STATUS_IGNORE", "MPI_F08_STATUSES_IGNORE"}
    for line in (src / "src" / "pmpi" / "entry_points.tsv").read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words and not words[0].startswith("handover"):  # the Fortran rows
            names.add("MPI_" + words[0])
    return names


def main():
    src, build = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    fortran_ok = fortran_allowed(src)
    objs = sorted((build / "src" / "CMakeFiles").glob("*/**/*.o"))
    if not objs:
        print(f"check_pmpi: no objects under {build}/src/CMakeFiles (build first)")
        return 1
    offences = []
    for obj in objs:
        for name in defined_pmpi(obj):
            offences.append(f"{obj.relative_to(build)}: defines {name} (an MPI_ definition renamed by the shim?)")
        fortran = "/pmpi/fortran_" in str(obj)
        for name in undefined_mpi(obj):
            if fortran and name in fortran_ok:
                continue
            offences.append(f"{obj.relative_to(build)}: references {name} (add it to src/common/pmpi_shim.h)")
    wrappers = sorted((src / "src" / "pmpi").glob("*.c")) + sorted((src / "src").glob("*/mpi_entry.c"))
    for path in wrappers:
        offences += wrapper_calls(path)
    for o in offences:
        print(o)
    print(f"check_pmpi: {len(objs)} objects, {len(wrappers)} wrapper files, {len(offences)} offences")
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
