#!/usr/bin/env python3
"""Plots for bench/match/run.sh: engine cycles vs depth, cachegrind misses, depth bench."""
import glob, json, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

out = sys.argv[1] if len(sys.argv) > 1 else "results"
kinds = ["list", "lla", "hot", "lla+hot", "bins"]

def load(name):
    p = os.path.join(out, name)
    return json.load(open(p))["points"] if os.path.exists(p) else None

pts = load("engine.json")
if pts:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, clear in zip(axes, [0, 1]):
        for k in kinds:
            xs = [(p["D"], p["cycles"]) for p in pts if p["kind"] == k and p["clear"] == clear and p["threads"] == 1]
            if xs:
                ax.plot([x for x, _ in xs], [y for _, y in xs], marker="o", label=k)
        ax.set_xscale("symlog", linthresh=16); ax.set_yscale("log")
        ax.set_xlabel("search depth D"); ax.set_ylabel("cycles per match (median)")
        ax.set_title("engine, 1 thread, " + ("caches cleared" if clear else "warm"))
        ax.legend()
    fig.tight_layout(); fig.savefig(os.path.join(out, "engine.png"), dpi=110)

pts = load("cachegrind.json")
if pts:
    fig, ax = plt.subplots(figsize=(6, 4))
    for k in kinds:
        # minus the clearing walk's own misses (64 MiB / 64 B lines)
        xs = [(p["D"], p["d1_misses"] - (1 << 20)) for p in pts if p["kind"] == k and p["clear"] == 1]
        if xs:
            ax.plot([x for x, _ in xs], [max(y, 0.1) for _, y in xs], marker="o", label=k)
    ax.set_xscale("symlog", linthresh=16); ax.set_yscale("log")
    ax.set_xlabel("search depth D"); ax.set_ylabel("D1 misses per search (cachegrind; hot: incl. the toucher)")
    ax.set_title("engine, caches cleared"); ax.legend(); fig.tight_layout()
    fig.savefig(os.path.join(out, "cachegrind.png"), dpi=110)

for f in sorted(glob.glob(os.path.join(out, "*-depth-*.json"))):
    pts = json.load(open(f))["points"]
    dp = [p for p in pts if p["test"] == "depth"]
    if not dp:
        continue
    modes = list(dict.fromkeys(p["mode"] for p in dp))
    combos = [(a, s, c) for a in ["spec", "any"] for s in [1, 4096] for c in [0, 1]]
    combos = [x for x in combos if any(p["ahead"] == x[0] and p["size"] == x[1] and p["clear"] == x[2] for p in dp)]
    fig, axes = plt.subplots(2, (len(combos) + 1) // 2, figsize=(4 * ((len(combos) + 1) // 2), 7), squeeze=False)
    for ax, (a, s, c) in zip(axes.flat, combos):
        for m in modes:
            xs = [(p["D"], p["us"]) for p in dp if p["mode"] == m and p["ahead"] == a and p["size"] == s and p["clear"] == c]
            ax.plot([x for x, _ in xs], [y for _, y in xs], marker="o", label=("MPI library" if m == "mpi" else m),
                    linestyle="--" if m == "mpi" else "-")
        ax.set_xscale("symlog", linthresh=16); ax.set_yscale("log")
        ax.set_title(f"{'MPI_ANY_SOURCE' if a == 'any' else 'specific-source'} ahead, {s} B, {'cleared' if c else 'warm'}", fontsize=9)
        ax.set_xlabel("D"); ax.set_ylabel("us per message")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(os.path.basename(f)[:-5]); fig.tight_layout()
    fig.savefig(f[:-5] + ".png", dpi=100)
print("plots written to", out)
