#!/usr/bin/env python3
"""Comments point only at what a reader of the repository has: every file name with a source
extension in a comment of the C, C++ and Fortran sources (src, include, tools, tests, bench,
apps) is a file of the repository or one the build generates (system headers on #include
lines are not comments), and no source, script or doc names an issue of the project's
tracker ("issue 17 item 6") or a paper by a number of the project's reading list
("paper-002"), which a reader of the tree cannot see: say what the code does, name the paper.
Another project's issue, named by its repository, is fine. Usage: check_file_refs.py SOURCE_DIR"""
import pathlib
import re
import subprocess
import sys

SOURCES = (".c", ".h", ".cpp", ".cc", ".f90", ".F90")
DIRS = ("src", "include", "tools", "tests", "bench", "apps")
# made by the build (src/CMakeLists.txt, tools/info/CMakeLists.txt)
GENERATED = {"fortran_entry.c", "handover_entry.c", "large_p2p_entry.c", "large_rma_entry.inc", "clampi_info_build.h"}
NAME = re.compile(r"(?<![\w/.$-])((?:[\w.-]+/)*[A-Za-z][\w-]*\.(?:c|h|cpp|cc|f90|F90|inc|sh|py|tsv|cmake))\b")
C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
F_COMMENT = re.compile(r"![^\n]*")
TRACKER = re.compile(r"\b[Ii]ssues? #?\d+|\bpaper-\d{3}\b")
OTHER_PROJECT = re.compile(r"\b(pmodels|open-mpi|openucx|mpi4py)/")
TEXT = SOURCES + (".sh", ".py", ".md", ".txt", ".cmake", ".tsv")
# other projects' files: the MPI's headers, libstdc++'s, Open MPI's sources
EXTERNAL = {"mpi.h", "mpif.h", "mpi_abi.h", "stl_algobase.h", "new_allocator.h"}
EXTERNAL_TREES = ("ompi/", "opal/")
# names in comments that stand for any file (usage lines, examples)
PLACEHOLDER = re.compile(r"^(file|main)\.")


def comments(path, text):
    if path.suffix.lower() == ".f90":
        return F_COMMENT.findall(text)
    return C_COMMENT.findall(text)


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    git = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True)
    if git.returncode == 0:
        tracked = git.stdout.split()
    else:  # a source tree without git: every file but build trees
        tracked = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "build" not in p.parts]
    files = [f for f in tracked if f.startswith(DIRS) and f.endswith(SOURCES) and "/results/" not in f]
    basenames = {pathlib.PurePath(f).name for f in tracked} | GENERATED
    bad = []
    for rel in files:
        path = root / rel
        text = path.read_text(errors="replace")
        for comment in comments(path, text):
            for m in NAME.finditer(comment):
                name = pathlib.PurePath(m.group(1)).name
                if name in basenames or name in EXTERNAL or m.group(1).startswith(EXTERNAL_TREES):
                    continue
                if PLACEHOLDER.match(name):
                    continue
                bad.append(f"{rel}: a comment names {m.group(1)}, which is not in the repository")
    for rel in tracked:
        if not rel.endswith(TEXT) or "/results/" in rel or not (rel.startswith(DIRS + ("scripts", "docs", "cmake"))
                                                                 or "/" not in rel):
            continue
        for n, line in enumerate((root / rel).read_text(errors="replace").splitlines(), 1):
            m = TRACKER.search(line)
            if m and not OTHER_PROJECT.search(line) and rel != "scripts/check_file_refs.py":
                bad.append(f"{rel}:{n}: names {m.group(0)!r}, which a reader of the tree cannot look up; "
                           "say what it is instead")
    for b in bad:
        print(b)
    print(f"check_file_refs: {len(files)} sources read, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
