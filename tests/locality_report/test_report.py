#!/usr/bin/env python3
"""Unit tests of tools/locality/report.py on hand-written page tables (no MPI, no tracer).

Each test writes rank<R>.csv/json files as `clampi-locality run` would and checks the
numbers the report derives from them against values computed by hand."""

import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("CLAMPI_LOCALITY_TOOLS", os.path.join(HERE, "..", "..", "tools", "locality")))
import report  # noqa: E402

HEADER = "address,alloc.thread,alloc.location,firsttouch.thread,firsttouch.location,struct.name"


def meta(rank, threads, **extra):
    m = {"tool": "clampi-locality", "version": 1, "mode": "exact", "counts": "exact", "rank": rank,
         "pid": 100 + rank, "program": ["./app"], "page_size": 4096, "min_size": 4096, "complete": True,
         "exit_status": 0, "signal": None, "threads": threads, "thread_work": [1000] * threads,
         "work_unit": "instructions", "thread_accesses": [0] * threads, "structures": [], "mappings": []}
    m.update(extra)
    return m


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="clampi-report-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write_rank(self, rank, rows, nthreads, csv_text=None, **json_extra):
        with open(os.path.join(self.dir, f"rank{rank}.csv"), "w") as f:
            if csv_text is not None:
                f.write(csv_text)
            else:
                f.write(HEADER + "".join(f",T{i}" for i in range(nthreads)) + "\n")
                for r in rows:
                    f.write(",".join(str(x) for x in r) + "\n")
        with open(os.path.join(self.dir, f"rank{rank}.json"), "w") as f:
            json.dump(meta(rank, nthreads, **json_extra), f)

    def run_report(self, *args, expect=0, plots=False):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = report.main([self.dir, *args] + ([] if plots else ["--no-plots"]))
        self.assertEqual(rc, expect, f"exit status {rc}; stderr: {err.getvalue()}")
        self.stderr = err.getvalue()
        if expect == 0:
            outdir = os.path.join(self.dir, "report")
            with open(os.path.join(outdir, "report.json")) as f:
                self.rep = json.load(f)
            with open(os.path.join(outdir, "summary.txt")) as f:
                self.summary = f.read()
        return rc

    def structure(self, name):
        return next(s for s in self.rep["structures"] if s["name"] == name)

    # ---- the hybrid-MPI locality paper, Table 1: three threads, two pages ----------------------------------
    def write_table1(self):
        # Threads 1..3 of the paper are T0..T2 here. Page A: first touch by thread 1, accesses
        # 20/5/10. Page B: first touch by thread 2, accesses 0/1/10.
        self.write_rank(0, [("0x7f0000000000", 0, "table1.c:10", 0, "table1.c:20", "A", 20, 5, 10),
                            ("0x7f0000001000", 0, "table1.c:11", 1, "table1.c:30", "B", 0, 1, 10)], 3)

    def test_table1_locality_and_first_touch_correctness(self):
        self.write_table1()
        self.run_report()
        self.assertAlmostEqual(self.structure("A")["locality_pct"], 100 * 20 / 35)
        self.assertEqual(round(self.structure("A")["locality_pct"], 1), 57.1)
        self.assertEqual(round(self.structure("B")["locality_pct"], 1), 9.1)
        o = self.rep["overall"]
        self.assertEqual((o["local_accesses"], o["accesses"]), (21, 46))
        self.assertEqual(round(o["locality_pct"], 1), 45.7)
        self.assertEqual(o["first_touch_correctness_pct"], 50.0)
        self.assertEqual(self.structure("A")["first_touch_correctness_pct"], 100.0)
        self.assertEqual(self.structure("B")["first_touch_correctness_pct"], 0.0)
        self.assertIn("overall locality:            45.7 %", self.summary)
        self.assertIn("first-touch correctness:     50.0 %", self.summary)
        # per page
        with open(os.path.join(self.dir, "report", "pages.csv")) as f:
            rows = [line.split(",") for line in f.read().splitlines()[1:]]
        self.assertEqual([(r[1], r[6], r[7]) for r in rows],
                         [("0x7f0000000000", "57.14", "1"), ("0x7f0000001000", "9.09", "0")])
        # the diagnosis sentence of the wrongly placed page
        b = self.structure("B")["description"]
        self.assertIn("first touched by T1 at table1.c:30, mostly used by T2", b)
        # communication matrix: A shared by T0/T1 (min 5), T0/T2 (10), T1/T2 (5); B by T1/T2 (1)
        self.assertEqual(self.rep["comm_matrix"], [[0, 5, 10], [5, 0, 6], [10, 6, 0]])

    def test_all_outputs_written(self):
        self.write_table1()
        self.run_report(plots=True)
        outdir = os.path.join(self.dir, "report")
        for name in ("summary.txt", "report.json", "pages.csv", "index.html"):
            self.assertTrue(os.path.getsize(os.path.join(outdir, name)) > 0, name)
        with open(os.path.join(outdir, "index.html")) as f:
            page = f.read()
        self.assertIn('href="summary.txt"', page)
        self.assertIn('href="report.json"', page)
        if report._pyplot() is not None:
            for png in ("comm_matrix.png", "structures.png"):
                with open(os.path.join(outdir, png), "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", png)
                self.assertIn(f'href="{png}"', page)
        self.assertEqual([n for n in os.listdir(outdir) if ".tmp" in n], [])

    def test_tie_with_first_toucher_is_correct(self):
        self.write_rank(0, [("0x1000", 0, "a.c:1", 1, "a.c:2", "x", 7, 7)], 2)
        self.run_report()
        self.assertEqual(self.rep["overall"]["first_touch_correctness_pct"], 100.0)
        self.assertEqual(self.rep["overall"]["locality_pct"], 50.0)

    def test_untouched_pages_do_not_count(self):
        self.write_rank(0, [("0x1000", 0, "a.c:1", -1, "?", "x", 0, 0),
                            ("0x2000", 0, "a.c:1", 0, "a.c:3", "x", 4, 0)], 2)
        self.run_report()
        o = self.rep["overall"]
        self.assertEqual((o["pages"], o["pages_with_accesses"]), (2, 1))
        self.assertEqual((o["locality_pct"], o["first_touch_correctness_pct"]), (100.0, 100.0))

    def test_allocations_scope_leaves_out_untracked_pages(self):
        # a stack page (alloc.thread -1) with bad locality does not count for "allocations"
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 9, 1),
                            ("0x9000", -1, "?", 1, "a.c:5", "[stack T0]", 10, 0)], 2)
        self.run_report()
        self.assertEqual(self.rep["allocations"]["locality_pct"], 90.0)
        self.assertEqual(self.rep["allocations"]["pages"], 1)
        self.assertEqual(self.rep["overall"]["locality_pct"], 45.0)

    # ---- load imbalance, Eq. 1 --------------------------------------------------------
    def test_lambda_from_known_split(self):
        # L = (100, 100, 100, 300): max/avg = 300/150 -> lambda = 100 %
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 1, 1, 1, 1)], 4,
                        thread_work=[100, 100, 100, 300])
        self.run_report()
        lam = self.rep["load_imbalance"]
        self.assertAlmostEqual(lam["lambda_pct"], 100.0)
        self.assertEqual(lam["threads_counted"], 4)
        self.assertIn("load imbalance lambda:       100.0 %", self.summary)

    def test_lambda_balanced_and_helper_threads(self):
        # two workers with equal work and an MPI progress thread that hardly runs
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 1, 1, 0)], 3,
                        thread_work=[5000, 5000, 3])
        self.run_report()
        lam = self.rep["load_imbalance"]
        self.assertAlmostEqual(lam["lambda_pct"], 0.0)
        self.assertEqual((lam["threads_counted"], lam["threads"]), (2, 3))
        self.assertAlmostEqual(lam["lambda_all_threads_pct"], (5000 / (10003 / 3) - 1) * 100)

    def test_lambda_leaves_out_runtime_threads(self):
        # an MPI progress thread and UCX's async thread that ran a lot (thread_creator names
        # their libraries) are not the program's; OpenMP's and the program's own threads are
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 1, 1, 1, 1, 1)], 5,
                        thread_work=[100, 300, 900, 100, 800],
                        thread_creator=["", "libgomp.so.1", "libopen-pal.so.40", "prog", "libucs.so.0.0.0"])
        self.run_report()
        lam = self.rep["load_imbalance"]
        self.assertEqual(lam["runtime_threads"], ["T2", "T4"])
        self.assertEqual((lam["threads_counted"], lam["threads"]), (3, 5))
        self.assertAlmostEqual(lam["lambda_pct"], 80.0)       # 300 / (500 / 3) - 1
        self.assertIn("runtime threads left out: T2, T4", self.summary)
        with open(os.path.join(self.dir, "rank0.json"), "w") as f:
            json.dump(meta(0, 5, thread_creator="libmpi.so"), f)
        self.assert_rejected("thread_creator must be a list of strings")

    def test_lambda_across_ranks(self):
        # ranks are threads of their own process: L = (10, 30 | 20, 20) -> 30/20 - 1 = 50 %
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 1, 1)], 2, thread_work=[10, 30])
        self.write_rank(1, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 1, 1)], 2, thread_work=[20, 20])
        self.run_report()
        self.assertAlmostEqual(self.rep["load_imbalance"]["lambda_pct"], 50.0)
        self.assertEqual(self.rep["threads"], ["r0.t0", "r0.t1", "r1.t0", "r1.t1"])

    # ---- MPI: pages of a shared window seen by every rank -----------------------------
    def write_shared_window(self, nranks=4, pages=4, use_pfn=False):
        # rank 0 creates and initializes a 4-page window; every rank reads it (mapped at a
        # different virtual address per rank); each rank also has a private page.
        for r in range(nranks):
            base = 0x7f0000000000 + r * 0x10000000
            rows = []
            for p in range(pages):
                ft = 0 if r == 0 else 0
                rows.append((f"0x{base + p * 4096:x}", 0, "win.c:40", ft, f"win.c:{50 if r == 0 else 60}",
                             "win", 10, 0))
            rows.append((f"0x{0x5000000 + r * 4096:x}", 0, "win.c:30", 0, "win.c:31", "mine", 8, 0))
            extra = {}
            if use_pfn:
                extra["pfns"] = {f"0x{base + p * 4096:x}": 9000 + p for p in range(pages)}
            else:
                extra["mappings"] = [{"start": f"0x{base:x}", "end": f"0x{base + pages * 4096:x}",
                                      "file": "/dev/shm/osc_rdma.win.1", "offset": 0, "shared": True}]
            self.write_rank(r, rows, 2, **extra)

    def test_shared_window_pages_matched_across_ranks(self):
        self.write_shared_window()
        self.run_report()
        o = self.rep["overall"]
        self.assertEqual(o["pages"], 4 + 4)      # 4 window pages (one each, not 16) + 4 private pages
        win = self.structure("shared:win")
        self.assertEqual((win["pages"], win["accesses"]), (4, 160))
        self.assertEqual(win["ranks"], [0, 1, 2, 3])
        # rank 0 first-touched every page; its accesses are 40 of 160
        self.assertEqual(win["locality_pct"], 25.0)
        self.assertEqual(win["first_touch_thread"], "r0.t0")
        self.assertEqual(len(self.rep["shared"]), 1)
        self.assertIn("rank 0 first-touched the whole shared window, ranks 1\u20133 make 75.0 % of its accesses",
                      self.rep["shared"][0])
        self.assertIn("ranks 1\u20133 make 75.0 %", self.summary)
        self.assertEqual(self.structure("r2:mine")["locality_pct"], 100.0)
        # communication: r0.t0 shares every window page with r1.t0, r2.t0, r3.t0 (4 pages x 10)
        comm = self.rep["comm_matrix"]
        names = self.rep["threads"]
        self.assertEqual(comm[names.index("r0.t0")][names.index("r3.t0")], 40)
        self.assertEqual(comm[names.index("r0.t0")][names.index("r0.t1")], 0)

    def test_shared_pages_matched_by_physical_frame(self):
        self.write_shared_window(nranks=2, pages=3, use_pfn=True)
        self.run_report()
        win = self.structure("shared:win")
        self.assertEqual((win["pages"], win["accesses"], win["locality_pct"]), (3, 60, 50.0))

    def test_private_pages_at_equal_addresses_stay_apart(self):
        # same virtual address in two processes, no shared mapping: two different pages
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 5)], 1)
        self.write_rank(1, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 5)], 1)
        self.run_report()
        self.assertEqual(self.rep["overall"]["pages"], 2)
        self.assertEqual(self.rep["shared"], [])

    # ---- node-level locality ------------------------------------------------------------
    def test_node_level_locality_with_map(self):
        # 4 threads on 2 nodes; the page is first touched by T0 (node 0): thread locality
        # 10/100, node locality (T0 + T1)/100 = 40 %
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 10, 30, 40, 20),
                            ("0x2000", 0, "a.c:1", 3, "a.c:2", "y", 0, 0, 50, 50)], 4)
        self.run_report("--nodes", "0-1:0,2-3:1")
        self.assertEqual(self.structure("x")["locality_pct"], 10.0)
        self.assertEqual(self.structure("x")["node_locality_pct"], 40.0)
        self.assertEqual(self.structure("y")["node_locality_pct"], 100.0)
        o = self.rep["overall"]
        self.assertEqual(o["node_locality_pct"], 70.0)      # (40 + 100) / 200
        self.assertEqual(self.rep["nodes"]["count"], 2)
        self.assertEqual(self.rep["nodes"]["map"], {"T0": 0, "T1": 0, "T2": 1, "T3": 1})

    def test_node_map_by_rank(self):
        self.write_shared_window(nranks=2, pages=2)
        self.run_report("--nodes", "r0:0,r1:1")
        self.assertEqual(self.structure("shared:win")["node_locality_pct"], 50.0)
        self.run_report("--nodes", "r0:0,r1.t0-1:0")
        self.assertEqual(self.structure("shared:win")["node_locality_pct"], 100.0)

    def test_default_nodes_from_machine(self):
        self.write_table1()
        self.run_report()
        self.assertGreaterEqual(self.rep["nodes"]["count"], 1)
        self.assertIn("machine topology", self.rep["nodes"]["source"])

    # ---- bad input: clear message, non-zero exit, nothing overwritten -----------------
    def assert_rejected(self, needle, *args):
        outdir = os.path.join(self.dir, "report")
        before = {}
        if os.path.isdir(outdir):
            for n in os.listdir(outdir):
                with open(os.path.join(outdir, n), "rb") as f:
                    before[n] = f.read()
        self.run_report(*args, expect=1)
        self.assertIn(needle, self.stderr)
        self.assertIn("clampi-locality report: error:", self.stderr)
        after = {}
        if os.path.isdir(outdir):
            for n in os.listdir(outdir):
                with open(os.path.join(outdir, n), "rb") as f:
                    after[n] = f.read()
        self.assertEqual(before, after, "a rejected input changed the existing report")

    def test_missing_dir(self):
        shutil.rmtree(self.dir)
        self.assert_rejected("no such directory")
        os.makedirs(self.dir)

    def test_empty_dir(self):
        self.assert_rejected("no rank<R>.csv files")

    def test_garbage_csv_keeps_previous_report(self):
        self.write_table1()
        self.run_report()                        # a good report exists ...
        with open(os.path.join(self.dir, "rank0.csv"), "wb") as f:
            f.write(b"\x00\x17garbage\xff\xfe not,a,page,table\n")
        self.assert_rejected("rank0.csv")        # ... and survives a bad input unchanged

    def test_bad_rows(self):
        cases = [
            ("0x1000,0,a.c:1,0,a.c:2,x,1\n", "fields"),
            ("4096,0,a.c:1,0,a.c:2,x,1,2\n", "not hexadecimal"),
            ("0x1000,0,a.c:1,zero,a.c:2,x,1,2\n", "firsttouch.thread is not an integer"),
            ("0x1000,0,a.c:1,0,a.c:2,x,1,-2\n", "negative"),
            ("0x1000,0,a.c:1,0,a.c:2,x,1,2\n0x1000,0,a.c:1,0,a.c:2,x,1,2\n", "listed twice"),
            ("0x1000,0,a.c:1,5,a.c:2,x,1,2\n", "first toucher T5"),
        ]
        for body, needle in cases:
            with self.subTest(needle=needle):
                self.write_rank(0, [], 2, csv_text=HEADER + ",T0,T1\n" + body)
                self.assert_rejected(needle)

    def test_bad_header(self):
        self.write_rank(0, [], 2, csv_text="addr,thread,count\n0x1000,0,1\n")
        self.assert_rejected("not a clampi-locality page table")
        self.write_rank(0, [], 2, csv_text="")
        self.assert_rejected("empty file")

    def test_unreadable_csv(self):
        os.makedirs(os.path.join(self.dir, "rank0.csv"))     # unreadable even for root
        self.assert_rejected("cannot read")

    def test_garbage_json(self):
        self.write_table1()
        with open(os.path.join(self.dir, "rank0.json"), "w") as f:
            f.write("{\"rank\": 0, \"thread_work\": [1, 2,")
        self.assert_rejected("not valid JSON")
        with open(os.path.join(self.dir, "rank0.json"), "w") as f:
            json.dump(meta(0, 3, thread_work="lots"), f)
        self.assert_rejected("thread_work must be a list")
        with open(os.path.join(self.dir, "rank0.json"), "w") as f:
            json.dump(meta(3, 3), f)
        self.assert_rejected("says rank 3")

    def test_bad_node_map(self):
        self.write_table1()
        self.assert_rejected("cannot parse", "--nodes", "zero:one")
        self.assert_rejected("no node for thread T2", "--nodes", "0-1:0")

    def test_usage_error(self):
        with redirect_stderr(io.StringIO()):
            self.assertEqual(report.main([]), 2)

    def test_incomplete_rank_is_reported(self):
        self.write_table1()
        with open(os.path.join(self.dir, "rank0.json"), "w") as f:
            json.dump(meta(0, 3, complete=False, exit_status=None, signal="SIGSEGV"), f)
        self.run_report()
        self.assertIn("rank 0: output incomplete (program ended by SIGSEGV", self.summary)

    # ---- who uses a page, whose data it is, what was not recorded ------------------------
    def test_no_dominant_user_is_not_called_mostly(self):
        # T0 first touches both pages, T1-T3 use them equally: no thread "mostly" uses them
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 1, 30, 30, 30),
                            ("0x2000", 0, "a.c:1", 0, "a.c:2", "x", 1, 30, 31, 30)], 4)
        self.run_report()
        d = self.structure("x")["description"]
        self.assertNotIn("mostly used by", d)
        self.assertIn("shared equally by T1\u2013T3 (2 pages first touched by the wrong thread)", d)
        # one clear user is still named
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 1, 90, 10, 10)], 4)
        self.run_report()
        self.assertIn("mostly used by T1", self.structure("x")["description"])

    def test_shared_window_one_other_rank_makes(self):
        self.write_shared_window(nranks=2, pages=3)
        self.run_report()
        text = self.rep["shared"][0]
        self.assertIn("rank 1 makes 50.0 % of its accesses", text)
        self.assertNotIn("rank 1 make ", text)

    def test_incomplete_without_signal_has_no_none(self):
        self.write_table1()
        with open(os.path.join(self.dir, "rank0.json"), "w") as f:
            json.dump(meta(0, 3, complete=False, exit_status=None, signal=None), f)
        self.run_report()
        self.assertIn("rank 0: output incomplete (program ended abnormally)", self.summary)
        self.assertNotIn("None", self.summary)

    def test_two_runs_in_one_directory_are_refused(self):
        # an earlier 2-rank run left rank1.*; the new 1-rank run wrote rank0.*
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 5, 5, 5)], 3, run_id="run:b", world_size=1)
        self.write_rank(1, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 5, 5, 5)], 3, run_id="run:a", world_size=2)
        self.run_report(expect=1)
        self.assertIn("different runs", self.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "report")))
        # same run id but a rank beyond the run's world size
        self.write_rank(1, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 5, 5, 5)], 3, run_id="run:b", world_size=1)
        self.run_report(expect=1)
        self.assertIn("does not belong to this run of 1 rank", self.stderr)
        # a rank file without a run id next to one with an id (older tool, or no CLI)
        self.write_rank(1, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 5, 5, 5)], 3)
        self.run_report(expect=1)
        # exact and sample output mixed
        os.remove(os.path.join(self.dir, "rank0.json"))
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "x", 5, 5, 5)], 3, mode="sample")
        self.run_report(expect=1)
        self.assertIn("modes exact, sample", self.stderr)

    def test_program_data_scope_leaves_out_libraries_and_stacks(self):
        # item 11: the program's array (local), the OpenMP runtime's buffer and a thread
        # stack (remote), libc's static data and an unattributed page
        self.write_rank(0, [("0x1000", 0, "a.c:1", 0, "a.c:2", "u", 10, 0),
                            ("0x2000", 0, "a.c:1", 1, "a.c:3", "u", 0, 10),
                            ("0x3000", 1, "a.c:9", 0, "?", "alloc@libgomp.so.1.0.0", 0, 50),
                            ("0x4000", -1, "?", 0, "?", "[stack T1]", 0, 30),
                            ("0x5000", -1, "?", 0, "?", "libc.so.6:__libc_initial", 0, 7),
                            ("0x6000", -1, "?", 0, "?", "?", 0, 3),
                            ("0x7000", -1, "?", 1, "a.c:5", "grid", 0, 4)], 2)
        self.run_report()
        sc = self.rep["scopes"]
        self.assertEqual((sc["program"]["pages"], sc["program"]["locality_pct"]), (3, 100.0))
        self.assertEqual((sc["libraries"]["pages"], sc["stacks"]["pages"], sc["unattributed"]["pages"]), (2, 1, 1))
        self.assertLess(self.rep["overall"]["locality_pct"], 30)
        self.assertIn("program data:              locality 100.0 %", self.summary)

    def test_no_pages_is_said_plainly(self):
        self.write_rank(0, [], 1, mode="sample", counts="sampled",
                        sampling={"static_data": "the executable's .data/.bss objects"})
        self.run_report()
        self.assertIn("no pages were recorded (sample mode)", self.summary)
        self.assertIn("sample mode tracked static data: the executable's .data/.bss objects", self.summary)

    def test_sampler_drops_and_confidence_are_reported(self):
        rows = [(f"0x{0x10000 + i * 4096:x}", 0, "a.c:1", 0, "a.c:2", "u", 1 if i < 50 else 0, 0) for i in range(60)]
        self.write_rank(0, rows, 2, mode="sample", counts="sampled",
                        coverage={"page_capacity": 48, "pages_recorded": 48, "pages_touched": 60,
                                  "pages_sampled": 50, "dropped": 333, "allocations_untracked": 2,
                                  "bytes_untracked": 8192, "memory_bound_bytes": 135275776})
        self.run_report()
        self.assertIn("rank 0: lost to the sampler's memory bound (129 MiB of tables): 333 page records", self.summary)
        self.assertIn("2 allocations (8,192 bytes) not tracked", self.summary)
        self.assertIn("sampling confidence: 50 of 60 touched pages got samples; fair", self.summary)
        self.assertIn("fair", self.rep["sampling_confidence"])


if __name__ == "__main__":
    unittest.main()
