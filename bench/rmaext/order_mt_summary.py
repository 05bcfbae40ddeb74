#!/usr/bin/env python3
"""The ordered-stream targets per cell from rmaext_bench order_mt JSON lines, one file per run: for
each run, threads, size and scope, put+flush / ordered (target: at least 3) and
ordered / unordered (target: at most 1.5), and how many cells meet both. A file holding
several runs one after another is split where a measurement repeats.
    order_mt_summary.py RUN1.jsonl [RUN2.jsonl ...]"""
import json
import sys

PF_OVER_ORDERED = 3.0  # target: ordered puts at least 3x faster than put+flush
ORDERED_OVER_UNORDERED = 1.5  # target: within 1.5x of unordered puts

print("run threads size mpi_pf | process: pf ordered unordered pf/ord ord/unord | "
      "thread: pf ordered unordered pf/ord ord/unord")
runs = []
for path in sys.argv[1:]:
    lat = {}
    for line in open(path):
        if line.startswith("{"):
            r = json.loads(line)
            key = (r["scope"], r["style"], r["threads"], r["size"])
            if key in lat:
                runs.append((path, lat))
                lat = {}
            lat[key] = r["lat_us"]
    runs.append((path, lat))
for run, (path, lat) in enumerate(runs, 1):
    cells = sorted({(k[2], k[3]) for k in lat})
    met = total = 0
    for threads, size in cells:
        out = [f"{run} {threads} {size} {lat.get(('mpi', 'put_flush', threads, size), float('nan')):.1f} |"]
        for scope in ("clampi_process", "clampi_thread"):
            pf, o, u = (lat.get((scope, s, threads, size)) for s in ("put_flush", "ordered", "unordered"))
            if None in (pf, o, u):
                out.append("n/a |")
                continue
            a, b = pf / o, o / u
            ok = a >= PF_OVER_ORDERED and b <= ORDERED_OVER_UNORDERED
            met += ok
            total += 1
            out.append(f"{pf:.1f} {o:.1f} {u:.1f} {a:.2f} {b:.2f}{'' if ok else ' (miss)'} |")
        print(" ".join(out).rstrip(" |"))
    print(f"# run {run} ({path}): both targets met in {met} of {total} cells")
