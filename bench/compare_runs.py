#!/usr/bin/env python3
"""Side by side: the same benchmark JSONs from two trees (e.g. before and after a redesign).

usage: bench/compare_runs.py DIR_A DIR_B   (each holding pmpi_bench-*.json and get_bench-*.json)
Prints, per figure, A, B and B/A; pmpi_bench runs numbered -1, -2, ... are averaged.
"""
import glob
import json
import os
import sys


def load_pmpi(d):
    runs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(d, "pmpi_bench-*.json")))]
    out = {}
    for r in runs:
        for sect in ("overhead_ns_per_get", "instructions_per_get", "tcp_ns_per_get"):
            for k, v in r[sect].items():
                out.setdefault(f"{sect}.{k}", []).append(v)
        for t in r["threads"]:
            out.setdefault(f"hit_mgets_per_s.threads={t['threads']}", []).append(t["preload_hit_mgets_per_s"])
    return {k: sum(v) / len(v) for k, v in out.items()}


def load_get(d):
    out = {}
    for f in sorted(glob.glob(os.path.join(d, "get_bench-*.json"))):
        r = json.load(open(f))
        for x in r["results"]:
            out[f"{r['label']}.{x['pattern']}.{x['size']}B.clampi_us"] = x["clampi_us"]
    return out


def main():
    a, b = sys.argv[1], sys.argv[2]
    print(f"# A = {a}\n# B = {b}\n{'figure':58s} {'A':>10s} {'B':>10s} {'B/A':>7s}")
    for loader in (load_pmpi, load_get):
        fa, fb = loader(a), loader(b)
        for k in sorted(set(fa) & set(fb)):
            ratio = fb[k] / fa[k] if fa[k] else float("nan")
            print(f"{k:58s} {fa[k]:10.4g} {fb[k]:10.4g} {ratio:7.3f}")


if __name__ == "__main__":
    main()
