#!/usr/bin/env python3
"""Geometric means over blocks < 16 KiB of naive/Morton and MPI/Morton for the coll_bench
results openmpi_p*.json and mpich_p*.json in RESULTS_DIR (the "geo-mean" lines that
bench/coll/results/results.md cites). usage: geomeans.py [RESULTS_DIR] > geomeans.txt"""
import glob, json, math, os, sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")


def gmean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


files = glob.glob(os.path.join(d, "openmpi_p*.json")) + glob.glob(os.path.join(d, "mpich_p*.json"))
for f in sorted(files, key=lambda f: (os.path.basename(f).split("_")[0], int(f.split("_p")[-1][:-5]))):
    j = json.load(open(f))
    for op in ("alltoall", "allgather"):
        rows = [r for r in j["results"] if r["op"] == op and r["bytes"] < 16384 and r["morton_us"] > 0]
        if not rows:
            continue
        nm = gmean([r["naive_us"] / r["morton_us"] for r in rows])
        mm = gmean([r["mpi_us"] / r["morton_us"] for r in rows])
        print(f"{os.path.basename(f)[:-5]} {op}: geo-mean over blocks < 16 KiB "
              f"naive/Morton {nm:.2f} MPI/Morton {mm:.2f}")
