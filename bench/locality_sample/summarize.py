#!/usr/bin/env python3
"""Derived figures of run_production.sh's results (the ones docs/locality-sampler.md quotes):
extra time, handler / mprotect / unwinding / addr2line seconds, ratios.

  summarize.py [RESULTS_DIR [SUFFIX]] > RESULTS_DIR/production_summary[SUFFIX].txt
SUFFIX: run_production.sh's (production_<name>SUFFIX.json)."""
import json, os, sys

res = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
suffix = sys.argv[2] if len(sys.argv) > 2 else ""
print("# derived from production_{advect1d,lcc,lulesh}%s.json, those present (medians; times in s)" % suffix)
for n in ("advect1d", "lcc", "lulesh"):
    path = os.path.join(res, "production_%s%s.json" % (n, suffix))
    if not os.path.exists(path):
        continue
    d = json.load(open(path))
    med, c = d["median"], d["sampler"]["cost"]
    print("%s: extra wall %.2f s, extra cpu %.2f s" % (n, med["sample"][0] - med["plain"][0],
                                                       med["sample"][1] - med["plain"][1]))
    h = (c["ft_handler_ns"] + c["sample_handler_ns"]) / 1e9
    print("%s: in the handlers %.2f s (first touch %.2f, samples %.3f), of which mprotect opening pages %.2f s, "
          "unwinding %.3f s; sampler thread re-protecting %.2f s; addr2line %.2f s, CSV %.2f s"
          % (n, h, c["ft_handler_ns"] / 1e9, c["sample_handler_ns"] / 1e9, c["open_mprotect_ns"] / 1e9,
             c["unwind_ns"] / 1e9, c["arm_mprotect_ns"] / 1e9, c["resolve_ns"] / 1e9, c["output_csv_ns"] / 1e9))
    if c.get("open_mprotects"):
        print("%s: mprotect opening a page %.0f us on average (%d calls)"
              % (n, c["open_mprotect_ns"] / 1e3 / c["open_mprotects"], c["open_mprotects"]))
    print("%s: plain %.1f s / %.2f s / %.0f MB, sample %.1f s / %.2f s / %.0f MB, ratios %.2fx / %.2fx / %.2fx"
          % (n, med["plain"][0], med["plain"][1], med["plain"][2], med["sample"][0], med["sample"][1],
             med["sample"][2], d["slowdown_wall"], d["slowdown_cpu"], d["memory_ratio"]))
