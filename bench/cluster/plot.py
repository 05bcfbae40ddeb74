#!/usr/bin/env python3
"""Draws figures.sh's results across emulated nodes: one PNG per MPI (cluster-MPI.png) with
clampi's speed-up over the MPI's own (baseline time / clampi time; above 1: clampi faster)
for the hierarchical collectives, the get cache (hit, miss) and matched ping-pong.
usage: plot.py RESULTS_DIR"""
import json, os, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")


def load(name):
    p = os.path.join(d, name)
    return json.load(open(p)) if os.path.exists(p) else None


for mpi in ("openmpi", "mpich"):
    coll, get, match = load(f"coll_2x2-{mpi}.json"), load(f"get_2x1-{mpi}.json"), load(f"match_pingpong_2x1-{mpi}.json")
    if not (coll or get or match):
        continue
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    if coll:
        for op, style in (("alltoall", "o-"), ("allgather", "s-")):
            rows = [r for r in coll["results"] if r["op"] == op]
            ax[0].plot([r["bytes"] for r in rows], [r["mpi_us"] / r["clampi_us"] for r in rows], style, label=op)
            if rows and "flags_us" in rows[0]:  # the floor: flags on the node, the leaders' bare exchange
                ax[0].plot([r["bytes"] for r in rows], [r["mpi_us"] / r["flags_us"] for r in rows], style[0] + ":",
                           color=ax[0].lines[-1].get_color(), label=op + " floor")
        ax[0].set_title("hierarchical collectives, 2 nodes x 2 ranks")
        ax[0].set_xlabel("block bytes")
    if get:
        for pat, style in (("hit", "o-"), ("miss", "s-"), ("skewed", "^-")):
            rows = [r for r in get["results"] if r["pattern"] == pat]
            ax[1].plot([r["size"] for r in rows], [r["speedup"] for r in rows], style, label=pat)
        ax[1].set_yscale("log")
        ax[1].set_title("get cache, 2 nodes x 1 rank")
        ax[1].set_xlabel("get bytes")
    if match:
        ax[2].bar([str(r["depth"]) for r in match], [r["plain_us"] / r["clampi_us"] for r in match])
        ax[2].set_title("CLAMPI_MATCH ping-pong, 2 nodes x 1 rank")
        ax[2].set_xlabel("queue depth")
    for i, a in enumerate(ax):
        a.axhline(1.0, color="gray", lw=0.8)
        a.set_ylabel("speed-up over the MPI (x)")
        if i < 2:
            a.set_xscale("log", base=2)
            if a.lines:
                a.legend()
    fig.suptitle(f"clampi across emulated nodes, {mpi} (TCP between nodes, 2 cores shared)")
    fig.tight_layout()
    out = os.path.join(d, f"cluster-{mpi}.png")
    fig.savefig(out, dpi=90)
    print("plot:", out)
