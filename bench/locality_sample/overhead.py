#!/usr/bin/env python3
"""Sampler overhead: runs COMMAND plainly and under libclampi_locality_sample.so,
alternating (plain, sample, sample, plain, ...) so both see the same machine load, and
prints wall-clock and CPU-time (user+sys of all descendants) ratios.

  overhead.py --lib LIB [--launcher "mpiexec -n 2"] [--trials N] [--json OUT] [--label NAME] -- PROGRAM ARGS...

With --launcher the preload goes on the program through `env` (mpiexec is not traced). Timing is noisy on a loaded machine:
the CPU-time ratio is the steadier number; both are medians over the trials."""
import argparse, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

def one(cmd, env):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

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
    a = ap.parse_args(argv[:cut])
    prog = argv[cut + 1:]
    launcher = a.launcher.split()
    out = tempfile.mkdtemp(prefix="clampi_sample_overhead_")
    cmd = launcher + prog
    sampled = launcher + ["env", "LD_PRELOAD=" + os.path.abspath(a.lib), "CLAMPI_LOCALITY_OUT=" + out] + prog
    env = dict(os.environ)
    res = {"plain": [], "sample": []}
    for t in range(a.trials):
        order = ["plain", "sample"] if t % 2 == 0 else ["sample", "plain"]
        for mode in order:
            w, c = one(cmd if mode == "plain" else sampled, env)
            res[mode].append((w, c))
            print("trial %d %-6s wall %7.3f s  cpu %7.3f s" % (t, mode, w, c), flush=True)
    med = {m: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for m, v in res.items()}
    rw, rc = med["sample"][0] / med["plain"][0], med["sample"][1] / med["plain"][1]
    print("%s median plain wall %.3f s cpu %.3f s | sample wall %.3f s cpu %.3f s | slowdown wall %.2fx cpu %.2fx"
          % (a.label, med["plain"][0], med["plain"][1], med["sample"][0], med["sample"][1], rw, rc))
    try:
        with open(os.path.join(out, "rank0.json")) as f:
            sampling = json.load(f).get("sampling")
    except (OSError, ValueError):
        sampling = None
    shutil.rmtree(out, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"label": a.label, "command": cmd, "trials": res, "median": med,
                       "slowdown_wall": rw, "slowdown_cpu": rc, "sampling": sampling}, f, indent=1)

if __name__ == "__main__":
    main()
