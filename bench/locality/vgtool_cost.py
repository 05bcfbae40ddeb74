#!/usr/bin/env python3
"""Where the exact tracer's time goes: runs PROGRAM plainly, under
`valgrind --tool=none` (Valgrind's own cost: start-up, translating every superblock,
running translated code) and under the clampi-locality tool (one or more builds of it,
side by side), alternating, and reports CPU time (user+sys, wait4), wall-clock time, and
Valgrind's own counts (--stats=yes): superblocks translated, guest bytes, host code bytes
generated, translations discarded. Host code bytes per guest byte is the instrumentation's
size, which Valgrind's translation time (VEX optimisation and register allocation: 75 %
of a traced LCC run, perf) grows with; it does not depend on the machine's load.

  vgtool_cost.py [--trials N] [--json OUT] [--tool NAME=VALGRIND_LIB_DIR ...] -- PROGRAM ARGS...

Without --tool the installed/build tool is found through $VALGRIND_LIB."""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

STAT = re.compile(r"transtab: new\s+([\d,]+) \(([\d,]+) -> ([\d,]+);")
DISC = re.compile(r"transtab: discarded\s+([\d,]+)")


def num(s):
    return int(s.replace(",", ""))


def one(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), err[-2000:]))
    r = {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime}
    m = STAT.search(err)
    if m:
        r.update(superblocks=num(m.group(1)), guest_bytes=num(m.group(2)), host_bytes=num(m.group(3)))
    m = DISC.search(err)
    if m:
        r["discarded"] = num(m.group(1))
    return r


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--tool", action="append", default=[])
    a = ap.parse_args(argv[:cut])
    prog = argv[cut + 1:]
    tools = [t.split("=", 1) for t in a.tool] or [["clampi-locality", os.environ.get("VALGRIND_LIB", "")]]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    modes = ["plain", "none"] + [t[0] for t in tools]
    res = {m: [] for m in modes}
    out = tempfile.mkdtemp(prefix="vgtool_cost_")
    try:
        for t in range(a.trials):
            order = modes if t % 2 == 0 else modes[::-1]
            for m in order:
                e = dict(env)
                if m == "plain":
                    cmd = prog
                elif m == "none":
                    e.pop("VALGRIND_LIB", None)
                    cmd = ["valgrind", "-q", "--stats=yes", "--tool=none"] + prog
                else:
                    lib = dict(tools)[m]
                    if lib:
                        e["VALGRIND_LIB"] = lib
                    d = os.path.join(out, "%s%d" % (m, t))
                    os.makedirs(d)
                    cmd = ["valgrind", "-q", "--stats=yes", "--tool=clampi-locality", "--read-inline-info=yes",
                           "--out-dir=" + d] + prog
                r = one(cmd, e)
                res[m].append(r)
                print("trial %d %-16s wall %7.2f s cpu %7.2f s%s" % (
                    t, m, r["wall_s"], r["cpu_s"],
                    "  superblocks %d guest %d B host %d B (%.1fx) discarded %d" % (
                        r["superblocks"], r["guest_bytes"], r["host_bytes"], r["host_bytes"] / r["guest_bytes"],
                        r.get("discarded", 0)) if "host_bytes" in r else ""), flush=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    med = {m: {k: statistics.median(r[k] for r in v) for k in v[0]} for m, v in res.items()}
    base = med["plain"]["cpu_s"]
    for m in modes:
        x = med[m]
        line = "%-16s median cpu %7.2f s (%.1fx plain) wall %7.2f s (%.1fx)" % (
            m, x["cpu_s"], x["cpu_s"] / base, x["wall_s"], x["wall_s"] / med["plain"]["wall_s"])
        if "host_bytes" in x:
            line += ", host code %.1f MB = %.1f B per guest byte" % (x["host_bytes"] / 1e6,
                                                                    x["host_bytes"] / x["guest_bytes"])
        if m not in ("plain", "none"):
            line += "; over --tool=none: +%.2f s cpu" % (x["cpu_s"] - med["none"]["cpu_s"])
        print(line)
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump({"command": prog, "tools": dict(tools), "trials": res, "median": med,
                       "load_average": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M:%S")}, f, indent=1)


if __name__ == "__main__":
    main()
