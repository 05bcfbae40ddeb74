#!/usr/bin/env python3
"""Sampler overhead: runs COMMAND plainly and under libclampi_locality_sample.so,
alternating (plain, sample, sample, plain, ...) so both see the same machine load, and
prints wall-clock, CPU-time (user+sys) and peak-resident-size ratios, the records the
sampler dropped, and where its time went.

  overhead.py --lib LIB [--launcher "mpiexec -n 2"] [--trials N] [--json OUT] [--label NAME]
              [--env VAR=VALUE ...] [--compare VAR=VALUE ...] [--compare-lib LIB2]
              [--cli CLAMPI_LOCALITY] -- PROGRAM ARGS...

--compare adds a third run per trial, the sampler with those settings (e.g.
CLAMPI_LOCALITY_SAMPLE_AHEAD=0: one fault per first touch), in the same rotation;
--compare-lib makes that third run use another build of the library (an A/B of two
versions of the sampler against each other and plain; with --compare too, both apply).
--cli runs the sampled program through the command (`clampi-locality run --sample -o DIR --`,
with CLAMPI_LOCALITY_SAMPLE_LIB=LIB), as a user does: its start-up and JSON annotation count.

With --launcher the preload goes on the program through `env` (mpiexec is not traced).
Timing is noisy on a loaded machine: the CPU-time ratio is the steadier number, and the
sampler's own counters (faults, mprotect calls, unwinds, bytes written, time in each:
"sampler_cost" in each rank's JSON) do not depend on the load. All figures are medians
over the trials; the counters are summed over ranks (medians over trials)."""
import argparse, glob, json, os, shutil, statistics, subprocess, sys, tempfile, time

COST_TIMES = [  # (counter, what it is, mechanism); indented lines are parts of the lines above
    ("ft_handler_ns", "first-touch faults, in the handler", "faults"),
    ("unwind_ns", "  of which unwinding", "unwinding"),
    ("sample_handler_ns", "sample faults, in the handler", "faults"),
    ("open_mprotect_ns", "  of both: mprotect opening pages", "re-protection"),
    ("arm_mprotect_ns", "sampler thread re-protecting", "re-protection"),
    ("tracked_alloc_ns", "tracked allocations (backtrace)", "unwinding"),
    ("tracked_free_ns", "tracked frees", "re-protection"),
    ("resolve_ns", "addr2line at exit", "output"),
    ("output_csv_ns", "writing the CSV", "output"),
]


def one(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read()
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit("command failed (%d): %s\n%s" % (code, " ".join(cmd), err[-2000:]))
    # ru_maxrss (KiB) of wait4: the largest of the process and its waited-for descendants
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def rank_jsons(out):
    res = []
    for f in sorted(glob.glob(os.path.join(out, "rank*.json"))):
        try:
            with open(f) as fh:
                res.append(json.load(fh))
        except (OSError, ValueError):
            pass
    return res


def summarize(ranks, out):
    """Counters summed over ranks, plus output bytes."""
    s = {"ranks": len(ranks), "dropped": 0, "pages_touched": 0, "pages_sampled": 0, "allocations_untracked": 0,
         "stacks_dropped": 0, "samples": 0, "cost": {}}
    for d in ranks:
        cov = d.get("coverage", {})
        s["dropped"] += cov.get("dropped", d.get("dropped", 0))
        s["pages_touched"] += cov.get("pages_touched", 0)
        s["pages_sampled"] += cov.get("pages_sampled", 0)
        s["allocations_untracked"] += cov.get("allocations_untracked", 0)
        s["stacks_dropped"] += d.get("sampling", {}).get("stacks_dropped", 0)
        s["samples"] += d.get("sampling", {}).get("samples", 0)
        for k, v in d.get("sampler_cost", {}).items():
            s["cost"][k] = s["cost"].get(k, 0) + v
    s["output_bytes"] = sum(os.path.getsize(f) for f in glob.glob(os.path.join(out, "rank*.*")))
    return s


def median_summary(sums):
    keys = [k for k in sums[0] if k != "cost"]
    m = {k: statistics.median(s[k] for s in sums) for k in keys}
    m["dropped_max"] = max(s["dropped"] for s in sums)
    ck = set().union(*(s["cost"].keys() for s in sums))
    m["cost"] = {k: statistics.median(s["cost"].get(k, 0) for s in sums) for k in sorted(ck)}
    return m


def print_cost(label, med, m):
    c = m["cost"]
    extra_wall = med["sample"][0] - med["plain"][0]
    extra_cpu = med["sample"][1] - med["plain"][1]
    print("%s: dropped page records %d (max over trials %d), pages touched %d, sampled %d, samples %d, "
          "allocations untracked %d, output %.1f MB" % (label, m["dropped"], m["dropped_max"], m["pages_touched"],
                                                       m["pages_sampled"], m["samples"], m["allocations_untracked"],
                                                       m["output_bytes"] / 1e6))
    print("  counts: first-touch faults %d (+ %d pages first-touched in %d runs opened ahead), sample faults %d, faults on a page being opened %d, on an open page %d, "
          "mprotect opening %d, "
          "re-protecting %d, unwinds %d (+%d cached), tracked allocations %d (reused %d), frees %d"
          % (c.get("ft_faults", 0), c.get("lease_pages_touched", 0), c.get("leases", 0), c.get("sample_faults", 0), c.get("busy_faults", 0), c.get("retry_faults", 0),
             c.get("open_mprotects", 0),
             c.get("arm_mprotects", 0), c.get("unwinds", 0), c.get("unwinds_cached", 0), c.get("tracked_allocs", 0),
             c.get("reused_allocs", 0), c.get("tracked_frees", 0)))
    print("  time (summed over threads and ranks; extra wall %.3f s, extra CPU %.3f s):" % (extra_wall, extra_cpu))
    by = {}
    for k, what, mech in COST_TIMES:
        v = c.get(k, 0) / 1e9
        print("    %-40s %8.3f s  [%s]" % (what, v, mech))
        if not what.startswith("  "):
            by[mech] = by.get(mech, 0) + v
    # the handler's time includes its mprotect and unwinding: move them to their mechanism
    for k, mech in (("open_mprotect_ns", "re-protection"), ("unwind_ns", "unwinding")):
        by["faults"] = by.get("faults", 0) - c.get(k, 0) / 1e9
        by[mech] = by.get(mech, 0) + c.get(k, 0) / 1e9
    print("  by mechanism: " + ", ".join("%s %.3f s" % (k, v) for k, v in sorted(by.items())) +
          "; not counted here: the kernel's signal delivery and return per fault, and contention")
    return by


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--label", default="")
    ap.add_argument("--launcher", default="")
    ap.add_argument("--env", action="append", default=[], help="VAR=VALUE for both runs")
    ap.add_argument("--compare", action="append", default=[], help="VAR=VALUE of a third run, sampled")
    ap.add_argument("--compare-lib", help="the library of the third run (default: --lib)")
    ap.add_argument("--cli", help="the clampi-locality command: sampled runs go through it")
    a = ap.parse_args(argv[:cut])
    prog = argv[cut + 1:]
    launcher = a.launcher.split()
    env = dict(os.environ)
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    cmd = launcher + prog
    res = {"plain": [], "sample": []}
    modes = ["plain", "sample"]
    third = a.compare or a.compare_lib
    if third:
        res["compare"] = []
        modes.append("compare")
    sums, csums = [], []
    for t in range(a.trials):
        order = modes[t % len(modes):] + modes[:t % len(modes)]
        if t % 2:
            order.reverse()
        for mode in order:
            out = tempfile.mkdtemp(prefix="clampi_sample_overhead_")
            lib = os.path.abspath(a.compare_lib if mode == "compare" and a.compare_lib else a.lib)
            sampled = launcher + ["env", "LD_PRELOAD=" + lib, "CLAMPI_LOCALITY_OUT=" + out]
            if a.cli:
                sampled = launcher + ["env", "CLAMPI_LOCALITY_SAMPLE_LIB=" + lib]
            if mode == "compare":
                sampled += a.compare
            if a.cli:
                sampled += [a.cli, "run", "--sample", "-o", out, "--"]
            w, c, rss = one(cmd if mode == "plain" else sampled + prog, env)
            res[mode].append((w, c, rss))
            extra = ""
            if mode != "plain":
                s = summarize(rank_jsons(out), out)
                (sums if mode == "sample" else csums).append(s)
                extra = "  dropped %d" % s["dropped"]
            shutil.rmtree(out, ignore_errors=True)
            print("trial %d %-7s wall %7.3f s  cpu %7.3f s  maxrss %7.1f MB%s" % (t, mode, w, c, rss, extra),
                  flush=True)
    med = {m: tuple(statistics.median(x[i] for x in v) for i in range(3)) for m, v in res.items()}
    rw, rc, rm = (med["sample"][i] / med["plain"][i] for i in range(3))
    print("%s median plain wall %.3f s cpu %.3f s rss %.1f MB | sample wall %.3f s cpu %.3f s rss %.1f MB | "
          "slowdown wall %.2fx cpu %.2fx, memory %.2fx"
          % (a.label, med["plain"][0], med["plain"][1], med["plain"][2], med["sample"][0], med["sample"][1],
             med["sample"][2], rw, rc, rm))
    m = median_summary(sums) if sums and sums[0]["ranks"] else None
    by = print_cost(a.label, med, m) if m else None
    compare = None
    if third:
        cw, cc = (med["compare"][i] / med["plain"][i] for i in range(2))
        cm = median_summary(csums) if csums and csums[0]["ranks"] else None
        what = " ".join(a.compare + (["library " + a.compare_lib] if a.compare_lib else []))
        print("%s with %s: median wall %.3f s cpu %.3f s | slowdown wall %.2fx cpu %.2fx"
              % (a.label, what, med["compare"][0], med["compare"][1], cw, cc))
        if cm:
            print_cost(a.label + " with " + what, {"plain": med["plain"], "sample": med["compare"]}, cm)
        compare = {"env": a.compare, "lib": a.compare_lib, "slowdown_wall": cw, "slowdown_cpu": cc, "sampler": cm}
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump({"label": a.label, "command": cmd, "env": a.env, "lib": a.lib, "trials": res,
                       "trial_fields": ["wall_s", "cpu_s", "maxrss_mb"], "median": med, "slowdown_wall": rw,
                       "slowdown_cpu": rc, "memory_ratio": rm, "sampler": m, "seconds_by_mechanism": by, "compare": compare, "cli": a.cli,
                       "load_average": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M:%S")}, f, indent=1)


if __name__ == "__main__":
    main()
