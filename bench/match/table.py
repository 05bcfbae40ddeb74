#!/usr/bin/env python3
"""Markdown tables for docs/matching.md from bench/match/results/*-depth-*.json:
us per message for every mode at each D, and the targets' ratios."""
import json, os, sys
out = sys.argv[1] if len(sys.argv) > 1 else "results"
for mpi in ["openmpi", "mpich"]:
    for tr in ["shm", "tcp"]:
        f = os.path.join(out, f"{mpi}-depth-{tr}.json")
        if not os.path.exists(f):
            continue
        pts = json.load(open(f))["points"]
        pp = {p["mode"]: p["us"] for p in pts if p["test"] == "pingpong"}
        dp = [p for p in pts if p["test"] == "depth"]
        modes = list(dict.fromkeys(p["mode"] for p in dp))
        print(f"\n**{mpi}, {tr}** (us per message; ping-pong half round trip at D = 0: " +
              ", ".join(f"{m} {v:.2f}" for m, v in pp.items()) + ")\n")
        print("| ahead | size | clear | D | " + " | ".join("MPI" if m == "mpi" else m for m in modes) + " |")
        print("|---" * (4 + len(modes)) + "|")
        keys = sorted({(p["ahead"], p["size"], p["clear"], p["D"]) for p in dp}, key=lambda k: (k[0] != "spec", k[1], k[2], k[3]))
        for k in keys:
            row = {p["mode"]: p["us"] for p in dp if (p["ahead"], p["size"], p["clear"], p["D"]) == k}
            print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | " + " | ".join(f"{row.get(m, float('nan')):.2f}" for m in modes) + " |")
        for a in ["spec", "any"]:
            row = {p["mode"]: p["us"] for p in dp if (p["ahead"], p["size"], p["clear"], p["D"]) == (a, 1, 1, 1024)}
            if "lla+hot" in row and "list" in row and "mpi" in row:
                print(f"\ntarget check ({a}, 1 B, cleared, D = 1024): list / lla+hot = {row['list'] / row['lla+hot']:.2f} (target >= 3), "
                      f"MPI / lla+hot = {row['mpi'] / row['lla+hot']:.2f} (target >= 2)")
