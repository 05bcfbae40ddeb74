#!/usr/bin/env python3
"""PNGs for latency_preload.sh and depth_preload.sh: plain MPI against the preload, per JSON.

usage: plot_preload.py RESULT.json [...]   (writes RESULT.png beside each)"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def latency(d, ax):
    pts = d["points"]
    xs = [max(p["size"], 1) for p in pts]
    ax.plot(xs, [p["plain_us"] for p in pts], "o-", label="plain %s" % d["mpi"])
    ax.plot(xs, [p["preload_us"] for p in pts], "s-", label="preloaded, CLAMPI_MATCH=%s" % d["match"])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes; 0 drawn at 1)")
    ax.set_ylabel("osu_latency (us, median of %d trials)" % d["trials"])
    ax.set_title("osu_latency, %s, %s" % (d["mpi"], d.get("transport", "shm")))
    ax.legend()


def depth(d, ax):
    pts = d["points"]
    ax.bar([p["side"] for p in pts], [p["us_per_roundtrip"] for p in pts],
           color=["grey"] + ["C0"] * (len(pts) - 1))
    for i, p in enumerate(pts):
        ax.text(i, p["us_per_roundtrip"], "%.2fx" % p["speedup"], ha="center", va="bottom")
    ax.set_ylabel("us per 1 B round trip (median of %d trials)" % d["trials"])
    ax.set_title("%d ANY_SOURCE receives ahead, %s, %s (label: speed-up over plain)" %
                 (d["depth"], d["mpi"], d.get("transport", "shm")))


for path in sys.argv[1:]:
    d = json.load(open(path))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    (latency if d["bench"] == "osu_latency_preload" else depth)(d, ax)
    fig.tight_layout()
    fig.savefig(path[:-5] + ".png", dpi=90)
    plt.close(fig)
