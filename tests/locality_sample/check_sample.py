#!/usr/bin/env python3
"""Runs a program under libclampi_locality_sample.so and checks the CSV/JSON it writes.

  check_sample.py MODE --lib LIB --out DIR [--src SRC] -- COMMAND...

MODE known : tests/locality_sample/ls_known.c: first touch thread + file:line, alloc
             site and struct name, sampled counts vs the exact counts the program
             reports (per-page thread shares and overall locality, within stated bounds)
     crash : ls_crash.c: partial output marked incomplete, process dies of SIGSEGV
     numa  : numa_alloc_test / numa_vector_test: each page first touched by its owner
     reuse : ls_reuse.c: a temporary allocated and freed every iteration is one structure
             (its block reused), first-touched once, nothing dropped from a small table
     child : ls_child.c: a child that keeps the preload does not replace the program's files
  past_end : ls_line_past_end.c: an allocation line past its file's end is not the program's
     mpi   : ls_mpi_shared.c under mpiexec (COMMAND is the launcher line; the program is
             its last word): mappings recorded, same files across ranks, clampi's
             segments first touched by their owner rank
"""
import argparse, csv, glob, json, os, re, shutil, signal, subprocess, sys

def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)

def read_rank(out, r=0):
    with open(os.path.join(out, "rank%d.json" % r)) as f:
        meta = json.load(f)
    with open(os.path.join(out, "rank%d.csv" % r)) as f:
        rows = list(csv.DictReader(f))
    return meta, rows

def run(cmd, env_extra, timeout=240):
    env = dict(os.environ)
    env.update(env_extra)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    sys.stdout.write(p.stdout[-4000:])
    sys.stderr.write(p.stderr[-4000:])
    return p

def marker_line(src, marker):
    with open(src) as f:
        for i, line in enumerate(f, 1):
            if marker in line:
                return i
    fail("marker %s not in %s" % (marker, src))

def tcols(rows):
    return sorted((k for k in rows[0] if re.fullmatch(r"T\d+", k)), key=lambda k: int(k[1:]))

def locality(pages):
    """overall locality (the hybrid-MPI locality paper, Table 1): accesses by the first toucher / all accesses"""
    loc = tot = 0
    for ft, counts in pages:
        tot += sum(counts)
        if 0 <= ft < len(counts):
            loc += counts[ft]
    return loc / tot if tot else 0.0

def ftc(pages):
    """first-touch correctness: share of pages first touched by their main user"""
    ok = sum(1 for ft, c in pages if sum(c) and c.index(max(c)) == ft)
    return ok / len(pages)

def known_attempt(a):
    """One run of ls_known: fails at once on what does not depend on timing (names, sites,
    first touches, a sample no access can explain); returns the sampled-vs-exact bounds
    it misses (a list of messages; empty: within every bound)."""
    expected_file = os.path.join(a.out, "expected.txt")
    p = run(a.cmd + [expected_file, "4"], a.env)
    if p.returncode != 0:
        fail("program exit %d" % p.returncode)
    meta, rows = read_rank(a.out)
    if meta["mode"] != "sample" or meta["counts"] != "sampled" or not meta["complete"]:
        fail("json header: %s" % {k: meta[k] for k in ("mode", "counts", "complete")})
    if meta["threads"] != 3 or len(meta["thread_work"]) != 3 or min(meta["thread_work"]) <= 0:
        fail("threads/thread_work: %s %s" % (meta["threads"], meta["thread_work"]))
    prog = os.path.basename(a.cmd[0])
    if meta.get("thread_creator") != ["", prog, prog]:  # the program creates its workers
        fail("thread_creator %s, want ['', %r, %r]" % (meta.get("thread_creator"), prog, prog))
    base = os.path.basename(a.src)
    ft_loc = "%s:%d" % (base, marker_line(a.src, "/* FIRST-TOUCH */"))
    alloc_loc = "%s:%d" % (base, marker_line(a.src, "/* ALLOC */"))
    grid = [r for r in rows if r["struct.name"] == "grid"]
    if len(grid) != 8:
        fail("expected 8 pages named grid, got %d (names: %s)" % (len(grid), sorted({r['struct.name'] for r in rows})))
    grid.sort(key=lambda r: int(r["address"], 16))
    exact = {}
    with open(expected_file) as f:
        for line in f:
            pg, t, n = map(int, line.split())
            exact.setdefault(pg, [0, 0, 0])[t] = n
    cols = tcols(rows)
    worst = 0.0
    sampled_pages, exact_pages = [], []
    for pg, r in enumerate(grid):
        if r["alloc.thread"] != "0" or r["alloc.location"] != alloc_loc:
            fail("page %d alloc %s %s, want 0 %s" % (pg, r["alloc.thread"], r["alloc.location"], alloc_loc))
        if int(r["firsttouch.thread"]) != pg % 3 or r["firsttouch.location"] != ft_loc:
            fail("page %d first touch %s %s, want %d %s" % (pg, r["firsttouch.thread"], r["firsttouch.location"], pg % 3, ft_loc))
        s = [int(r[c]) for c in cols[:3]]
        e = exact[pg]
        if sum(s) == 0:
            fail("page %d: no samples" % pg)
        for t in range(3):
            if e[t] <= 1 and s[t] != 0:  # never accessed after its first touch: no sample possible
                fail("page %d: thread %d sampled %d times but never accessed" % (pg, t, s[t]))
            worst = max(worst, abs(s[t] / sum(s) - e[t] / sum(e)))
        sampled_pages.append((pg % 3, s))
        exact_pages.append((pg % 3, e))
    ls_, le = locality(sampled_pages), locality(exact_pages)
    fs, fe = ftc(sampled_pages), ftc(exact_pages)
    print("known: worst per-page thread-share error %.3f; overall locality sampled %.1f%% exact %.1f%%; "
          "first-touch correctness sampled %.1f%% exact %.1f%%; sampling %s"
          % (worst, 100 * ls_, 100 * le, 100 * fs, 100 * fe, meta.get("sampling")))
    # Measured on the 2-core machine at load 45-65: share error <= 0.22, locality error
    # <= 12 points (docs/locality-sampler.md); the bounds leave room for noise.
    missed = []
    if worst > 0.25:
        missed.append("per-page share error %.3f > 0.25" % worst)
    if abs(ls_ - le) > 0.15:
        missed.append("overall locality error %.3f > 0.15" % abs(ls_ - le))
    if abs(fs - fe) > 1.0 / 8 + 1e-9:  # at most one page's main user misjudged
        missed.append("first-touch correctness differs: sampled %.3f exact %.3f" % (fs, fe))
    return missed

def check_known(a):
    # Sampling is statistical and the threads' interleaving is the scheduler's: a run on a
    # machine busy with other work can miss a bound by chance (seen once in a full CI run).
    # A sampler that is wrong misses it every time, so a bound counts as missed only if
    # three runs in a row miss one.
    for attempt in range(3):
        missed = known_attempt(a)
        if not missed:
            print("PASS")
            return
        print("known: run %d of 3 missed: %s" % (attempt + 1, "; ".join(missed)))
    fail("every run missed a bound: " + "; ".join(missed))

def check_crash(a):
    p = run(a.cmd, a.env)
    if p.returncode != -signal.SIGSEGV:
        fail("want death by SIGSEGV, got exit %d" % p.returncode)
    meta, rows = read_rank(a.out)
    if meta["complete"] is not False or meta["signal"] != "SIGSEGV" or meta["exit_status"] is not None:
        fail("json: complete=%s signal=%s exit_status=%s" % (meta["complete"], meta["signal"], meta["exit_status"]))
    touched = [r for r in rows if r["firsttouch.thread"] == "0"]
    buf = [s for s in meta["structures"] if s["size"] == 4 * 4096 and s["kind"] == "malloc"]
    if len(buf) != 1 or len(touched) < 4:
        fail("partial output lacks the 4 touched pages (%d touched rows, %d structures)" % (len(touched), len(buf)))
    if glob.glob(os.path.join(a.out, "*.tmp")):
        fail("temporary files left")
    # the load bases are kept, so the hex locations can be resolved later
    maps = os.path.join(a.out, "rank0.maps")
    if not os.path.exists(maps):
        fail("no rank0.maps: the partial output's hex locations cannot be resolved")
    mods = []
    with open(maps) as f:
        for line in f:
            w = line.split()
            if len(w) >= 6 and w[5].startswith("/"):
                lo, hi = (int(x, 16) for x in w[0].split("-"))
                mods.append((lo, hi, int(w[2], 16), w[5]))

    def resolve(loc):
        ip = int(loc, 16)
        mod = next((m for m in mods if m[0] <= ip < m[1]), None)
        if mod is None:
            fail("%s is in no mapping of rank0.maps" % loc)
        base = min(m[0] - m[2] for m in mods if m[3] == mod[3])
        return subprocess.run(["addr2line", "-e", mod[3], hex(ip - base)], stdout=subprocess.PIPE,
                              text=True).stdout.strip()
    locs = {r["alloc.location"] for r in touched} | {r["firsttouch.location"] for r in touched}
    if not all(l.startswith("0x") for l in locs):
        fail("partial output locations should be hex: %s" % sorted(locs))
    for loc in locs:
        resolve(loc)
    alloc_at = {resolve(r["alloc.location"]) for r in touched}
    if not all("ls_crash.c:" in x for x in alloc_at):
        fail("allocation site resolved through rank0.maps to %s, want ls_crash.c" % sorted(alloc_at))
    print("crash: hex locations resolved through rank0.maps: %s" % sorted(alloc_at))
    print("PASS")

def check_vector(a):
    """ls_vector.cpp (-O0 and -O2): each vector's whole pages first touched and allocated
    at its own program line."""
    p = run(a.cmd, a.env)
    if p.returncode != 0:
        fail("program exit %d" % p.returncode)
    meta, rows = read_rank(a.out)
    base = os.path.basename(a.src)
    structs = {s["name"]: s for s in meta["structures"]}
    for name, mark in (("ctor", "@CTOR"), ("grown", "@GROWN"), ("other", "@OTHER")):
        want = "%s:%d" % (base, marker_line(a.src, mark))
        s = structs.get(name)
        if s is None:
            fail("structure %s missing (%s)" % (name, sorted(structs)))
        if s["alloc_location"] != want:
            fail("%s allocated at %s, want %s" % (name, s["alloc_location"], want))
        lo = int(s["address"], 16)
        hi = lo + s["size"]
        pages = [r for r in rows if r["firsttouch.thread"] != "-1" and lo <= int(r["address"], 16)
                 and int(r["address"], 16) + 4096 <= hi]
        locs = sorted({r["firsttouch.location"] for r in pages})
        if len(pages) < 16 or locs != [want]:
            fail("%s: %d pages first touched at %s, want %s" % (name, len(pages), locs, want))
    print("PASS")

def check_static(a):
    """ls_static.c: static arrays tracked and named (a, b, c), first touch thread and line
    per page; output written also when the program ends with _exit()."""
    base = os.path.basename(a.src)
    line = lambda m: "%s:%d" % (base, marker_line(a.src, m))
    for how, want_rc in (("exit", 0), ("_exit", 3), ("_Exit", 3)):
        shutil.rmtree(a.out, ignore_errors=True)
        os.makedirs(a.out)
        p = run(a.cmd + [how], a.env)
        if p.returncode != want_rc:
            fail("%s: exit %d, want %d" % (how, p.returncode, want_rc))
        if not os.path.exists(os.path.join(a.out, "rank0.json")):
            fail("%s: no output written" % how)
        meta, rows = read_rank(a.out)
        if meta["exit_status"] != want_rc or meta["complete"] is not True:
            fail("%s: exit_status %s complete %s" % (how, meta["exit_status"], meta["complete"]))
        structs = {s["name"]: s for s in meta["structures"]}
        for name in ("a", "b", "c"):
            if structs.get(name, {}).get("kind") != "static":
                fail("%s: static array %s not tracked (%s)" % (how, name, sorted(structs)))
        if "small" in structs:
            fail("a 64-byte static is below --min-size")
        def pages(name):
            s = structs[name]
            lo, hi = int(s["address"], 16), int(s["address"], 16) + s["size"]
            return [r for r in rows if r["struct.name"] == name and lo <= int(r["address"], 16)
                    and int(r["address"], 16) + 4096 <= hi]
        pa = sorted(pages("a"), key=lambda r: int(r["address"], 16))
        if len(pa) < 120:
            fail("%s: a[] has %d whole pages in the CSV" % (how, len(pa)))
        half = len(pa) // 2
        first = {(r["firsttouch.thread"], r["firsttouch.location"]) for r in pa[:half - 1]}
        second = {(r["firsttouch.thread"], r["firsttouch.location"]) for r in pa[half + 1:]}
        if first != {("0", line("@A_T0"))} or second != {("1", line("@A_T1"))}:
            fail("%s: a[] first touch %s / %s" % (how, sorted(first), sorted(second)))
        for name, mark in (("b", "@B"), ("c", "@C")):
            locs = {r["firsttouch.location"] for r in pages(name)}
            if locs != {line(mark)}:
                fail("%s: %s first touched at %s, want %s" % (how, name, sorted(locs), line(mark)))
        if pa[0]["alloc.thread"] != "-1" or pa[0]["alloc.location"] != "?":
            fail("static pages: alloc.thread/location %s/%s, want -1/?" % (pa[0]["alloc.thread"], pa[0]["alloc.location"]))
        if not os.path.exists(os.path.join(a.out, "rank0.maps")):
            fail("%s: no rank0.maps (load bases)" % how)
        print("static %s: a/b/c tracked, %d pages of a[], exit status %d" % (how, len(pa), want_rc))
    # a page table too small for the run loses pages, and says so
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    p = run(a.cmd, dict(a.env, CLAMPI_LOCALITY_MAX_PAGES="64"))
    meta, rows = read_rank(a.out)
    cov = meta.get("coverage") or {}
    if p.returncode != 0 or not cov.get("dropped") or cov.get("page_capacity") != 48 or not cov.get("memory_bound_bytes"):
        fail("small table: exit %d, coverage %s" % (p.returncode, cov))
    report = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "locality", "report.py")
    r = subprocess.run([sys.executable, report, a.out, "--no-plots"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or "lost to the sampler's memory bound" not in r.stdout:
        fail("the report does not say that pages were lost: %s %s" % (r.stdout[-800:], r.stderr[-400:]))
    print("static: %d page records dropped with a 64-page table, reported" % cov["dropped"])
    print("PASS")

def check_reuse(a):
    """ls_reuse.c: 200 iterations of malloc/touch/free of 16 pages at one
    site are one structure whose block is reused 199 times; its pages are first-touched
    once (at @TOUCH), so a 96-record page table drops nothing and the first-touch faults
    stay near the 16 + 16 + 16 pages the program really has; calloc blocks are not reused
    (the program checks they read zero) and another site of the same size has its own."""
    p = run(a.cmd, dict(a.env, CLAMPI_LOCALITY_MAX_PAGES="128"))
    if p.returncode != 0:
        fail("program exit %d (2: calloc memory not zero)" % p.returncode)
    meta, rows = read_rank(a.out)
    base = os.path.basename(a.src)
    line = lambda m: "%s:%d" % (base, marker_line(a.src, m))
    cov, cost = meta.get("coverage") or {}, meta.get("sampler_cost") or {}
    if cov.get("page_capacity") != 96 or cov.get("dropped") != 0:
        fail("coverage %s: want no dropped page record with 96 records" % cov)
    tmp = [s for s in meta["structures"] if s["alloc_location"] == line("@TMP")]
    if len(tmp) != 1 or tmp[0].get("reuses") != 199 or tmp[0]["freed"] is not True:
        fail("the temporary: %s, want one structure reused 199 times" % tmp)
    zero = [s for s in meta["structures"] if s["alloc_location"] == line("@ZERO")]
    other = [s for s in meta["structures"] if s["alloc_location"] == line("@OTHER")]
    if len(zero) != 8 or any(s.get("reuses") for s in zero):
        fail("calloc blocks: %d structures %s, want 8 never reused" % (len(zero), zero[:2]))
    if len(other) != 1 or other[0].get("reuses") or other[0]["address"] == tmp[0]["address"]:
        fail("another site of the same size: %s (temporary at %s)" % (other, tmp[0]["address"]))
    lo = int(tmp[0]["address"], 16)
    pages = [r for r in rows if lo <= int(r["address"], 16) < lo + 16 * 4096]
    locs = {(r["firsttouch.thread"], r["firsttouch.location"]) for r in pages}
    if len(pages) != 16 or locs != {("0", line("@TOUCH"))}:
        fail("temporary's pages: %d, first touches %s" % (len(pages), sorted(locs)))
    # first touches: by a fault each, or in a run of pages opened ahead (lease.c)
    touches = cost.get("ft_faults", 0) + cost.get("lease_pages_touched", 0)
    if not 48 <= touches <= 80 or cost.get("reused_allocs") != 199:
        fail("sampler_cost %s: want 48-80 first touches and 199 reused allocations" % cost)
    print("reuse: temporary reused %d times, %d first touches (%d faults), nothing dropped" %
          (tmp[0]["reuses"], touches, cost["ft_faults"]))
    print("PASS")

def has_protection_keys():
    with open("/proc/cpuinfo") as f:
        flags = set(re.findall(r"\w+", next((l for l in f if l.startswith("flags")), "")))
    return "pku" in flags and "ospke" in flags

def check_ahead(a):
    """ls_ahead.c: pages opened ahead of a thread's first touches (lease.c) keep every
    page's first-touching thread and line, whichever thread touches them first, with the
    leases on (fewer faults, where the CPU has protection keys) and off."""
    line = lambda m: "%s:%d" % (os.path.basename(a.src), marker_line(a.src, m))
    ks = (1, 3, 8, 64)
    # the runs stay open until settled: without the sampler thread (period 0), only the
    # other threads' touches, frees and system call wrappers settle them
    for ahead, period in (("256", "1"), ("256", "0"), ("0", "1")):
        shutil.rmtree(a.out, ignore_errors=True)
        os.makedirs(a.out)
        p = run(a.cmd, dict(a.env, CLAMPI_LOCALITY_SAMPLE_AHEAD=ahead, CLAMPI_LOCALITY_SAMPLE_PERIOD_MS=period))
        if p.returncode != 0:
            fail("ahead=%s period=%s: exit %d" % (ahead, period, p.returncode))
        meta, rows = read_rank(a.out)
        by_site = {}
        for s in meta["structures"]:
            by_site.setdefault(s["alloc_location"], []).append(s)
        def pages(site, n, k=0):
            s = sorted(by_site.get(line(site), []), key=lambda s: int(s["address"], 16))
            if len(s) <= k:
                fail("ahead=%s: no structure allocated at %s" % (ahead, site))
            lo = int(s[k]["address"], 16)
            got = {(int(r["address"], 16) - lo) // 4096: (r["firsttouch.thread"], r["firsttouch.location"])
                   for r in rows if lo <= int(r["address"], 16) < lo + n * 4096}
            return [got.get(i, ("untouched", "")) for i in range(n)]
        want = {}
        for b, k in enumerate(ks):
            want["blocks k=%d" % k] = (pages("@M_BLOCKS", 96, b),
                                       [(str(1 + (i // k) % 2), line("@BLOCKS")) for i in range(96)])
        want["half"] = (pages("@M_HALF", 200), [("1", line("@HALF1")) if i < 100 else ("2", line("@HALF2"))
                                                 for i in range(200)])
        want["stride"] = (pages("@M_STRIDE", 200), [("1", line("@STRIDE")) if i % 2 == 0 else
                                                    ("0", line("@STRIDE_MAIN")) for i in range(200)])
        want["syscall"] = (pages("@M_SYS", 200), [("1", line("@SYS1")) if i == 0 else ("2", line("@SYS2")) if i == 2
                                                  else ("0", line("@SYS_MAIN")) for i in range(200)])
        want["long"] = (pages("@M_LONG", 4096), [("0", line("@LONG"))] * 4096)
        want["send"] = (pages("@M_SEND", 64), [("2", line("@SEND"))] * 64)
        want["handler"] = (pages("@M_HND", 64), [("0", line("@HND"))] * 64)
        want["c11"] = (pages("@M_C11", 16), [("0", line("@C11_MAIN0")) if i == 0 else ("3", line("@C11")) if i == 2
                                             else ("0", line("@C11_REST")) for i in range(16)])
        for name, (got, exp) in want.items():
            bad = [i for i in range(len(exp)) if got[i] != exp[i]]
            if bad:
                fail("ahead=%s, %s: %d pages wrong, first %s: got %s, want %s" %
                     (ahead, name, len(bad), bad[:8], [got[i] for i in bad[:3]], [exp[i] for i in bad[:3]]))
        cost = meta["sampler_cost"]
        pages_total = 4 * 96 + 3 * 200 + 4096 + 64 + 64 + 16
        print("ahead=%s: every page right; %d first-touch faults, %d leases (%d pages touched in them), "
              "%d settled by another thread" % (ahead, cost["ft_faults"], cost.get("leases", 0),
                                                 cost.get("lease_pages_touched", 0), cost.get("lease_faults", 0)))
        if ahead == "0" and cost.get("leases", 0):
            fail("CLAMPI_LOCALITY_SAMPLE_AHEAD=0 opened %d leases" % cost["leases"])
        if ahead != "0" and has_protection_keys():
            if cost["ft_faults"] > pages_total // 4 or not cost.get("lease_faults"):
                fail("with protection keys: %d faults for %d pages, %d leases settled by another thread" %
                     (cost["ft_faults"], pages_total, cost.get("lease_faults", 0)))
    print("PASS")

def check_child(a):
    """ls_child.c: a child started with the sampler preloaded while the traced program runs
    is not traced; the program's rank files stay the program's after the child exits."""
    import time
    for attempt in range(3):  # which process writes last is up to the scheduler: try thrice
        shutil.rmtree(a.out, ignore_errors=True)
        os.makedirs(a.out)
        p = run(a.cmd + [a.lib, a.out], a.env)
        if p.returncode != 0:
            fail("program exit %d" % p.returncode)
        m = re.search(r"child pid (\d+)", p.stdout)
        if not m:
            fail("the program did not print its child's pid")
        wait_gone(int(m.group(1)), time)  # the child exits a second after the program
        check_child_output(a)
    print("PASS")

def wait_gone(pid, time, limit=120):
    """until the process has exited (gone, or a zombie nobody reaped)"""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return
        except OSError:
            return
        time.sleep(0.05)
    fail("the child %d did not exit in %d s" % (pid, limit))

def check_child_output(a):
    meta, rows = read_rank(a.out)
    if os.path.basename(meta["program"][0]) != os.path.basename(a.cmd[0]) or "child" in meta["program"]:
        fail("rank0.json was written by %s, not the program" % meta["program"])
    sizes = sorted(s["size"] for s in meta["structures"])
    if 16 * 4096 not in sizes or 64 * 4096 in sizes:
        fail("structures %s: want the program's 16 pages, not the child's 64" % sizes)
    print("child: output is the program's (%s)" % meta["program"])

def check_numa(a):
    p = run(a.cmd, a.env)
    if p.returncode != 0:
        fail("program exit %d" % p.returncode)
    meta, rows = read_rank(a.out)
    by_addr = {int(r["address"], 16): r for r in rows}
    n = 0
    for line in p.stdout.splitlines():
        if not line.startswith("OWN "):
            continue
        w = line.split()
        name, addr, owners = w[1], int(w[2], 16), [int(x) for x in w[3:]]
        for i, o in enumerate(owners):
            r = by_addr.get(addr + 4096 * i)
            if r is None:
                fail("%s page %d not in the CSV" % (name, i))
            if int(r["firsttouch.thread"]) != o:
                fail("%s page %d first touched by %s, owner %d" % (name, i, r["firsttouch.thread"], o))
            n += 1
    if n == 0:
        fail("no OWN lines")
    print("numa: %d pages first touched by their owner thread" % n)
    print("PASS")

def check_mpi(a):
    p = run(a.cmd, {}, timeout=200)
    if p.returncode != 0:
        fail("mpiexec exit %d" % p.returncode)
    segs = [l.split() for l in p.stdout.splitlines() if l.startswith("SEG ")]
    ranks = sorted({int(s[1]) for s in segs})
    metas = {r: read_rank(a.out, r)[0] for r in ranks}
    if len(ranks) < 2:
        fail("want 2+ ranks, got %s" % ranks)

    def file_off(meta, addr):
        for m in meta["mappings"]:
            lo, hi = int(m["start"], 16), int(m["end"], 16)
            if lo <= addr < hi:
                return m["file"], m["offset"] + addr - lo
        return None

    # first-touch time of each (file, offset) page in each rank
    ft = {}
    for r, meta in metas.items():
        if not meta["mappings"]:
            fail("rank %d: no mappings" % r)
        for page, ns in meta["shared_firsttouch_ns"].items():
            fo = file_off(meta, int(page, 16))
            if fo:
                ft.setdefault(fo, {})[r] = ns
    # the physical frames (when pagemap was readable) must agree with (file, offset)
    frames = {}
    for r, meta in metas.items():
        for page, pfn in meta.get("pfns", {}).items():
            fo = file_off(meta, int(page, 16))
            if fo:
                frames.setdefault(fo, set()).add(pfn)
    if any(len(v) > 1 for v in frames.values()):
        fail("one (file, offset) page with several physical frames")
    print("mpi: %d shared pages with physical frames, consistent with (file, offset)" % len(frames))
    # Open MPI's / clampi's own heap blocks made inside
    # MPI_Win_allocate_shared, CMPI_Win_allocate, CMPI_Alloc_mem are not the program's
    # variables; the segments those calls return (mappings) are
    for r, meta in metas.items():
        for name in ("plain", "cbase", "hbuf"):
            kinds = sorted({s["kind"] for s in meta["structures"] if s["name"] == name})
            if kinds != ["mmap"]:
                fail("rank %d: structures named %s have kinds %s, want only the mapping" % (r, name, kinds))
        if not any(s["name"].startswith("alloc@libmpi") for s in meta["structures"]):
            fail("rank %d: no allocation attributed to libmpi" % r)
        # allocations deep inside MPI_Init reach the program's call (or at least a library);
        # one made in a library's own thread is never placed in the sampler's trampoline
        own = set(os.listdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../src/locality/sample")))
        for st in meta["structures"]:
            if st["name"] == "alloc@?":
                fail("rank %d: a structure with no known allocator (%s bytes): its stack was cut short" % (r, st["size"]))
            if st["alloc_location"].split(":")[0] in own:
                fail("rank %d: %s allocated at %s, a line of the sampler's own" % (r, st["name"], st["alloc_location"]))
    # The program starts no thread: any other is the MPI's (progress, PMIx, UCX async), named
    # by the library that created it, and the report leaves it out of lambda
    report = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "locality", "report.py")
    rp = subprocess.run([sys.executable, report, a.out, "--no-plots"], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, universal_newlines=True)
    if rp.returncode != 0:
        fail("report exit %d: %s" % (rp.returncode, rp.stderr[-400:]))
    with open(os.path.join(a.out, "report", "report.json")) as f:
        lam = json.load(f)["load_imbalance"]
    helpers = []
    for r, meta in metas.items():
        starts = meta.get("thread_creator")
        if starts is None or len(starts) != meta["threads"] or starts[0] != "":
            fail("rank %d: thread_creator %s for %d threads" % (r, starts, meta["threads"]))
        for t, m in enumerate(starts[1:], 1):
            if not m.startswith("lib"):
                fail("rank %d: thread %d created by %r, not by a library" % (r, t, m))
            helpers.append("r%d.t%d" % (r, t))
    if sorted(lam["runtime_threads"]) != sorted(helpers) or lam["threads_counted"] != len(ranks):
        fail("lambda: runtime threads %s (want %s), %d threads counted (want %d)"
             % (lam["runtime_threads"], helpers, lam["threads_counted"], len(ranks)))
    print("mpi: the MPI's threads %s left out of lambda (%s)" %
          (helpers, sorted({m for meta in metas.values() for m in meta["thread_creator"][1:]})))
    files = [{m["file"] for m in meta["mappings"]} for meta in metas.values()]
    if not set.intersection(*files):
        fail("no shared file common to all ranks")
    for s in segs:
        r, name, addr, size = int(s[1]), s[2], int(s[3], 16), int(s[4])
        # whole pages of the segment only: a page it shares with a neighbour (a segment
        # not starting on a page boundary) may rightly be placed by that neighbour
        first_page, end = (addr + 4095) & ~4095, addr + size
        pages = list(range(first_page, end - 4095, 4096))
        firsts, owner_first = 0, 0
        for pg in pages:
            fo = file_off(metas[r], pg)
            if fo is None:
                fail("rank %d %s: page not in a recorded shared mapping" % (r, name))
            times = ft.get(fo, {})
            if not times:
                continue
            firsts += 1
            if min(times, key=times.get) == r:
                owner_first += 1
        print("mpi: rank %d %-11s pages first touched by their owner: %d/%d" % (r, name, owner_first, len(pages)))
        if name.startswith("clampi") and owner_first != len(pages):
            fail("rank %d %s: owner first on %d of %d pages" % (r, name, owner_first, len(pages)))
    print("PASS")

def check_fortran(a):
    """ls_fortran.f90: each allocated object named as the program names it (a, b, dom%x of
    one allocate statement; u of another; v, w of one continued over two lines), checked by
    its size, at its statement's line."""
    p = run(a.cmd, a.env)
    if p.returncode != 0:
        fail("program exit %d" % p.returncode)
    meta, _ = read_rank(a.out)
    base = os.path.basename(a.src)
    n = 16 * 512 * 8
    want = {"a": (n, "@LIST"), "b": (2 * n, "@LIST"), "dom%x": (3 * n, "@LIST"), "u": (512 * 20 * 8, "@SINGLE")}
    got = {}
    for s in meta["structures"]:
        got.setdefault(s["name"], []).append(s)
    # a statement continued over lines: the compiler puts its allocations on one of them
    cont = ["%s:%d" % (base, l) for l in range(marker_line(a.src, "@CONT_FIRST"), marker_line(a.src, "@CONT_LAST") + 1)]
    want.update({"v": (5 * n, cont), "w": (6 * n, cont)})
    for name, (size, mark) in want.items():
        ss = got.get(name, [])
        if len(ss) != 1:
            fail("structure %s: %d found (%s)" % (name, len(ss), sorted(got)))
        locs = mark if isinstance(mark, list) else ["%s:%d" % (base, marker_line(a.src, mark))]
        if ss[0]["size"] != size or ss[0]["alloc_location"] not in locs:
            fail("%s: size %d at %s, want %d at %s" % (name, ss[0]["size"], ss[0]["alloc_location"], size, locs))
    print("PASS")

def check_members(a):
    """tests/locality/members.cpp: C++ members named as a debugger prints them, two on one
    line told apart (m_a, m_b; m_p, m_q), each once at its own line; an allocation
    wrapper's arrays named after the caller's variable (m_vol, pressure; density, whose
    wrapper names its own variable and returns it)."""
    p = run(a.cmd, a.env)
    if p.returncode != 0:
        fail("program exit %d" % p.returncode)
    meta, _ = read_rank(a.out)
    base = os.path.basename(a.src)
    got = {}
    for s in meta["structures"]:
        got.setdefault(s["name"], []).append(s["alloc_location"])
    for name, mark in (("m_x", "@MX"), ("m_y", "@MY"), ("m_a", "@PAIR"), ("m_b", "@PAIR"), ("m_p", "@FLAT"),
                       ("m_q", "@FLAT"), ("m_vol", "@WRAP"), ("pressure", "@WRAP"), ("density", "@OWNVAR"),
                       ("m_u", "@MIXED"), ("m_w", "@MIXED"), ("cells", "@GRID"), ("halo", "@GRID"),
                       ("m_s", "@SPLIT_S"), ("m_t", "@SPLIT_T"), ("m_f", "@ALIASED"), ("m_g", "@ALIASED"),
                       ("data_", "@SOLVER"), ("rhs_", "@SOLVER"), ("left", "@TWO"), ("right", "@TWO"), ("buf", "@HOLDER")):
        want = ["%s:%d" % (base, marker_line(a.src, mark))]
        if got.get(name) != want:
            fail("%s allocated at %s, want %s (structures %s)" % (name, got.get(name), want, sorted(got)))
    for wrong in ("field", "n", "scale", "size", "mixed", "grid", "split", "count", "nx", "aliased", "solver", "holder"):
        if wrong in got:
            fail("a structure named '%s' (structures %s)" % (wrong, sorted(got)))
    print("PASS")

def check_past_end(a):
    """ls_line_past_end.c: an allocation line past its file's end (line 9000 of a short
    file, as addr2line reports some inlined library lines) is not the program's: the
    structure is main's `grid`, at main's line."""
    p = run(a.cmd, a.env)
    if p.returncode != 0:
        fail("program exit %d" % p.returncode)
    meta, _ = read_rank(a.out)
    base = os.path.basename(a.src)
    got = [(s["name"], s["alloc_location"]) for s in meta["structures"] if s["size"] == 64 * 512 * 8]
    want = [("grid", "%s:%d" % (base, marker_line(a.src, "@GRID")))]
    if got != want:
        fail("structures of 256 KiB: %s, want %s" % (got, want))
    print("PASS")

def check_pipe(a):
    """ls_pipe.c: long write/writev/send/sendmsg of sampled memory into a slow reader
    write everything, with runs opened ahead and without: every call writes its whole
    buffer, every byte read is the right one, and what was read is what was written."""
    for ahead in ("0", "256"):
        print("ahead=%s:" % ahead, flush=True)
        p = run(a.cmd, dict(a.env, CLAMPI_LOCALITY_SAMPLE_AHEAD=ahead))
        calls = re.findall(r"^(\w+) (-?\d+) of (\d+), read (\d+), wrong (\d+)$", p.stdout, re.M)
        if len(calls) != 4:
            fail("ls_pipe printed %d of its 4 calls (exit %d)" % (len(calls), p.returncode))
        for name, w, n, got, wrong in calls:
            if int(wrong) or int(got) != int(w):
                fail("%s: %s written, %s read, %s wrong bytes" % (name, w, got, wrong))
            if int(w) != int(n):
                fail("ahead=%s: %s wrote %s of %s bytes" % (ahead, name, w, n))
    print("PASS")

def check_rewrite(a):
    """ls_rewrite.c: an 8 MiB buffer written to a file 1,000 times while the sampler
    re-protects 256 runs of 8 of its pages (as many as it has) per millisecond: every
    pwrite writes it whole, with runs opened ahead and without. Four runs each: a page left
    closed while marked open cut a run short in about 8 of 10 runs, so one run alone can
    miss it."""
    for ahead in ("0", "256"):
        for i in range(4):
            p = run(a.cmd, dict(a.env, CLAMPI_LOCALITY_SAMPLE_AHEAD=ahead, CLAMPI_LOCALITY_SAMPLE_PAGES="256"))
            if p.returncode != 0 or "rewrite 1000 rounds" not in p.stdout:
                fail("ahead=%s, run %d of 4: exit %d" % (ahead, i + 1, p.returncode))
    print("PASS")

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["known", "crash", "numa", "mpi", "vector", "static", "reuse", "child", "ahead", "fortran", "members", "pipe", "rewrite", "past_end"])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--src")
    argv = sys.argv[1:]
    if "--" not in argv:
        fail("usage: check_sample.py MODE --lib LIB --out DIR [--src SRC] -- COMMAND...")
    cut = argv.index("--")
    a = ap.parse_args(argv[:cut])
    a.cmd = argv[cut + 1:]
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    a.env = {"LD_PRELOAD": a.lib, "CLAMPI_LOCALITY_OUT": a.out, "CLAMPI_LOCALITY_SAMPLE_PERIOD_MS": "1"}
    if a.mode == "mpi":  # the preload goes on the ranks only, through env
        a.cmd = a.cmd[:-1] + ["env", "LD_PRELOAD=" + a.lib, "CLAMPI_LOCALITY_OUT=" + a.out, a.cmd[-1]]
    {"known": check_known, "crash": check_crash, "numa": check_numa, "mpi": check_mpi,
     "vector": check_vector, "static": check_static, "reuse": check_reuse, "child": check_child,
     "ahead": check_ahead, "fortran": check_fortran,
     "members": check_members, "pipe": check_pipe, "rewrite": check_rewrite,
     "past_end": check_past_end}[a.mode](a)

if __name__ == "__main__":
    main()
