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
        try:
            pts = json.load(open(f))["points"]
        except ValueError:
            continue  # still being written
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

f = os.path.join(out, "engine.json")
if os.path.exists(f):
    pts = json.load(open(f))["points"]
    print("\n**engine alone** (cycles per match, median; T threads posting into one matcher)\n")
    kinds = list(dict.fromkeys(p["kind"] for p in pts))
    print("| clear | threads | D | " + " | ".join(kinds) + " |")
    print("|---" * (3 + len(kinds)) + "|")
    for c in [0, 1]:
        for t in [1, 2, 4]:
            for d in [0, 16, 128, 1024, 4096]:
                row = {p["kind"]: p["cycles"] for p in pts if (p["clear"], p["threads"], p["D"]) == (c, t, d)}
                if row:
                    print(f"| {c} | {t} | {d} | " + " | ".join(f"{row.get(k, float('nan')):.0f}" for k in kinds) + " |")
f = os.path.join(out, "cachegrind.json")
if os.path.exists(f):
    try:
        pts = json.load(open(f))["points"]
    except ValueError:
        pts = []
    if pts:
        print("\n**cachegrind**, caches cleared: D1 misses per search (total per iteration minus the 2^20 lines of the clearing walk; for hot/lla+hot this includes the helper thread's touches, which valgrind runs serialized)\n")
        kinds = list(dict.fromkeys(p["kind"] for p in pts))
        print("| D | " + " | ".join(kinds) + " |")
        print("|---" * (1 + len(kinds)) + "|")
        for d in sorted({p["D"] for p in pts}):
            row = {p["kind"]: p["d1_misses"] - (1 << 20) for p in pts if p["D"] == d}
            print(f"| {d} | " + " | ".join(f"{row.get(k, float('nan')):.0f}" for k in kinds) + " |")
