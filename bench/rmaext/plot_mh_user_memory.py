#!/usr/bin/env python3
"""Tables, JSON and a plot of mh_user_memory runs (one directory of <mpi>-<transport>.txt):
   plot_mh_user_memory.py DIR   -> DIR/results.json, DIR/speedup.png, a summary on stdout"""
import glob, json, os, sys

d = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(d, "*-*.txt"))):
    mpi, transport = os.path.basename(f)[:-4].split("-", 1)
    for line in open(f):
        p = line.split()
        if len(p) != 6 or not p[3].startswith("mpi_dynamic_us="):
            continue
        kv = dict(x.split("=") for x in p[3:])
        rows.append({"mpi": mpi, "transport": transport, "memory": p[0], "op": p[1], "size": int(p[2]),
                     "mpi_dynamic_us": float(kv["mpi_dynamic_us"]), "memhandle_us": float(kv["memhandle_us"]),
                     "speedup": float(kv["speedup"])})
costs = []  # the owner's create and release, and a handle window per exchange, one run each
for f in sorted(glob.glob(os.path.join(d, "*-*.txt"))):
    mpi, transport = os.path.basename(f)[:-4].split("-", 1)
    for line in open(f):
        p = line.split()
        if len(p) == 6 and p[1] == "handle":
            kv = dict(x.split("=") for x in p[2:])
            costs.append({"mpi": mpi, "transport": transport, "memory": p[0], "bytes": int(kv["bytes"]),
                          "create_us": float(kv["create_us"]), "release_us": float(kv["release_us"]),
                          "window_per_exchange_us": float(kv["window_per_exchange_us"])})
json.dump({"op_flush": rows, "handle_costs": costs}, open(os.path.join(d, "results.json"), "w"), indent=1)
groups = sorted({(r["mpi"], r["transport"], r["memory"]) for r in rows})
print("mpi transport memory: speedup (MPI dynamic window us / memhandle us), min-max over put and get, 8 B-4 KiB")
for g in groups:
    s = [r["speedup"] for r in rows if (r["mpi"], r["transport"], r["memory"]) == g]
    h = [r["memhandle_us"] for r in rows if (r["mpi"], r["transport"], r["memory"]) == g]
    m = [r["mpi_dynamic_us"] for r in rows if (r["mpi"], r["transport"], r["memory"]) == g]
    print(f"{g[0]} {g[1]} {g[2]}: {min(s):.2f}-{max(s):.2f}x (memhandle {min(h):.3f}-{max(h):.3f} us, "
          f"MPI {min(m):.3f}-{max(m):.3f} us)")
for key in ("create_us", "release_us", "window_per_exchange_us"):
    for small in (False, True):
        v = [c[key] for c in costs
             if (c["memory"] in ("malloc_small", "malloc_4k")) == small and c["transport"] != "nodes"]
        if v:
            print(f"{key} ({'small heap blocks' if small else 'large blocks and stack'}, one host): {min(v):.1f}-{max(v):.1f}")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
for ax, op in zip(axes, ("put", "get")):
    for g in groups:
        pts = sorted((r["size"], r["speedup"]) for r in rows if (r["mpi"], r["transport"], r["memory"]) == g and r["op"] == op)
        color = {"malloc": "C0", "calloc": "C1", "stack": "C2", "malloc_small": "C3", "malloc_4k": "C5"}.get(g[2], "C4")
        style = {"shm": "-", "tcp": "--", "nodes": ":"}.get(g[1], "-.")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color, linestyle=style,
                marker="o" if g[0] == "openmpi" else "s", label=" ".join(g))
    ax.axhline(1.5, color="gray", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes")
    ax.set_title(f"{op} + flush: MPI dynamic window time / memory-handle time")
axes[0].set_ylabel("speedup (gray line: 1.5x)")
axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1, 0.5))
fig.tight_layout()
fig.savefig(os.path.join(d, "speedup.png"), dpi=110)
