#!/usr/bin/env python3
"""Draws the coll_bench results: one PNG per MPI and process count with latency per block
size (MPI library, naive shared heap, Morton, staged) for Alltoall and Allgather, a
speed-up summary, and the cachegrind misses per byte (naive vs Morton).
usage: plot.py RESULTS_DIR"""
import glob, json, os, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
STYLE = {"mpi": ("MPI library", "tab:gray", "s"), "naive": ("naive shared heap", "tab:orange", "v"),
         "morton": ("Morton (clampi)", "tab:blue", "o"), "staged": ("Morton, staged (buffers outside heap)", "tab:green", "^"),
         "clampi": ("CMPI_ (clampi, default path)", "tab:red", "D")}

runs = []
for f in sorted(glob.glob(os.path.join(d, "*_p*.json"))):
    j = json.load(open(f))
    name = os.path.basename(f)[:-5]
    runs.append((name, j))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, op in zip(axes, ["alltoall", "allgather"]):
        rows = [r for r in j["results"] if r["op"] == op]
        if not rows:
            continue
        x = [r["bytes"] for r in rows]
        for v, (lab, col, mk) in STYLE.items():
            if v + "_us" in rows[0]:
                ax.plot(x, [r[v + "_us"] for r in rows], marker=mk, color=col, label=lab)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("block size (bytes)")
        ax.set_ylabel("median latency (us)")
        ax.axvline(16384, color="k", lw=0.5, ls=":")
        ax.set_title(f"MPI_{op.capitalize()}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ov = "OVERSUBSCRIBED" if j["oversubscribed"] else "not oversubscribed"
    fig.suptitle(f"{name}: P={j['P']} on {j['cpus']} CPUs ({ov}) - {j['mpi'][:40]}")
    fig.tight_layout()
    fig.savefig(os.path.join(d, name + ".png"), dpi=110)
    plt.close(fig)

# speed-up summary: naive/morton and mpi/morton for alltoall, every run with those variants
runs = [(n, j) for n, j in runs if j["results"] and "naive_us" in j["results"][0] and "morton_us" in j["results"][0]]
if runs:
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, j in runs:
        rows = [r for r in j["results"] if r["op"] == "alltoall"]
        x = [r["bytes"] for r in rows]
        lab = f"{name} ({'oversub' if j['oversubscribed'] else 'no oversub'})"
        axes[0].plot(x, [r["naive_us"] / r["morton_us"] for r in rows], marker="o", label=lab)
        axes[1].plot(x, [r["mpi_us"] / r["morton_us"] for r in rows], marker="o", label=lab)
    for ax, t, tgt in zip(axes, ["naive / Morton (alltoall)", "MPI library / Morton (alltoall)"], [1.4, 2.0]):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.axhline(tgt, color="r", lw=0.8, ls="--", label=f"target {tgt}x (blocks < 16 KiB)")
        ax.axvline(16384, color="k", lw=0.5, ls=":")
        ax.set_xlabel("block size (bytes)")
        ax.set_ylabel("speed-up of Morton")
        ax.set_title(t)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "speedup_alltoall.png"), dpi=110)
    plt.close(fig)

cg = os.path.join(d, "cachegrind.json")
if os.path.exists(cg):
    j = json.load(open(cg))
    Ps = sorted({r.get("P", j.get("P")) for r in j["results"]})
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for P, col in zip(Ps, ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]):
        rows = lambda a: [r for r in j["results"] if r["algo"] == a and r.get("P", j.get("P")) == P]
        nv, mo = rows("naive"), rows("morton")
        axes[0].plot([r["bytes"] for r in nv], [r["ll_miss_per_byte"] for r in nv], ls="--", marker="v", color=col,
                     label=f"naive P={P}")
        axes[0].plot([r["bytes"] for r in mo], [r["ll_miss_per_byte"] for r in mo], marker="o", color=col,
                     label=f"Morton P={P}")
        axes[1].plot([r["bytes"] for r in mo], [a["ll_miss_per_byte"] / b["ll_miss_per_byte"] if b["ll_miss_per_byte"] > 0
                                               else float("nan") for a, b in zip(nv, mo)], marker="o", color=col, label=f"P={P}")
    axes[0].set_yscale("log")
    axes[0].set_title(f"LL misses per byte copied, alltoall (cachegrind, LL {j.get('LL', j.get('LL_bytes'))})")
    axes[1].axhline(1.4, color="r", lw=0.8, ls="--", label="target 1.4x (blocks < 16 KiB, P >= 16)")
    axes[1].axhline(1.0, color="k", lw=0.8)
    axes[1].set_title("naive / Morton LL misses")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.axvline(16384, color="k", lw=0.5, ls=":")
        ax.set_xlabel("block size (bytes)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "cachegrind.png"), dpi=110)
    plt.close(fig)

# back to back: MPI library time / clampi time per block size, one line per run
b2b = {os.path.basename(f)[4:-5]: json.load(open(f)) for f in sorted(glob.glob(os.path.join(d, "b2b_*_p*.json")))}
if b2b:
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), squeeze=False)
    for col, op in enumerate(["alltoall", "allgather"]):
        ax = axes[0][col]
        for name, j in b2b.items():
            rows = [r for r in j["results"] if r["op"] == op and r.get("clampi_us", 0) > 0]
            ax.plot([r["bytes"] for r in rows], [r["mpi_us"] / r["clampi_us"] for r in rows], marker="o", label=name)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.axhline(2.0, color="r", lw=0.6, ls="--")
        ax.axvline(16384, color="k", lw=0.5, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(op, fontsize=9)
        ax.set_xlabel("block size (bytes)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("back to back, 8 rotating buffer sets: MPI library time / clampi time (> 1: clampi faster)")
    fig.tight_layout()
    fig.savefig(os.path.join(d, "b2b_speedup.png"), dpi=110)
    plt.close(fig)
print("plots written to", d)
