#!/usr/bin/env python3
"""Checks `clampi-locality run --exact` output against programs with known behaviour.

usage: check_locality.py CASE --cli CLI --src SOURCE --out DIR [--np N] -- COMMAND...
COMMAND is how to start the program (for `mpi`: the mpiexec line that runs the
CLI); for the other cases the checker runs `CLI run --exact -o DIR -- COMMAND`.
Source lines are found through their /* @MARK */ comments.
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def marks(src):
    """{"MALLOC": "counts.c:17", ...} from the /* @MARK */ comments."""
    found = {}
    with open(src) as f:
        for n, line in enumerate(f, 1):
            if "@" in line and ("/*" in line or "//" in line or "!" in line):
                tag = line.split("@", 1)[1].split()[0].rstrip("*/").strip()
                found[tag] = f"{os.path.basename(src)}:{n}"
    return found


def read_rank(out, rank=0):
    with open(os.path.join(out, f"rank{rank}.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out, f"rank{rank}.json")) as f:
        meta = json.load(f)
    return rows, meta


def counts(row, nthreads):
    return [int(row[f"T{t}"]) for t in range(nthreads)]


def run_cli(args, extra=()):
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    cmd = [args.cli, "run", "--exact", "-o", args.out, *extra, "--", *args.command]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)


def case_table1(args):
    p = run_cli(args)
    check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr}")
    rows, meta = read_rank(args.out)
    m = marks(args.src)
    check(meta["threads"] == 3, f"threads {meta['threads']} != 3")
    table = [r for r in rows if r["struct.name"] == "table"]
    check(len(table) == 2, f"pages of 'table': {len(table)} != 2")
    if len(table) != 2:
        return
    a, b = sorted(table, key=lambda r: int(r["address"], 16))
    check(counts(a, 3) == [20, 5, 10], f"page A counts {counts(a, 3)} != [20, 5, 10]")
    check(counts(b, 3) == [0, 1, 10], f"page B counts {counts(b, 3)} != [0, 1, 10]")
    check(a["firsttouch.thread"] == "0" and b["firsttouch.thread"] == "1",
          f"first touch A={a['firsttouch.thread']} B={b['firsttouch.thread']}, expected 0 and 1")
    for r in (a, b):
        check(r["alloc.thread"] == "0", f"alloc.thread {r['alloc.thread']} != 0")
        check(r["alloc.location"] == m["ALLOC"], f"alloc.location {r['alloc.location']} != {m['ALLOC']}")
        check(r["firsttouch.location"] == m["TOUCH"],
              f"firsttouch.location {r['firsttouch.location']} != {m['TOUCH']}")
    # The hybrid-MPI locality paper's Table 1's metrics from the raw counts.
    loc = []
    correct = 0
    for r in (a, b):
        c = counts(r, 3)
        ft = int(r["firsttouch.thread"])
        loc.append(c[ft] / sum(c))
        correct += c[ft] == max(c)
    overall = (counts(a, 3)[0] + counts(b, 3)[1]) / (sum(counts(a, 3)) + sum(counts(b, 3)))
    got = [round(100 * loc[0], 1), round(100 * loc[1], 1), round(100 * overall, 1), 100 * correct / 2]
    check(got == [57.1, 9.1, 45.7, 50.0], f"locality A, B, overall, first-touch correctness {got}")
    print(f"table1: locality A {got[0]} %, B {got[1]} %, overall {got[2]} %, first-touch correctness {got[3]} %")


def case_pagesize(args):
    """Table 1's program with 8 KiB pages: A and B become one page."""
    p = run_cli(args, ["--page-size", "8192", "--min-size", "8192"])
    check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr}")
    rows, meta = read_rank(args.out)
    check(meta["page_size"] == 8192 and meta["min_size"] == 8192, "page_size/min_size in the JSON")
    table = [r for r in rows if r["struct.name"] == "table"]
    check(len(table) == 1 and counts(table[0], 3) == [20, 6, 20] and table[0]["firsttouch.thread"] == "0",
          f"one 8 KiB page with [20, 6, 20], first touched by 0: {[counts(r, 3) for r in table]}")
    check(all(int(r["address"], 16) % 8192 == 0 for r in rows), "addresses are 8 KiB page bases")


def case_counts(args):
    p = run_cli(args)
    check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr}")
    rows, meta = read_rank(args.out)
    m = marks(args.src)
    nt = meta["threads"]
    check(nt == 1, f"threads {nt} != 1")
    by_name = {}
    for r in rows:
        by_name.setdefault(r["struct.name"], []).append(r)
    structs = {s["name"]: s for s in meta["structures"]}

    def pages(name):
        return sorted(by_name.get(name, []), key=lambda r: int(r["address"], 16))

    ld = pages("ld")
    check(len(ld) >= 2 and counts(ld[0], 1) == [40] and all(counts(r, 1) == [0] for r in ld[1:]),
          f"'ld' pages/counts {[counts(r, 1) for r in ld]} != [[40], [0], ...] (allocated, untouched pages)")
    if ld:
        check(ld[0]["alloc.location"] == m["MALLOC"], f"ld alloc.location {ld[0]['alloc.location']}")
        check(ld[1]["firsttouch.thread"] == "-1", "untouched page has firsttouch.thread -1")
    cross = pages("cross")
    check(len(cross) == 2 and [counts(r, 1) for r in cross] == [[1], [1]],
          f"page-spanning store counted on both pages: {[counts(r, 1) for r in cross]}")
    expect_kind = {"ld": ("malloc", "MALLOC"), "cross": ("aligned_alloc", "ALIGNED_ALLOC"),
                   "zeroed": ("calloc", "CALLOC"),
                   "pm": ("posix_memalign", "POSIX_MEMALIGN"), "grown": ("realloc", "REALLOC"),
                   "region": ("mmap", "MMAP"), "particle_fields": ("aligned_alloc", "NAMED")}
    for name, (kind, mark) in expect_kind.items():
        s = structs.get(name)
        check(s is not None, f"structure '{name}' missing from the JSON ({sorted(structs)})")
        if s:
            check(s["kind"] == kind, f"{name}: kind {s['kind']} != {kind}")
            check(s["alloc_location"] == m[mark], f"{name}: alloc_location {s['alloc_location']} != {m[mark]}")
            check(s["alloc_thread"] == 0, f"{name}: alloc_thread {s['alloc_thread']}")
    region = pages("region")
    check([counts(r, 1) for r in region] == [[1], [2]] + [[0]] * 14,
          f"mmap region counts {[counts(r, 1) for r in region]}")
    check([counts(r, 1) for r in pages("particle_fields")] == [[1]], "named structure page count")
    grid = pages("grid")
    check(any(counts(r, 1) == [7] for r in grid), f"static 'grid' page with 7 stores: {[counts(r, 1) for r in grid]}")
    check(any(s["kind"] == "static" and s["name"] == "grid" for s in meta["structures"]), "static grid in JSON")
    check(not any(s["size"] == 64 for s in meta["structures"]), "a 64-byte malloc is below --min-size")
    check(meta["complete"] is True and meta["exit_status"] == 0 and meta["signal"] is None, "complete run")
    check(meta["counts"] == "exact" and meta["mode"] == "exact", "mode/counts exact")
    total = sum(int(r["T0"]) for r in rows)
    check(meta["thread_accesses"] == [total], f"thread_accesses {meta['thread_accesses']} != sum of T0 {total}")


def case_vector(args):
    p = run_cli(args)
    check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr}")
    rows, meta = read_rank(args.out)
    m = marks(args.src)
    structs = {s["name"]: s for s in meta["structures"]}
    for name, mark in (("field", "VECTOR"), ("raw", "NEW")):
        s = structs.get(name)
        check(s is not None, f"structure '{name}' missing ({sorted(structs)})")
        if s:
            check(s["kind"] == "new", f"{name}: kind {s['kind']} != new")
            check(s["alloc_location"] == m[mark], f"{name}: alloc_location {s['alloc_location']} != {m[mark]}")
    field = [r for r in rows if r["struct.name"] == "field"]
    check(len(field) >= 8, f"'field' has {len(field)} pages, expected >= 8")
    # std::vector's constructor writes every element: first touch inside libstdc++
    # templates is reported at the program's line.
    check(all(r["firsttouch.location"] == m["VECTOR"] for r in field),
          f"field first touch {sorted(set(r['firsttouch.location'] for r in field))} != {m['VECTOR']}")


def case_members(args):
    """C++ members: each std::vector member named as a debugger prints it (m_x, not the
    enclosing object's Dom or the pointer's locDom), at its own source line; members set up
    on one line (an initializer list, two resizes) told apart."""
    p = run_cli(args)
    check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr}")
    rows, meta = read_rank(args.out)
    m = marks(args.src)
    structs = {}
    for s in meta["structures"]:
        structs.setdefault(s["name"], []).append(s)
    for name, mark in (("m_x", "MX"), ("m_y", "MY"), ("m_a", "PAIR"), ("m_b", "PAIR"), ("m_p", "FLAT"),
                       ("m_q", "FLAT"), ("m_u", "MIXED"), ("m_w", "MIXED"), ("cells", "GRID"), ("halo", "GRID"),
                       ("m_s", "SPLIT_S"), ("m_t", "SPLIT_T"), ("m_f", "ALIASED"), ("m_g", "ALIASED"),
                       ("data_", "SOLVER"), ("rhs_", "SOLVER"), ("left", "TWO"), ("right", "TWO"), ("buf", "HOLDER")):
        got = structs.get(name, [])
        check(len(got) == 1, f"structure '{name}': {len(got)} found ({sorted(structs)})")
        if got:
            check(got[0]["alloc_location"] == m[mark], f"{name}: alloc_location {got[0]['alloc_location']} != {m[mark]}")
    # the two members of one line are two structures, in declaration order in memory
    for a, b in (("m_a", "m_b"), ("m_p", "m_q"), ("m_u", "m_w"), ("cells", "halo"), ("m_f", "m_g"), ("data_", "rhs_"),
                 ("left", "right")):
        if structs.get(a) and structs.get(b):
            check(int(structs[a][0]["address"], 16) < int(structs[b][0]["address"], 16),
                  f"{a} allocated before {b}")
    for wrong in ("Dom", "Pair", "Flat", "Mesh", "Mixed", "Grid", "locDom", "pair", "flat", "mesh", "mixed", "grid",
                  "n", "scale", "size", "split", "count", "nx", "aliased", "solver", "holder"):
        check(wrong not in structs, f"a member named after its object: '{wrong}'")
    # an allocation wrapper's arrays: named after the caller's variable, at the wrapper's line
    for name in ("m_vol", "pressure"):
        got = structs.get(name, [])
        check(len(got) == 1 and got[0]["alloc_location"] == m["WRAP"],
              f"'{name}' (allocation wrapper): {[s['alloc_location'] for s in got]}, want [{m['WRAP']}] "
              f"({sorted(structs)})")
    # a wrapper that names its own variable and returns it: the caller's name, not its own
    got = structs.get("density", [])
    check(len(got) == 1 and got[0]["alloc_location"] == m["OWNVAR"] and "field" not in structs,
          f"'density' (a wrapper returning its own variable): {[s['alloc_location'] for s in got]}, "
          f"want [{m['OWNVAR']}] ({sorted(structs)})")
    # resize value-initializes: every page wholly inside a member is first touched on the
    # member's own line, the first one too (at -O0 libstdc++ constructs the first element
    # in a function of its own that returns right after the store); the edge pages are
    # shared with the neighbouring heap blocks
    for name, mark in (("m_x", "MX"), ("m_y", "MY"), ("m_a", "PAIR"), ("m_b", "PAIR"), ("m_p", "FLAT"),
                       ("m_q", "FLAT")):
        if not structs.get(name):
            continue
        lo = int(structs[name][0]["address"], 16)
        hi = lo + structs[name][0]["size"]
        inner = [r for r in rows if r["struct.name"] == name and lo <= int(r["address"], 16)
                 and int(r["address"], 16) + 4096 <= hi]
        where = sorted(set(r["firsttouch.location"] for r in inner))
        check(len(inner) >= 30 and where == [m[mark]], f"{name}: {len(inner)} inner pages first touched at {where}, "
              f"want {m[mark]}")


def case_fortran(args):
    """Fortran: the objects of one allocate statement (a, b, a derived type's dom%x), of
    another (u) and of one continued over two lines (v, w) named as the program names them,
    each checked by its size."""
    p = run_cli(args)
    check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr}")
    rows, meta = read_rank(args.out)
    m = marks(args.src)
    n = 16 * 512 * 8
    structs = {}
    for s in meta["structures"]:
        structs.setdefault(s["name"], []).append(s)
    # a statement continued over lines: the compiler puts its allocations on one of them
    base, first = m["CONT_FIRST"].rsplit(":", 1)
    cont = [f"{base}:{k}" for k in range(int(first), int(m["CONT_LAST"].rsplit(":", 1)[1]) + 1)]
    for name, size, want in (("a", n, [m["LIST"]]), ("b", 2 * n, [m["LIST"]]), ("dom%x", 3 * n, [m["LIST"]]),
                             ("u", 512 * 20 * 8, [m["SINGLE"]]), ("v", 5 * n, cont), ("w", 6 * n, cont)):
        got = structs.get(name, [])
        check(len(got) == 1, f"structure '{name}': {len(got)} found ({sorted(structs)})")
        if got:
            check(got[0]["size"] == size and got[0]["alloc_location"] in want,
                  f"{name}: size {got[0]['size']} at {got[0]['alloc_location']}, want {size} at {want}")


def case_value_init(args):
    """Every page of a value-initialized vector (the constructor, resize) is first touched
    on the program's line, the first element's page too."""
    p = run_cli(args)
    check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr}")
    rows, meta = read_rank(args.out)
    m = marks(args.src)
    for name, mark in (("v", "VALUE"), ("m_u", "RESIZE")):
        pages = [r for r in rows if r["struct.name"] == name]
        where = sorted(set(r["firsttouch.location"] for r in pages))
        check(len(pages) >= 512 and where == [m[mark]], f"{name}: {len(pages)} pages first touched at {where}, "
              f"want {m[mark]}")
    nested = [s for s in meta["structures"] if s["size"] == 8 * (1 << 16) and s["alloc_location"] == m["NESTED"]]
    check(len(nested) >= 2 and all(s["name"] == "vv" for s in nested),
          f"vector of vectors: {[(s['name'], s['alloc_location']) for s in meta['structures'] if s['size'] == 8 * (1 << 16)]}")


def case_members_o0(args):
    case_members(args)


def case_vector_o2(args):
    """At -O2 the vector's storage and first touch are named at the program's line
    (not new_allocator.h / memset-vec-unaligned-erms.S), static data demangled."""
    p = run_cli(args)
    check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr}")
    rows, meta = read_rank(args.out)
    m = marks(args.src)
    structs = {s["name"]: s for s in meta["structures"]}
    for name, mark in (("direct", "DIRECT"), ("filled", "FILLED")):
        s = structs.get(name)
        check(s is not None, f"structure '{name}' missing ({sorted(structs)})")
        if s:
            check(s["alloc_location"] == m[mark], f"{name}: alloc_location {s['alloc_location']} != {m[mark]}")
        # whole pages of the block (its first page may hold the end of the previous block)
        lo, hi = (int(s["address"], 16), int(s["address"], 16) + s["size"]) if s else (0, 0)
        pages = [r for r in rows if r["struct.name"] == name and r["firsttouch.thread"] != "-1"
                 and int(r["address"], 16) >= lo and int(r["address"], 16) + 4096 <= hi]
        check(len(pages) >= 8, f"'{name}' has {len(pages)} touched whole pages, expected >= 8")
        locs = sorted(set(r["firsttouch.location"] for r in pages))
        check(locs == [m[mark]], f"{name}: first touch at {locs}, expected {m[mark]}")
    static = [r for r in rows if r["struct.name"] in ("s_static", "_ZL8s_static")]
    check(static and all(r["struct.name"] == "s_static" for r in static),
          f"static array named {sorted(set(r['struct.name'] for r in static))}, expected s_static")
    check(any(s["name"] == "s_static" and s["kind"] == "static" for s in meta["structures"]),
          "s_static in the JSON structures")
    # item 11: other objects' static data is named with its object, the program's is not
    statics = [s["name"] for s in meta["structures"] if s["kind"] == "static"]
    check(any(n.startswith("libc.so.6:") for n in statics) and
          not any(n.startswith("__libc") for n in statics),
          f"libc's static data not marked as libc's: {statics}")
    check(all(r["firsttouch.location"] == m["STATIC"] for r in static),
          f"s_static first touch {sorted(set(r['firsttouch.location'] for r in static))} != {m['STATIC']}")


def case_lambda(args):
    p = run_cli(args)
    check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr}")
    _, meta = read_rank(args.out)
    work = meta["thread_work"]
    check(meta["work_unit"] == "instructions" and len(work) == 3, f"thread_work {work}")
    prog = os.path.basename(args.command[0])
    check(meta.get("thread_creator") == ["", prog, prog], f"thread_creator {meta.get('thread_creator')}, want the program's")
    if len(work) == 3:
        ratio = work[2] / work[1]
        check(2.95 < ratio < 3.05, f"work ratio thread 2 / thread 1 = {ratio:.3f}, expected 3")
        lam = (max(work[1:]) / (sum(work[1:]) / 2) - 1) * 100
        check(abs(lam - 50.0) < 2.0, f"lambda of the two workers {lam:.1f} %, expected 50 %")
        print(f"lambda: thread_work {work}, ratio {ratio:.4f}, lambda(workers) {lam:.2f} %")


def case_crash(args):
    p = run_cli(args)
    check(p.returncode == 128 + 11, f"exit code {p.returncode} != 139 (SIGSEGV)")
    check("SIGSEGV" in p.stderr, "the CLI names the signal")
    rows, meta = read_rank(args.out)
    check(meta["complete"] is False and meta["signal"] == "SIGSEGV" and meta["exit_status"] is None,
          f"complete/signal/exit_status {meta['complete']}/{meta['signal']}/{meta['exit_status']}")
    data = sorted((r for r in rows if r["struct.name"] == "data"), key=lambda r: int(r["address"], 16))
    check(len(data) >= 2 and counts(data[0], 1) == [1], f"partial counts kept: {[counts(r, 1) for r in data]}")


def case_rerun(args):
    """Item 12: `run` into a directory holding an earlier run is refused (nothing changed)."""
    p = run_cli(args)
    check(p.returncode == 0, f"first run: exit code {p.returncode}: {p.stderr}")
    _, meta = read_rank(args.out)
    check(meta.get("run_id"), "the rank JSON names its run (run_id)")
    before = {n: os.path.getmtime(os.path.join(args.out, n)) for n in os.listdir(args.out)}
    again = [args.cli, "run", "--exact", "-o", args.out, "--", *args.command]
    p = subprocess.run(again, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    check(p.returncode == 1, f"second run into the same directory: exit code {p.returncode}, expected 1")
    check("earlier run" in p.stderr and args.out in p.stderr, f"clear message, got: {p.stderr!r}")
    after = {n: os.path.getmtime(os.path.join(args.out, n)) for n in os.listdir(args.out)}
    check(before == after, f"files changed by the refused run: {before} -> {after}")
    # an earlier 2-rank run's leftovers (rank1.*) without rank0: still refused
    os.remove(os.path.join(args.out, "rank0.csv"))
    os.rename(os.path.join(args.out, "rank0.json"), os.path.join(args.out, "rank1.json"))
    p = subprocess.run(again, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    check(p.returncode == 1 and "rank1.json" in p.stderr, f"leftover rank1.json: {p.returncode} {p.stderr!r}")
    # the ranks of one launch share the directory: rank 0 then rank 1 of one mpiexec
    shutil.rmtree(args.out)
    env = dict(os.environ, PMIX_NAMESPACE="clampi-test-1", OMPI_COMM_WORLD_SIZE="2")
    for rank in (0, 1):
        env["OMPI_COMM_WORLD_RANK"] = str(rank)
        p = subprocess.run(again, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
        check(p.returncode == 0, f"rank {rank} of one launch: exit code {p.returncode}: {p.stderr}")
    metas = [read_rank(args.out, r)[1] for r in (0, 1)]
    check(metas[0]["run_id"] == metas[1]["run_id"] and metas[1]["world_size"] == 2,
          f"run ids {metas[0].get('run_id')} / {metas[1].get('run_id')}")
    rep = subprocess.run([args.cli, "report", args.out, "--no-plots", "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    check(rep.returncode == 0, f"report of one 2-rank launch: {rep.returncode} {rep.stderr}")


def case_missing(args):
    p = run_cli(args)
    check(p.returncode != 0, "non-zero exit for a missing program")
    check("no such" in p.stderr, f"clear message, got: {p.stderr!r}")
    check(not os.path.exists(args.out), "nothing written for a missing program")


def case_mpi(args):
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    p = subprocess.run(args.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr[-2000:]}")
    m = marks(args.src)
    ranks = [read_rank(args.out, r) for r in range(args.np)]

    def identity(meta, address):
        for mp in meta["mappings"]:
            start, end = int(mp["start"], 16), int(mp["end"], 16)
            if start <= address < end:
                return (mp["file"], mp["offset"] + address - start)
        return None

    # Item 13: Open MPI's own calloc inside MPI_Win_allocate_shared is not the program's
    # variable; the window's shared segment (an mmap) is.
    for rank, (_, meta) in enumerate(ranks):
        mine = [(s["kind"], s["size"]) for s in meta["structures"] if s["name"] == "mine"]
        check(mine and all(k == "mmap" for k, _ in mine),
              f"rank {rank}: structures named 'mine' {mine}: only the window's mmap may be")
        check(any(s["name"].startswith("alloc@libmpi") for s in meta["structures"]),
              f"rank {rank}: no allocation attributed to libmpi")
    rows0, meta0 = ranks[0]
    ids0 = {identity(meta0, int(r["address"], 16)): r for r in rows0}
    for rank in range(1, args.np):
        rows, meta = ranks[rank]
        check(meta["rank"] == rank, f"rank{rank}.json says rank {meta['rank']}")
        work = [r for r in rows if r["firsttouch.location"] == m["WORK"] and int(r["T0"]) == 100]
        check(len(work) == 1, f"rank {rank}: pages first touched at {m['WORK']} with 100 stores: {len(work)}")
        if not work:
            continue
        ident = identity(meta, int(work[0]["address"], 16))
        check(ident is not None, f"rank {rank}: its page is in no shared mapping ({meta['mappings']})")
        r0 = ids0.get(ident)
        check(r0 is not None, f"rank {rank}: page {ident} not found in rank 0's output")
        if r0:
            check(r0["firsttouch.location"] == m["FIRST_TOUCH"],
                  f"rank 0 first-touched rank {rank}'s page at {r0['firsttouch.location']}, expected {m['FIRST_TOUCH']}")
    print(f"mpi: {args.np} ranks, shared pages matched across ranks by file+offset")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--cli", required=True)
    ap.add_argument("--src")
    ap.add_argument("--out", required=True)
    ap.add_argument("--np", type=int, default=1)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:cut])
    args.command = argv[cut + 1:]
    globals()[f"case_{args.case}"](args)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print(f"{args.case}: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
