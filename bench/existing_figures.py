#!/usr/bin/env python3
"""Sets each figure of a bench/existing_figures.sh run beside the committed run it was last
reported from (speed-ups: clampi against its baseline in the same run; so a figure that
"stays where it is" has a ratio now / before near 1 whatever the machine's speed mode).

usage: bench/existing_figures.py OUT_DIR openmpi|mpich   (prints markdown)
"""
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def first(*paths):
    """The first committed reference that exists (repository-relative), and its data."""
    for p in paths:
        d = load(os.path.join(ROOT, p))
        if d is not None:
            return p, d
    return None, None


def ratio(now, ref):
    return f"{now / ref:.2f}" if ref and now is not None else "n/a"


def fmt(x, digits=2):
    return "n/a" if x is None else f"{x:.{digits}f}"


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def get_bench(out, mpi, rows):
    for tr in ("shm", "tcp"):
        now = load(os.path.join(out, f"get_bench-{mpi}-{tr}.json"))
        ref_path, ref = first(f"bench/results/quiet/get_bench-{mpi}-{tr}.json",
                              f"bench/results/get_bench-{mpi}-{tr}.json")
        if not now:
            continue
        refs = {(r["pattern"], r["size"]): r for r in (ref or {}).get("results", [])}
        by_pattern = {}
        for r in now["results"]:
            by_pattern.setdefault(r["pattern"], []).append((r["speedup"], refs.get((r["pattern"], r["size"]), {}).get("speedup")))
        for pattern, pairs in by_pattern.items():
            g_now = geomean([a for a, _ in pairs])
            g_ref = geomean([b for _, b in pairs if b])
            rows.append((f"get cache, {tr}, `{pattern}`: speed-up over MPI's get (geomean over sizes)", fmt(g_ref),
                         fmt(g_now), ratio(g_now, g_ref), ref_path or "none"))


def pmpi_bench(out, mpi, rows):
    now = load(os.path.join(out, f"pmpi_bench-{mpi}.json"))
    ref_path, ref = first(f"bench/results/pmpi_bench-{mpi}-quiet.json", f"bench/results/pmpi_bench-{mpi}.json")
    if not now:
        return
    ref = ref or {}

    def rel(d, k):  # a preloaded figure over plain in the same run
        s = d.get("overhead_ns_per_get", {})
        return s[k] / s["plain"] if s.get("plain") and k in s else None

    for k, name in (("preload_mode_off", "`CLAMPI_MODE=off`"), ("preload_window_off", "window mode off")):
        a, b = rel(now, k), rel(ref, k)
        rows.append((f"preload, ns per get, {name} / plain (lower is better)", fmt(b, 3), fmt(a, 3), ratio(a, b), ref_path))
    for k in ("plain", "preload_mode_off", "preload_window_off", "preload_always_cache_hit"):
        a = now.get("instructions_per_get", {}).get(k)
        b = ref.get("instructions_per_get", {}).get(k)
        rows.append((f"preload, instructions per get, `{k}`", fmt(b, 1), fmt(a, 1), ratio(a, b), ref_path))
    t_now = {t["threads"]: t for t in now.get("threads", [])}
    t_ref = {t["threads"]: t for t in ref.get("threads", [])}
    for n in sorted(t_now):
        a = t_now[n]["preload_hit_mgets_per_s"] / t_now[n]["plain_mgets_per_s"]
        b = (t_ref[n]["preload_hit_mgets_per_s"] / t_ref[n]["plain_mgets_per_s"]) if n in t_ref else None
        rows.append((f"preload, always-cache hits / plain gets per second, {n} thread(s)", fmt(b), fmt(a), ratio(a, b),
                     ref_path))
    a = now.get("tcp_ns_per_get", {})
    b = ref.get("tcp_ns_per_get", {})
    sa = a["plain"] / a["preload_always_cache_hit"] if a.get("preload_always_cache_hit") else None
    sb = b["plain"] / b["preload_always_cache_hit"] if b.get("preload_always_cache_hit") else None
    rows.append(("preload over TCP, always-cache hit speed-up over plain", fmt(sb, 0), fmt(sa, 0), ratio(sa, sb), ref_path))


def coll(out, mpi, rows):
    now = load(os.path.join(out, f"coll-{mpi}_p2.json"))
    ref_path, ref = first(f"bench/coll/results/{mpi}_p2.json")
    if not now:
        return
    refs = {(r["op"], r["bytes"]): r for r in (ref or {}).get("results", [])}
    for op in ("alltoall", "allgather"):
        pairs = [(r["mpi_us"] / r["morton_us"], refs.get((op, r["bytes"])))
                 for r in now["results"] if r["op"] == op and r.get("morton_us")]
        g_now = geomean([a for a, _ in pairs])
        g_ref = geomean([b["mpi_us"] / b["morton_us"] for _, b in pairs if b and b.get("morton_us")])
        rows.append((f"collectives P = 2, {op}: Morton order's speed-up over MPI's (geomean over sizes)", fmt(g_ref),
                     fmt(g_now), ratio(g_now, g_ref), ref_path or "none"))


def apps(out, mpi, rows):
    rep = "report" if mpi == "openmpi" else "report-mpich"
    for app, what in (("lcc", "LCC run"), ("bh", "Barnes-Hut force phase")):
        np = 4 if os.path.exists(os.path.join(out, f"{app}-tcp-np4.json")) else 2
        now = load(os.path.join(out, f"{app}-tcp-np{np}.json"))
        ref_path, ref = first(f"bench/results/{rep}/raw/{app}-tcp-np{np}.json")
        if not now:
            continue
        refs = {r["config"]: r["speedup"] for r in (ref or {}).get("runs", [])}
        for r in now["runs"]:
            if r["config"] == "uncached":
                continue
            b = refs.get(r["config"])
            rows.append((f"{what}, {np} ranks, TCP: `{r['config']}` speed-up over uncached", fmt(b), fmt(r["speedup"]),
                         ratio(r["speedup"], b), ref_path or "none"))


def main():
    out, mpi = sys.argv[1], sys.argv[2]
    rows = []
    get_bench(out, mpi, rows)
    pmpi_bench(out, mpi, rows)
    coll(out, mpi, rows)
    apps(out, mpi, rows)
    run = open(os.path.join(out, "run.txt")).read().splitlines()[0] if os.path.exists(os.path.join(out, "run.txt")) else ""
    print(f"# Existing figures re-run ({run})\n")
    print("Each figure is clampi against its baseline in the same run (a speed-up, a ratio to plain, or a count);")
    print("`now / before` near 1: the figure stays where it is. Written by `bench/existing_figures.py`.\n")
    print("| figure | before | now | now / before | before: committed run |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


if __name__ == "__main__":
    main()
