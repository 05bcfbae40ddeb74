#!/usr/bin/env python3
"""Markdown tables from the coll_bench JSON in RESULTS_DIR: back to back (MPI library vs
clampi per block size, P, MPI), simulated nodes over TCP, cachegrind.
usage: tables.py RESULTS_DIR"""
import glob, json, math, os, sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")


def load(pattern):
    out = {}
    for f in sorted(glob.glob(os.path.join(d, pattern))):
        try:
            out[os.path.basename(f)[:-5]] = json.load(open(f))
        except ValueError:  # a run still writing it, or one that failed
            print(f"(skipped {os.path.basename(f)}: not complete)", file=sys.stderr)
    return out


def gmean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


b2b = load("b2b_*_p*.json")
for name, j in b2b.items():
    for op in ["alltoall", "allgather"]:
        rows = [r for r in j["results"] if r["op"] == op and r.get("clampi_us", 0) > 0]
        if not rows:
            continue
        print(f"\n{name}: {j['label']} {op} (µs per call, median of alternating trials) | bytes | MPI library | clampi | "
              f"MPI/clampi")
        print("---|---:|---:|---:|---:")
        for r in rows:
            print(f"| {r['bytes']} | {r['mpi_us']:.2f} | {r['clampi_us']:.2f} | **{r['mpi_us'] / r['clampi_us']:.2f}**")
        small = [r["mpi_us"] / r["clampi_us"] for r in rows if r["bytes"] < 16384]
        print(f"\ngeo-mean MPI/clampi over blocks < 16 KiB: **{gmean(small):.2f}x**")

nodes = load("nodes_*.json")
for name, j in nodes.items():
    for op in ["alltoall", "allgather"]:
        rows = [r for r in j["results"] if r["op"] == op]
        if not rows:
            continue
        print(f"\n{name}: {j['label']} {op} (µs) | bytes | MPI library | clampi hierarchical | MPI/clampi")
        print("---|---:|---:|---:|---:")
        for r in rows:
            print(f"| {r['bytes']} | {r['mpi_us']:.1f} | {r['clampi_us']:.1f} | **{r['mpi_us'] / r['clampi_us']:.2f}**")

cg = os.path.join(d, "cachegrind.json")
if os.path.exists(cg):
    j = json.load(open(cg))
    print(f"\ncachegrind, alltoall, LL {j.get('LL')}, D1 {j.get('D1')} | P | bytes | naive LL misses/byte | "
          f"Morton LL misses/byte | naive/Morton | naive D1/byte | Morton D1/byte")
    print("---|---:|---:|---:|---:|---:|---:|---:")
    res = j["results"]
    for r in res:
        if r["algo"] != "naive":
            continue
        m = next((x for x in res if x["algo"] == "morton" and x["P"] == r["P"] and x["bytes"] == r["bytes"]), None)
        if m is None:
            continue
        ratio = r["ll_miss_per_byte"] / m["ll_miss_per_byte"] if m["ll_miss_per_byte"] > 0 else float("nan")
        print(f"| {r['P']} | {r['bytes']} | {r['ll_miss_per_byte']:.4f} | {m['ll_miss_per_byte']:.4f} | **{ratio:.2f}** | "
              f"{r['d1_miss_per_byte']:.4f} | {m['d1_miss_per_byte']:.4f}")
