#!/usr/bin/env python3
"""Writes docs/performance.md from the results bench/run_all.sh regenerates: for each MPI
measured, the machine, then each part's figures with its baseline beside clampi (same run),
a plot where a curve says more than a table, and the results file every figure comes from.

usage: bench/performance.py ROOT
Reads bench/results/performance/<mpi>/ (get_bench-*, pmpi_bench-*, coll-*_p2, lcc-*, bh-*,
machine.txt, depth_preload-<mpi>-depth{0,1024}). Writes the
derived figures (ratios) to bench/results/performance/<mpi>/tables.txt, which the document
cites beside the raw files, and plots beside them (matplotlib, when installed).
"""
import json
import os
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERF = "bench/results/performance"
MPIS = ("openmpi", "mpich")
NAMES = {"openmpi": "Open MPI", "mpich": "MPICH"}


def load(rel):
    try:
        with open(os.path.join(ROOT, rel)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def exists(rel):
    return os.path.exists(os.path.join(ROOT, rel))


def f2(x):
    return f"{x:.2f}"


class Doc:
    def __init__(self):
        self.lines = []
        self.tables = {}  # mpi -> lines of tables.txt

    def add(self, *lines):
        self.lines.extend(lines)

    def table(self, mpi, header, rows, sources):
        """A Markdown table; its rows also go to tables.txt, which is cited with sources."""
        self.add("| " + " | ".join(header) + " |", "|" + "---|" * len(header))
        t = self.tables.setdefault(mpi, [])
        t.append("# " + " | ".join(header))
        for r in rows:
            self.add("| " + " | ".join(str(x) for x in r) + " |")
            t.append(" ".join(str(x).replace(" ", "_") for x in r))
        cited = ", ".join(f"`{s}`" for s in sources + [f"{PERF}/{mpi}/tables.txt"])
        self.add("", f"Source: {cited}.", "")


def plot(path, title, xlabel, ylabel, series, logy=False):
    """series: {label: [(x, y), ...]}; returns the path if a plot was written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for label, pts in series.items():
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(ROOT, path), dpi=90)
    plt.close(fig)
    return path


def machine(doc, mpi):
    rel = f"{PERF}/{mpi}/machine.txt"
    if not exists(rel):
        return
    facts = dict(line.split(": ", 1) for line in open(os.path.join(ROOT, rel)).read().splitlines() if ": " in line)
    doc.add(f"- **{NAMES[mpi]}**: {facts.get('mpi', '?')}; {facts.get('cpu', '?')}, {facts.get('cores', '?')} cores, "
            f"Linux {facts.get('kernel', '?')}; parts {facts.get('parts', '?')}, run {facts.get('date', '?')} at commit `{facts.get('commit', '?')}` "
            f"(load before the run: {facts.get('load', '?')}{'; QUICK run, not for figures' if facts.get('quick') == '1' else ''}). "
            f"Source: `{rel}`.")


def get_cache(doc, mpi):
    for tr, what in (("shm", "shared memory"), ("tcp", "TCP (UCX_TLS=tcp, no same-node shortcut)")):
        rel = f"{PERF}/{mpi}/get_bench-{mpi}-{tr}.json"
        d = load(rel)
        if not d:
            continue
        doc.add(f"#### {NAMES[mpi]}, {what}", "")
        patterns = list(dict.fromkeys(r["pattern"] for r in d["results"]))
        by = {(r["pattern"], r["size"]): r for r in d["results"]}
        rows = []
        for size in sorted({r["size"] for r in d["results"]}):
            hit = by.get(("hit", size))
            rows.append([size, f"{hit['mpi_us']:.4f}" if hit else "–"] +
                        [f2(by[(p, size)]["speedup"]) if (p, size) in by else "–" for p in patterns])
        doc.table(mpi, ["bytes", "MPI get µs"] + [f"`{p}` speed-up" for p in patterns], rows, [rel])
        series = {}
        for r in d["results"]:
            series.setdefault(r["pattern"], []).append((r["size"], r["speedup"]))
        png = plot(f"{PERF}/{mpi}/get_cache-{tr}.png", f"get cache, {NAMES[mpi]}, {tr}", "bytes per get",
                   "MPI time / clampi time", series, logy=True)
        if png:
            doc.add(f"![get cache speed-up, {NAMES[mpi]}, {tr}](../{png})", "")


def preload(doc, mpi):
    rel = f"{PERF}/{mpi}/pmpi_bench-{mpi}.json"
    d = load(rel)
    if not d:
        return
    doc.add(f"#### {NAMES[mpi]}", "")
    ns, ins = d.get("overhead_ns_per_get", {}), d.get("instructions_per_get", {})
    plain_ns = ns.get("plain")
    rows = []
    for k, name in (("plain", "plain MPI"), ("preload_mode_off", "preloaded, CLAMPI_MODE=off"),
                    ("preload_window_off", "preloaded, window mode off"),
                    ("preload_always_cache_hit", "preloaded, always-cache hit")):
        if k in ns or k in ins:
            rows.append((name, f2(ns[k]) if k in ns else "–", f2(ns[k] / plain_ns) if k in ns and plain_ns else "–",
                         f"{ins[k]:.1f}" if k in ins else "–"))
    doc.table(mpi, ["side", "ns per get", "/ plain", "instructions per get"], rows, [rel])
    rows = [(t["threads"], f2(t["plain_mgets_per_s"]), f2(t["preload_hit_mgets_per_s"]),
             f2(t["preload_hit_mgets_per_s"] / t["plain_mgets_per_s"])) for t in d.get("threads", [])]
    if rows:
        doc.add("Gets per second with threads (always-cache hits against plain gets):", "")
        doc.table(mpi, ["threads", "plain Mgets/s", "preloaded hits Mgets/s", "ratio"], rows, [rel])
    tcp = d.get("tcp_ns_per_get", {})
    if tcp.get("plain") and tcp.get("preload_always_cache_hit"):
        doc.add("Over TCP:", "")
        doc.table(mpi, ["side", "ns per get", "plain / side"],
                  [(k, f2(v), f2(tcp["plain"] / v)) for k, v in tcp.items()], [rel])


def coll(doc, mpi):
    rel = f"{PERF}/{mpi}/coll-{mpi}_p2.json"
    d = load(rel)
    if not d:
        return
    doc.add(f"#### {NAMES[mpi]}, {d.get('P', 2)} ranks on {d.get('cpus', '?')} cores", "")
    rows, series = [], {}
    for r in d["results"]:
        if not r.get("morton_us"):
            continue
        s = r["mpi_us"] / r["morton_us"]
        rows.append((r["op"], r["bytes"], f"{r['mpi_us']:.3f}", f"{r['morton_us']:.3f}", f2(s)))
        series.setdefault(r["op"], []).append((r["bytes"], s))
    doc.table(mpi, ["collective", "bytes per block", "MPI µs", "clampi (Morton) µs", "speed-up"], rows, [rel])
    png = plot(f"{PERF}/{mpi}/coll_p2.png", f"collectives, {NAMES[mpi]}, 2 ranks", "bytes per block",
               "MPI time / clampi time", series)
    if png:
        doc.add(f"![collectives speed-up, {NAMES[mpi]}](../{png})", "")


def apps(doc, mpi):
    rows, sources, nranks = [], [], None
    for app, what in (("lcc", "LCC"), ("bh", "Barnes-Hut")):
        for np in (4, 2):
            rel = f"{PERF}/{mpi}/{app}-tcp-np{np}.json"
            d = load(rel)
            if d:
                nranks = np
                break
        if not d:
            continue
        sources.append(rel)
        for r in d["runs"]:
            rows.append((what, r["config"], f"{r['median']:.4f}", f2(r["speedup"])))
    if rows:
        doc.add(f"#### {NAMES[mpi]}, {nranks} ranks over TCP", "")
        doc.table(mpi, ["application", "configuration", "median s", "speed-up over uncached"], rows, sources)


def match(doc, mpi):
    rows, sources = [], []
    for depth in (0, 1024):
        rel = f"{PERF}/{mpi}/depth_preload-{mpi}-depth{depth}.json"
        d = load(rel)
        if not d:
            continue
        sources.append(rel)
        pts = {p["side"]: p for p in d["points"]}
        plain = pts.get("plain")
        for side, p in pts.items():
            if side == "plain":
                continue
            carrier = side.split("/")[1].upper() if "/" in side else "default (MPI)"
            rows.append((depth, f"CLAMPI_MATCH={side.split('/')[0]}, carrier {carrier}", f2(plain["us_per_roundtrip"]),
                         f2(p["us_per_roundtrip"]), f2(p["speedup"])))
    if rows:
        doc.add(f"#### {NAMES[mpi]}, 2 ranks, shared memory", "")
        doc.table(mpi, ["receives ahead", "clampi", "plain µs per round trip", "clampi µs", "plain / clampi"], rows,
                  sources)


PARTS = [
    ("The get cache", "A program's `MPI_Get` against clampi's cache on the same window, 2 ranks (`bench/get_bench.c`): "
     "`hit` re-reads cached bytes, `miss` reads bytes never read before, `skewed` a hot set among cold reads, "
     "`subrange` parts of cached ranges. How to turn it on and what it costs: [get-cache.md](get-cache.md).", get_cache),
    ("The preload", "The cost of the preload on a get it passes to MPI, and what a cached get costs "
     "(`bench/pmpi_bench.c`, 2 ranks, shared memory; instructions counted with callgrind). "
     "How to preload: [preload.md](preload.md).", preload),
    ("Collectives", "`MPI_Alltoall` and `MPI_Allgather` on `MPI_Alloc_mem` buffers in the node-shared heap, "
     "Morton order against the MPI's own (`bench/coll/coll_bench.c`). When it pays: [coll.md](coll.md).", coll),
    ("Applications", "LCC (graph clustering coefficient) and Barnes-Hut (force phase) over TCP, the get "
     "cache with a fixed and an adaptive configuration against uncached gets (`apps/`). 4 ranks; 2 on MPICH, "
     "whose passive-target RMA with more ranks than cores spins for milliseconds per get "
     "([platforms.md](platforms.md)).", apps),
    ("Matching", "A 1-byte `MPI_Send`/`MPI_Recv` ping-pong of an unmodified program (`bench/match/pingpong.c`) "
     "with 0 and 1,024 never-matching `MPI_ANY_SOURCE` receives posted ahead, plain against "
     "`CLAMPI_MATCH=lla+hot` on each carrier. When it pays: [matching.md](matching.md).", match),
]


def main():
    doc = Doc()
    doc.add("# Performance", "",
            "What clampi costs and what it gains, each figure measured with its baseline in the same run on the "
            "machine named below. Regenerate everything with `bench/run_all.sh BUILD_DIR` (one MPI per build; "
            "`bench/run_all.sh BUILD_DIR get coll` for some parts), on a quiet machine; this page is written "
            "by `bench/performance.py` from the results files it names. Figures between emulated nodes are in "
            "[across-nodes.md](across-nodes.md) (`bench/run_all.sh BUILD_DIR cluster`). The figures are those of "
            "the commit named under Machine: a part changed since has newer figures, with their sources, on "
            "its own page ([get-cache.md](get-cache.md), [coll.md](coll.md), [matching.md](matching.md)).", "",
            "## Machine", "")
    measured = [m for m in MPIS if exists(f"{PERF}/{m}/machine.txt")]
    for m in measured:
        machine(doc, m)
    if not measured:
        doc.add("No run yet: `bench/run_all.sh BUILD_DIR`.")
    doc.add("")
    for title, intro, fn in PARTS:
        doc.add(f"## {title}", "", intro, "")
        before = len(doc.lines)
        for m in measured:
            fn(doc, m)
        if len(doc.lines) == before:
            doc.add("Not measured in the last run.", "")
    for m, lines in doc.tables.items():
        with open(os.path.join(ROOT, PERF, m, "tables.txt"), "w") as f:
            f.write(f"# docs/performance.md's tables for {NAMES[m]}, written by bench/performance.py\n")
            f.write("\n".join(lines) + "\n")
    text = "\n".join(doc.lines).rstrip() + "\n"
    with open(os.path.join(ROOT, "docs", "performance.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
