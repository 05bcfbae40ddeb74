#!/usr/bin/env python3
"""Summary and plot of run_pages_ahead.sh: DIR/PREFIX-<name>.json -> stdout (wall and CPU
slowdowns over plain, first-touch faults, pages first-touched in runs opened ahead) and
DIR/PREFIX.png. PREFIX: pages_opened_ahead (the library preloaded, the default) or
pages_opened_ahead_cli (through `clampi-locality run --sample`)."""
import glob, json, os, sys

d = sys.argv[1]
prefix = sys.argv[2] if len(sys.argv) > 2 else "pages_opened_ahead"
how = "clampi-locality run --sample" if prefix.endswith("_cli") else "the sampler preloaded"
rows = []
for f in sorted(glob.glob(os.path.join(d, prefix + "-*.json"))):
    j = json.load(open(f))
    c, cc = j["sampler"]["cost"], j["compare"]["sampler"]["cost"]
    rows.append({"name": j["label"], "plain_wall_s": j["median"]["plain"][0],
                 "ahead_wall": j["slowdown_wall"], "ahead_cpu": j["slowdown_cpu"],
                 "per_page_wall": j["compare"]["slowdown_wall"], "per_page_cpu": j["compare"]["slowdown_cpu"],
                 "ahead_faults": c.get("ft_faults", 0), "ahead_pages": c.get("lease_pages_touched", 0),
                 "per_page_faults": cc.get("ft_faults", 0), "load": j["load_average"][0], "date": j["date"]})
print("# bench/locality_sample/run_pages_ahead.sh (%s): medians over the trials, plain / sampled (pages opened "
      "ahead, CLAMPI_LOCALITY_SAMPLE_AHEAD=256) / sampled with the default (0) in one rotation" % how)
print("%-14s %8s | %-21s | %-21s | %s" % ("program", "plain s", "ahead: wall, cpu", "per page: wall, cpu",
                                          "first-touch faults ahead (pages in runs) / per page"))
for r in rows:
    print("%-14s %8.3f | %5.2fx %5.2fx          | %5.2fx %5.2fx          | %d (+%d) / %d" %
          (r["name"], r["plain_wall_s"], r["ahead_wall"], r["ahead_cpu"], r["per_page_wall"], r["per_page_cpu"],
           r["ahead_faults"], r["ahead_pages"], r["per_page_faults"]))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, ax = plt.subplots(figsize=(7, 3.6))
x = range(len(rows))
ax.bar([i - 0.2 for i in x], [r["per_page_wall"] for r in rows], 0.4, label="one fault per page (the default)")
ax.bar([i + 0.2 for i in x], [r["ahead_wall"] for r in rows], 0.4, label="pages opened ahead (AHEAD=256)")
ax.axhline(1.3, color="k", lw=0.8, ls="--")
ax.set_xticks(list(x))
ax.set_xticklabels([r["name"] for r in rows], fontsize=8)
ax.set_ylabel("wall-clock / plain")
ax.set_title("%s: slowdown over plain (2 threads)" % how, fontsize=9)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(d, prefix + ".png"), dpi=110)
