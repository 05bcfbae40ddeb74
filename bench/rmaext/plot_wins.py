#!/usr/bin/env python3
"""put/get + flush latency against size from rmaext_bench wins runs (one directory holding
ompi_shm_wins.jsonl and mpich_shm_wins.jsonl): memory-handle windows (heap and malloc
memory), allocated and dynamic UCX windows, both MPIs' allocated and dynamic windows.
   plot_wins.py DIR   -> DIR/wins.png"""
import json, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

d = sys.argv[1]
rows = [json.loads(l) for f in ("ompi_shm_wins.jsonl", "mpich_shm_wins.jsonl") if os.path.exists(os.path.join(d, f))
        for l in open(os.path.join(d, f)) if l.startswith("{")]
rows = [r for r in rows if r.get("exp") == "wins"]
series = [("openmpi", "ucx_memhandle_heap", "clampi memhandle (CMPI_Alloc_mem memory)"),
          ("openmpi", "ucx_memhandle_heap_create", "clampi memhandle, window per exchange"),
          ("openmpi", "ucx_memhandle", "clampi memhandle (malloc memory)"),
          ("openmpi", "ucx_alloc", "clampi UCX allocated window"),
          ("openmpi", "mpi_dynamic", "Open MPI dynamic window"),
          ("mpich", "mpi_dynamic", "MPICH dynamic window")]
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
for ax, op in zip(axes, ("put", "get")):
    for mpi, var, label in series:
        pts = sorted((r["size"], r["lat_us"]) for r in rows if r["mpi"] == mpi and r["variant"] == var and r["op"] == op)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes")
    ax.set_ylabel("us (op + flush)")
    ax.set_title(op + " + flush, shared memory, 2 ranks")
    ax.grid(True, which="both", alpha=0.3)
axes[0].legend(fontsize=7)
fig.tight_layout()
fig.savefig(os.path.join(d, "wins.png"), dpi=110)
print(os.path.join(d, "wins.png"))
