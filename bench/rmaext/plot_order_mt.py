#!/usr/bin/env python3
"""Per-put latency against threads (the Quo Vadis RMA paper's Fig. 11 pattern) from
rmaext_bench order_mt JSON lines: one panel per size, a line per (scope, style), the
median of the runs in the file.   plot_order_mt.py FILE.jsonl -> FILE.png"""
import collections, json, statistics, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

f = sys.argv[1]
rows = [json.loads(l) for l in open(f) if l.startswith("{")]
t = collections.defaultdict(list)
for r in rows:
    t[(r["size"], r["scope"], r["style"], r["threads"])].append(r["lat_us"])
sizes = sorted({r["size"] for r in rows})
lines = sorted({(r["scope"], r["style"]) for r in rows})
fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4.2))
for ax, size in zip(axes, sizes):
    for scope, style in lines:
        th = sorted({k[3] for k in t if k[0] == size and k[1] == scope and k[2] == style})
        ys = [statistics.median(t[(size, scope, style, x)]) for x in th]
        ax.plot(th, ys, marker="o", label=scope.replace("clampi_", "") + " " + style,
                linestyle="--" if style == "put_flush" else "-")
    ax.set_yscale("log")
    ax.set_xticks([1, 2, 4])
    ax.set_xlabel("threads of rank 0")
    ax.set_ylabel("us per put")
    ax.set_title("%d B puts, TCP" % size)
    ax.grid(True, which="both", alpha=0.3)
axes[0].legend(fontsize=7)
fig.tight_layout()
out = f.rsplit(".", 1)[0] + ".png"
fig.savefig(out, dpi=110)
print(out)
