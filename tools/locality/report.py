#!/usr/bin/env python3
"""clampi-locality report: locality metrics from per-rank page tables (the hybrid-MPI locality paper).

Reads DIR/rank<R>.csv (one line per page: address, alloc.thread, alloc.location,
firsttouch.thread, firsttouch.location, struct.name, T0..T<n-1>) and DIR/rank<R>.json
(docs/locality-format.md) and writes, to OUTDIR (default DIR/report):
summary.txt, report.json, pages.csv, comm_matrix.png, structures.png, index.html.

Metrics (the hybrid-MPI locality paper, section 2 and Table 1):
  locality of a page      = accesses by the thread that touched it first / all its accesses
  locality of a structure = the same, summed over its pages (weighted by accesses); overall alike
  first-touch correctness = share of pages whose first toucher is the thread accessing it most
  load imbalance lambda   = (max(L) / avg(L) - 1) * 100 %   (Eq. 1, L = work per thread)
  node-level locality     = accesses by threads on the NUMA node of the first toucher / all

Called by `clampi-locality report` as main(argv) with argv = the arguments after `report`;
also runnable as `python3 report.py DIR [--nodes MAP] [-o OUTDIR]`.
Exit status: 0 on success, 1 on bad input (nothing written), 2 on bad usage.
"""

import argparse
import csv
import html
import io
import json
import os
import re
import sys
from collections import Counter, defaultdict

PROG = "clampi-locality report"
FIXED_COLUMNS = ["address", "alloc.thread", "alloc.location", "firsttouch.thread",
                 "firsttouch.location", "struct.name"]
OUTPUT_FILES = ["summary.txt", "report.json", "pages.csv", "comm_matrix.png",
                "structures.png", "index.html"]
# Threads that did less than this share of the busiest thread's work are runtime helpers
# (MPI progress threads, idle pool threads); lambda is also given without them.
HELPER_WORK_SHARE = 0.01
# Threads created by code in one of these libraries (the rank JSON's "thread_creator")
# are the runtimes' own (MPI progress, UCX async, PMIx, libevent threads,
# clampi's service): lambda leaves them out whatever they did. OpenMP's, std::thread's and
# the program's own threads are the program's.
RUNTIME_MODULES = re.compile(r"lib(mpi|mpich|open-pal|open-rte|pmix|prrte|pmi|event|ucs|uct|ucp|ucm|fabric|psm"
                             r"|hwloc|clampi)([-_.0-9a-z]*)\.so")


class ReportError(Exception):
    """Bad input: reported on stderr, exit status 1, nothing written."""


# ---------------------------------------------------------------- input ----------------

class Page:
    """One page as one rank saw it (one CSV line)."""
    __slots__ = ("rank", "address", "alloc_thread", "alloc_location", "ft_thread",
                 "ft_location", "struct", "counts")

    def __init__(self, rank, address, alloc_thread, alloc_location, ft_thread, ft_location,
                 struct, counts):
        self.rank, self.address = rank, address
        self.alloc_thread, self.alloc_location = alloc_thread, alloc_location
        self.ft_thread, self.ft_location = ft_thread, ft_location
        self.struct, self.counts = struct, counts


class RankData:
    def __init__(self, rank):
        self.rank = rank
        self.pages = []
        self.meta = {}
        self.nthreads = 0


def _parse_int(text, what, where):
    try:
        return int(text)
    except (TypeError, ValueError):
        raise ReportError(f"{where}: {what} is not an integer: {text!r}") from None


def read_csv(path, rank):
    """Parses one rank's page table; raises ReportError naming the file and line."""
    data = RankData(rank)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = csv.reader(f)
            try:
                header = next(rows)
            except StopIteration:
                raise ReportError(f"{path}: empty file (expected a header line)") from None
            header = [h.strip() for h in header]
            tcols = header[len(FIXED_COLUMNS):]
            if header[:len(FIXED_COLUMNS)] != FIXED_COLUMNS or \
                    tcols != [f"T{i}" for i in range(len(tcols))]:
                raise ReportError(f"{path}:1: not a clampi-locality page table: expected header "
                                  f"{','.join(FIXED_COLUMNS)},T0,T1,... got {','.join(header)[:120]!r}")
            data.nthreads = len(tcols)
            seen = set()
            for row in rows:
                where = f"{path}:{rows.line_num}"
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) != len(header):
                    raise ReportError(f"{where}: {len(row)} fields, header has {len(header)}")
                addr_text = row[0].strip()
                if not re.fullmatch(r"0[xX][0-9a-fA-F]+", addr_text):
                    raise ReportError(f"{where}: address is not hexadecimal (0x...): {addr_text!r}")
                address = int(addr_text, 16)
                if address in seen:
                    raise ReportError(f"{where}: page {addr_text} listed twice")
                seen.add(address)
                alloc_thread = _parse_int(row[1].strip(), "alloc.thread", where)
                ft_thread = _parse_int(row[3].strip(), "firsttouch.thread", where)
                for name, t in (("alloc.thread", alloc_thread), ("firsttouch.thread", ft_thread)):
                    if t < -1:
                        raise ReportError(f"{where}: {name} must be a thread id or -1, got {t}")
                try:
                    counts = [int(x) for x in row[len(FIXED_COLUMNS):]]
                except ValueError:      # find the culprit for the message
                    counts = [_parse_int(x.strip(), f"T{i}", where) for i, x in enumerate(row[len(FIXED_COLUMNS):])]
                if counts and min(counts) < 0:
                    i = next(i for i, c in enumerate(counts) if c < 0)
                    raise ReportError(f"{where}: T{i} is negative: {counts[i]}")
                data.pages.append(Page(rank, address, alloc_thread, row[2].strip() or "?", ft_thread,
                                       row[4].strip() or "?", row[5].strip() or "?", counts))
    except OSError as e:
        raise ReportError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ReportError(f"{path}: not a text file (invalid UTF-8)") from None
    except csv.Error as e:
        raise ReportError(f"{path}: malformed CSV: {e}") from None
    return data


def read_json(path, rank):
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except OSError as e:
        raise ReportError(f"{path}: cannot read: {e.strerror or e}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ReportError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(meta, dict):
        raise ReportError(f"{path}: expected a JSON object")
    if "rank" in meta and meta["rank"] != rank:
        raise ReportError(f"{path}: says rank {meta['rank']!r}, file name says {rank}")
    for key in ("thread_work", "thread_accesses"):
        v = meta.get(key)
        if v is not None and (not isinstance(v, list) or
                              not all(isinstance(x, (int, float)) and x >= 0 for x in v)):
            raise ReportError(f"{path}: {key} must be a list of non-negative numbers")
    ts = meta.get("thread_creator")
    if ts is not None and (not isinstance(ts, list) or not all(isinstance(x, str) for x in ts)):
        raise ReportError(f"{path}: thread_creator must be a list of strings")
    for key in ("mappings", "structures"):
        v = meta.get(key)
        if v is not None and not isinstance(v, list):
            raise ReportError(f"{path}: {key} must be a list")
    for m in meta.get("mappings") or []:
        try:
            int(m["start"], 16), int(m["end"], 16), int(m.get("offset", 0))
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{path}: bad mappings entry {m!r} (need start, end, offset)") from None
    pfns = meta.get("pfns")
    if pfns is not None:
        try:
            meta["pfns"] = {int(k, 16): int(v) for k, v in pfns.items()}
        except (AttributeError, TypeError, ValueError):
            raise ReportError(f"{path}: pfns must map \"0x<page>\" to an integer frame") from None
    if not isinstance(meta.get("threads", 0), int) or meta.get("threads", 0) < 0:
        raise ReportError(f"{path}: threads must be a non-negative integer")
    ps = meta.get("page_size", 4096)
    if not isinstance(ps, int) or ps <= 0:
        raise ReportError(f"{path}: page_size must be a positive integer")
    return meta


def load_dir(directory):
    """All ranks of one run, sorted by rank. Validates everything before anything is written."""
    if not os.path.isdir(directory):
        raise ReportError(f"{directory}: no such directory (expected the output of "
                          f"`clampi-locality run -o {directory}`)")
    try:
        names = os.listdir(directory)
    except OSError as e:
        raise ReportError(f"{directory}: cannot list: {e.strerror or e}") from None
    ranks = sorted(int(m.group(1)) for m in (re.fullmatch(r"rank(\d+)\.csv", n) for n in names) if m)
    if not ranks:
        raise ReportError(f"{directory}: no rank<R>.csv files (is this a clampi-locality output directory?)")
    result, warnings = [], []
    for r in ranks:
        data = read_csv(os.path.join(directory, f"rank{r}.csv"), r)
        jpath = os.path.join(directory, f"rank{r}.json")
        if os.path.exists(jpath):
            data.meta = read_json(jpath, r)
        else:
            warnings.append(f"rank{r}.json missing: no load-imbalance or shared-page data for rank {r}")
        m = data.meta
        data.nthreads = max(data.nthreads, int(m.get("threads") or 0),
                            len(m.get("thread_work") or []), len(m.get("thread_accesses") or []))
        bad = next((p for p in data.pages if p.ft_thread >= data.nthreads), None)
        if bad:
            raise ReportError(f"rank{r}.csv: page 0x{bad.address:x}: first toucher T{bad.ft_thread} "
                              f"but the run has {data.nthreads} threads")
        if m.get("complete") is False:
            sig = m.get("signal")
            status = m.get("exit_status")
            how = f"by {sig}" if sig else ("abnormally" if status is None else f"with exit status {status}")
            warnings.append(f"rank {r}: output incomplete (program ended {how}"
                            f"): counts cover the run up to that point")
        result.append(data)
    check_one_run(directory, result, warnings)
    return result, warnings


def check_one_run(directory, result, warnings):
    """The rank files must come from one run (item 12): `run` into a directory holding
    an earlier run's files used to leave a mixture that was merged without a word."""
    ids = {d.rank: d.meta.get("run_id") for d in result if d.meta}
    known = {i for i in ids.values() if i is not None}
    if len(known) > 1 or (known and None in ids.values()):
        groups = defaultdict(list)
        for r, i in ids.items():
            groups[i or "(no run id)"].append(r)
        desc = "; ".join(f"ranks {rank_ranges(rs)}" for rs in groups.values())
        raise ReportError(f"{directory}: the rank files come from {len(groups)} different runs ({desc}); "
                          f"rerun `clampi-locality run` into an empty directory")
    modes = {d.meta.get("mode") for d in result if d.meta.get("mode")}
    if len(modes) > 1:
        raise ReportError(f"{directory}: the rank files come from different runs (modes {', '.join(sorted(modes))})")
    sizes = {d.meta.get("world_size") for d in result if isinstance(d.meta.get("world_size"), int)}
    if len(sizes) > 1:
        raise ReportError(f"{directory}: the rank files come from different runs "
                          f"(world sizes {', '.join(map(str, sorted(sizes)))})")
    if sizes:
        size = sizes.pop()
        have = {d.rank for d in result}
        extra = sorted(r for r in have if r >= size)
        if extra:
            raise ReportError(f"{directory}: rank{extra[0]}.csv does not belong to this run of {size} rank"
                              f"{'s' if size != 1 else ''}")
        missing = sorted(set(range(size)) - have)
        if missing:
            warnings.append(f"the run had {size} ranks but there is no output for rank"
                            f"{'s' if len(missing) > 1 else ''} {rank_ranges(missing)}")


# ---------------------------------------------------------------- threads and nodes -----

class Threads:
    """Global thread numbering: ranks in order, threads in order within a rank."""

    def __init__(self, ranks):
        self.multi = len(ranks) > 1
        self.keys = [(d.rank, t) for d in ranks for t in range(d.nthreads)]
        self.index = {k: i for i, k in enumerate(self.keys)}
        self.base = {}              # rank -> global index of its thread 0 (threads are contiguous)
        for d in ranks:
            self.base[d.rank] = self.index.get((d.rank, 0), len(self.keys))

    def name(self, g):
        r, t = self.keys[g]
        return f"r{r}.t{t}" if self.multi else f"T{t}"

    def __len__(self):
        return len(self.keys)


def parse_nodes(spec, threads):
    """--nodes MAP: `0-3:0,4-7:1` (global thread indices), `r1:1` (all threads of rank 1),
    `r1.t0-3:0`. Returns {global thread: node}."""
    mapping = {}
    for item in spec.split(","):
        item = item.strip()
        m = re.fullmatch(r"(?:r(\d+)(?:\.t(\d+)(?:-(\d+))?)?|(\d+)(?:-(\d+))?):(\d+)", item)
        if not m:
            raise ReportError(f"--nodes: cannot parse {item!r} (expected e.g. 0-3:0,4-7:1 or r0:0,r1:1 or r1.t0-3:1)")
        rank, t0, t1, g0, g1, node = m.groups()
        node = int(node)
        if rank is not None:
            rank = int(rank)
            lo = int(t0) if t0 is not None else 0
            hi = int(t1) if t1 is not None else (lo if t0 is not None else 1 << 30)
            targets = [g for g, (r, t) in enumerate(threads.keys) if r == rank and lo <= t <= hi]
        else:
            lo = int(g0)
            hi = int(g1) if g1 is not None else lo
            targets = [g for g in range(len(threads)) if lo <= g <= hi]
        if hi < lo:
            raise ReportError(f"--nodes: empty range in {item!r}")
        for g in targets:
            mapping[g] = node
    return mapping


def machine_nodes():
    """{cpu: node} from /sys/devices/system/node (libnuma's source), or None."""
    base = "/sys/devices/system/node"
    cpus = {}
    try:
        for entry in os.listdir(base):
            m = re.fullmatch(r"node(\d+)", entry)
            if not m:
                continue
            with open(os.path.join(base, entry, "cpulist")) as f:
                for part in f.read().strip().split(","):
                    if not part:
                        continue
                    lo, _, hi = part.partition("-")
                    for c in range(int(lo), int(hi or lo) + 1):
                        cpus[c] = int(m.group(1))
    except (OSError, ValueError):
        return None
    return cpus or None


def default_nodes(threads):
    """Thread g runs on CPU g mod ncpus (compact placement, as OMP_PROC_BIND=close)."""
    cpus = machine_nodes()
    if not cpus:
        return {g: 0 for g in range(len(threads))}, "no NUMA topology readable: one node assumed"
    order = sorted(cpus)
    nodes = {g: cpus[order[g % len(order)]] for g in range(len(threads))}
    n = len(set(cpus.values()))
    return nodes, (f"machine topology: {n} NUMA node{'s' if n != 1 else ''}, {len(order)} CPUs; "
                   f"thread g assumed on CPU g mod {len(order)}")


# ---------------------------------------------------------------- cross-rank merging ----

def _mapping_finder(meta):
    maps = sorted((int(m["start"], 16), int(m["end"], 16), m.get("file") or "", int(m.get("offset", 0)))
                  for m in meta.get("mappings") or [] if m.get("shared", True) and m.get("file"))

    def find(addr):
        for start, end, fname, off in maps:   # few mappings per rank: a linear scan is enough
            if start <= addr < end:
                return fname, off + (addr - start)
        return None
    return find


class MergedPage:
    """A physical page: one Page per rank that maps it (several for shared memory)."""
    __slots__ = ("views", "counts", "ft", "ft_location", "struct", "shared_file", "alloc_location")


def merge_pages(ranks, threads):
    """Pages with the same (mapping file, offset) or the same physical frame across ranks are
    one page. Without timestamps the first toucher of a shared page is taken from the lowest
    rank that touched it (the rank that creates a shared window usually initializes it)."""
    parent = {}

    def root(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    key_owner = {}
    file_of = {}
    for d in ranks:
        find = _mapping_finder(d.meta)
        pfns = d.meta.get("pfns") or {}
        for p in d.pages:
            node = (d.rank, p.address)
            parent[node] = node
            keys = []
            loc = find(p.address)
            if loc:
                keys.append(("file",) + loc)
                file_of[node] = loc[0]
            if pfns.get(p.address):
                keys.append(("pfn", pfns[p.address]))
            for k in keys:
                other = key_owner.setdefault(k, node)
                if other != node:
                    parent[root(node)] = root(other)
    groups = defaultdict(list)
    for d in ranks:
        for p in d.pages:
            groups[root((d.rank, p.address))].append(p)
    merged = []
    for views in groups.values():
        views.sort(key=lambda p: p.rank)
        mp = MergedPage()
        mp.views = views
        if len(views) == 1:
            base = threads.base[views[0].rank]
            mp.counts = {base + t: c for t, c in enumerate(views[0].counts) if c}
        else:
            counts = defaultdict(int)
            for p in views:
                base = threads.base[p.rank]
                for t, c in enumerate(p.counts):
                    if c:
                        counts[base + t] += c
            mp.counts = dict(counts)
        first = next((p for p in views if p.ft_thread >= 0), None)
        mp.ft = threads.base[first.rank] + first.ft_thread if first else -1
        mp.ft_location = first.ft_location if first else "?"
        named = next((p for p in views if p.struct != "?"), views[0])
        mp.struct = named.struct
        mp.alloc_location = named.alloc_location
        ranks_in = {p.rank for p in views}
        mp.shared_file = None
        if len(ranks_in) > 1:
            mp.shared_file = next((file_of[(p.rank, p.address)] for p in views if (p.rank, p.address) in file_of),
                                  "matched by physical frame")
        merged.append(mp)
    merged.sort(key=lambda m: (m.views[0].rank, m.views[0].address))
    return merged


# ---------------------------------------------------------------- metrics ----------------

def pct(num, den):
    return 100.0 * num / den if den else None


def fmt_pct(v):
    return "n/a" if v is None else f"{v:.1f} %"


def page_metrics(mp, node_of):
    total = sum(mp.counts.values())
    local = mp.counts.get(mp.ft, 0) if mp.ft >= 0 else 0
    top = max(mp.counts.values()) if mp.counts else 0
    correct = None
    if total and mp.ft >= 0:
        correct = mp.counts.get(mp.ft, 0) == top   # a tie with the first toucher counts as correct
    ft_node = node_of.get(mp.ft) if mp.ft >= 0 else None
    node_local = sum(c for t, c in mp.counts.items() if node_of.get(t) == ft_node) if ft_node is not None else 0
    return total, local, correct, node_local


def load_imbalance(work):
    """Eq. 1: (max(L) / avg(L) - 1) * 100 %."""
    if not work or sum(work) <= 0:
        return None
    return (max(work) / (sum(work) / len(work)) - 1.0) * 100.0


class Acc:
    """Access and page totals for one scope (overall, one structure)."""

    def __init__(self):
        self.pages = 0
        self.pages_counted = 0     # pages with accesses and a first toucher
        self.correct = 0
        self.accesses = 0
        self.local = 0
        self.node_local = 0
        self.by_thread = Counter()
        self.ft_threads = Counter()          # first toucher -> pages
        self.ft_locations = defaultdict(Counter)
        self.wrong_users = Counter()         # on wrongly placed pages: thread -> accesses
        self.alloc_locations = Counter()
        self.ranks = set()

    def add(self, mp, total, local, correct, node_local):
        self.pages += 1
        self.accesses += total
        self.local += local
        self.node_local += node_local
        by_thread = self.by_thread
        for t, c in mp.counts.items():
            by_thread[t] += c
        for p in mp.views:
            self.ranks.add(p.rank)
        if mp.alloc_location != "?":
            self.alloc_locations[mp.alloc_location] += 1
        if mp.ft >= 0:
            self.ft_threads[mp.ft] += 1
            self.ft_locations[mp.ft][mp.ft_location] += 1
        if correct is not None:
            self.pages_counted += 1
            if correct:
                self.correct += 1
            else:
                self.wrong_users.update({t: c for t, c in mp.counts.items() if t != mp.ft})

    def summary(self):
        return {"pages": self.pages, "pages_with_accesses": self.pages_counted,
                "accesses": self.accesses, "local_accesses": self.local,
                "locality_pct": pct(self.local, self.accesses),
                "first_touch_correct_pages": self.correct,
                "first_touch_correctness_pct": pct(self.correct, self.pages_counted),
                "node_local_accesses": self.node_local,
                "node_locality_pct": pct(self.node_local, self.accesses)}


def structure_key(mp, multi):
    if mp.shared_file is not None:
        return f"shared:{mp.struct}"
    return f"r{mp.views[0].rank}:{mp.struct}" if multi else mp.struct


def describe_structure(name, acc, threads):
    """The paper's diagnosis in one sentence: who touched it first, where, and who uses it."""
    s = acc.summary()
    words = [f"{name} ({acc.pages} page{'s' if acc.pages != 1 else ''}, {acc.accesses:,} accesses): "
             f"locality {fmt_pct(s['locality_pct'])}, first-touch correctness "
             f"{fmt_pct(s['first_touch_correctness_pct'])}"]
    if acc.ft_threads:
        ft, ft_pages = acc.ft_threads.most_common(1)[0]
        where = acc.ft_locations[ft].most_common(1)[0][0]
        share = "" if ft_pages == acc.pages else f" ({ft_pages} of {acc.pages} pages)"
        text = f"first touched by {threads.name(ft)} at {where}{share}"
        if acc.wrong_users:
            wrong = acc.pages_counted - acc.correct
            text += (f", {main_users(acc.wrong_users, threads)}"
                     f" ({wrong} page{'s' if wrong != 1 else ''} first touched by the wrong thread)")
        else:
            text += f", {main_users(acc.by_thread or Counter({ft: 1}), threads)}"
        words.append(text)
    if acc.alloc_locations:
        words.append(f"allocated at {acc.alloc_locations.most_common(1)[0][0]}")
    return "; ".join(words)


def main_users(by_thread, threads, dominance=1.2):
    """'mostly used by T4' when one thread makes clearly more accesses than any other
    (at least `dominance` times the next), else 'shared equally by T1-T3' (threads within
    10 % of the top) or 'shared by T1, T3 and T5' (no thread dominates)."""
    ranked = [(t, c) for t, c in by_thread.most_common() if c > 0]
    if not ranked:
        return "not used"
    top_t, top = ranked[0]
    if len(ranked) == 1 or top >= dominance * ranked[1][1]:
        return f"mostly used by {threads.name(top_t)}"
    close = sorted(t for t, c in ranked if c >= top / dominance)
    even = all(c >= 0.9 * top for t, c in ranked if t in close)
    return f"shared {'equally ' if even else ''}by {thread_ranges(close, threads)}"


def thread_ranges(ts, threads):
    """[1, 2, 3] -> 'T1\u2013T3'; consecutive global numbers of one rank are joined."""
    ts = sorted(ts)
    parts, i = [], 0
    while i < len(ts):
        j = i
        while (j + 1 < len(ts) and ts[j + 1] == ts[j] + 1
               and threads.keys[ts[j + 1]][0] == threads.keys[ts[i]][0]):
            j += 1
        if j - i >= 2:
            parts.append(f"{threads.name(ts[i])}\u2013{threads.name(ts[j])}")
            i = j + 1
        else:
            parts.append(threads.name(ts[i]))
            i += 1
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def rank_ranges(ranks):
    ranks = sorted(ranks)
    parts, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        parts.append(f"{ranks[i]}" if i == j else f"{ranks[i]}\u2013{ranks[j]}")
        i = j + 1
    return ", ".join(parts)


def describe_shared(name, pages, threads):
    """'rank 0 first-touched the whole shared window, ranks 1-3 make 75.0 % of its accesses'."""
    ft_rank_pages = Counter(threads.keys[mp.ft][0] for mp in pages if mp.ft >= 0)
    by_rank = Counter()
    for mp in pages:
        for t, c in mp.counts.items():
            by_rank[threads.keys[t][0]] += c
    total = sum(by_rank.values())
    if not ft_rank_pages:
        return f"shared {name} ({len(pages)} pages): never touched"
    owner, owned = ft_rank_pages.most_common(1)[0]
    what = "the whole shared window" if owned == len(pages) else \
        f"{pct(owned, len(pages)):.1f} % of the shared window's pages"
    others = sorted(r for r in by_rank if r != owner and by_rank[r] > 0)
    mapped = {p.rank for mp in pages for p in mp.views}
    text = f"shared {name} ({len(pages)} pages, rank{'s' if len(mapped) > 1 else ''} {rank_ranges(mapped)}): " \
           f"rank {owner} first-touched {what}"
    if others and total:
        use = sum(by_rank[r] for r in others)
        many = len(others) > 1
        text += (f", rank{'s' if many else ''} {rank_ranges(others)} make{'' if many else 's'} "
                 f"{pct(use, total):.1f} % of its accesses")
    elif total:
        text += f", and makes all of its accesses"
    return text


_LIB_ALLOC = re.compile(r"alloc@[^\s:]*\.so(\.\d+)*$")
_LIB_STATIC = re.compile(r"[^\s:@]+\.so(\.\d+)*:")


def scope_of(struct):
    """Whose data a page is: 'program' (the program's allocations and
    static data), 'libraries' (buffers and static data a library made for itself:
    alloc@libgomp.so.1, libc.so.6:sym), 'stacks' ([stack T3]) or 'unattributed' (?:
    pages outside any tracked allocation or symbol, e.g. the loader's and libc's)."""
    if struct.startswith("[stack"):
        return "stacks"
    if struct in ("?", "") or struct == "alloc@?":
        return "unattributed"
    if _LIB_ALLOC.match(struct) or _LIB_STATIC.match(struct):
        return "libraries"
    return "program"


SCOPES = ("program", "libraries", "stacks", "unattributed")


def coverage_warnings(ranks, rep):
    """Say plainly what was not tracked: an empty page table is not a
    measurement, and sample mode does not see every kind of memory."""
    out = []
    if rep["overall"]["pages"] == 0:
        mode = sorted({d.meta.get("mode", "?") for d in ranks})
        out.append(f"no pages were recorded ({'/'.join(mode)} mode): the numbers above are not a measurement. "
                   f"Sample mode tracks heap blocks and mappings of at least --min-size and the executable's "
                   f"static objects of that size; the program may keep its data elsewhere "
                   f"(a shared library's static data, small blocks), or ended before writing anything")
    notes = {d.meta.get("sampling", {}).get("static_data") for d in ranks if isinstance(d.meta.get("sampling"), dict)}
    for n in sorted(x for x in notes if x):
        out.append(f"sample mode tracked static data: {n}")
    # no silent drops: what the sampler's bounded tables could not hold
    for d in ranks:
        cov = d.meta.get("coverage")
        if not isinstance(cov, dict):
            continue
        lost = []
        if cov.get("dropped"):
            lost.append(f"{cov['dropped']:,} page records or counters (the table holds "
                        f"{cov.get('page_capacity', '?'):,} pages; raise CLAMPI_LOCALITY_MAX_PAGES)")
        if cov.get("allocations_untracked"):
            lost.append(f"{cov['allocations_untracked']:,} allocations ({cov.get('bytes_untracked', 0):,} bytes) "
                        f"not tracked (allocation table or arena full)")
        if lost:
            out.append(f"rank {d.rank}: lost to the sampler's memory bound "
                       f"({cov.get('memory_bound_bytes', 0) / 2**20:.0f} MiB of tables): " + "; ".join(lost)
                       + ": the numbers cover the rest only")
    return out


def sampling_confidence(ranks, rep):
    """How much the access counts of a sample-mode run can be trusted,
    from the pages that got samples and the sampler's measured accuracy
    (docs/locality-sampler.md: structure-level thread shares within 0.10 with a few hundred
    sampled pages, 0.25 with tens; overall locality within about 8-15 points)."""
    covs = [d.meta.get("coverage") for d in ranks if isinstance(d.meta.get("coverage"), dict)]
    if not covs or rep["counts"] != "sampled":
        return None
    touched = sum(c.get("pages_touched", 0) for c in covs)
    sampled = sum(c.get("pages_sampled", 0) for c in covs)
    if sampled >= 300:
        level = "good: thread shares per structure within about 0.10, overall locality within about 8 points"
    elif sampled >= 40:
        level = "fair: thread shares within about 0.25, overall locality within about 15 points"
    else:
        level = "low: too few samples for thread shares or locality (run longer or lower CLAMPI_LOCALITY_SAMPLE_PERIOD_MS)"
    weak = [e["name"] for e in rep["structures"] if 0 < e["pages_with_accesses"] < 40 and e["pages"] >= 40]
    text = (f"sampling confidence: {sampled:,} of {touched:,} touched pages got samples; {level}. "
            f"First touch (thread and line) is exact regardless")
    if weak:
        text += f"; structures with fewer than 40 sampled pages: {', '.join(weak[:6])}{' ...' if len(weak) > 6 else ''}"
    return text


def analyse(ranks, threads, node_of, nodes_note):
    merged = merge_pages(ranks, threads)
    overall = Acc()
    scopes = {k: Acc() for k in SCOPES}
    allocated = Acc()      # pages of tracked allocations (>= --min-size): the program's own data
    structs = defaultdict(Acc)
    shared = defaultdict(list)
    nthreads = len(threads)
    comm = [[0] * nthreads for _ in range(nthreads)]
    page_rows = []
    for mp in merged:
        total, local, correct, node_local = page_metrics(mp, node_of)
        overall.add(mp, total, local, correct, node_local)
        scopes[scope_of(mp.struct)].add(mp, total, local, correct, node_local)
        if any(p.alloc_thread >= 0 for p in mp.views):
            allocated.add(mp, total, local, correct, node_local)
        structs[structure_key(mp, threads.multi)].add(mp, total, local, correct, node_local)
        if mp.shared_file is not None:
            shared[f"{mp.struct} ({mp.shared_file})"].append(mp)
        users = [(t, c) for t, c in mp.counts.items() if c]
        for i, (a, ca) in enumerate(users):       # pages shared by threads a and b: min(ca, cb)
            for b, cb in users[i + 1:]:
                w = min(ca, cb)
                comm[a][b] += w
                comm[b][a] += w
        page_rows.append((mp, total, local, correct, node_local))

    work, work_unit, runtime = [], None, []
    for d in ranks:
        tw = d.meta.get("thread_work")
        if tw is None:
            work = None
            break
        work.extend(list(tw) + [0] * (d.nthreads - len(tw)))
        creators = list(d.meta.get("thread_creator") or [])
        creators += [""] * (d.nthreads - len(creators))
        runtime.extend(bool(RUNTIME_MODULES.match(m)) for m in creators[:d.nthreads])
        work_unit = d.meta.get("work_unit", work_unit)
    lam = None
    if work:
        program = [w for w, rt in zip(work, runtime) if not rt] or work
        busiest = max(program)
        workers = [w for w in program if w >= HELPER_WORK_SHARE * busiest]
        names = [threads.name(g) for g, rt in enumerate(runtime) if rt]
        notes = []
        if names:
            notes.append(f"threads created by a runtime library ({', '.join(names)}) are left out of lambda_pct")
        if len(workers) < len(program):
            notes.append(f"threads with less than {HELPER_WORK_SHARE:.0%} of the busiest thread's work "
                         f"(runtime helper threads) are left out of lambda_pct")
        lam = {"lambda_pct": load_imbalance(workers), "lambda_all_threads_pct": load_imbalance(work),
               "threads_counted": len(workers), "threads": len(work), "work": work,
               "runtime_threads": names, "work_unit": work_unit or "unknown", "note": "; ".join(notes)}

    struct_list = []
    for name, acc in structs.items():
        entry = {"name": name, **acc.summary(), "remote_accesses": acc.accesses - acc.local,
                 "ranks": sorted(acc.ranks), "description": describe_structure(name, acc, threads)}
        if acc.ft_threads:
            ft = acc.ft_threads.most_common(1)[0][0]
            entry["first_touch_thread"] = threads.name(ft)
            entry["first_touch_location"] = acc.ft_locations[ft].most_common(1)[0][0]
        struct_list.append(entry)
    struct_list.sort(key=lambda e: (-e["accesses"], e["name"]))
    costly = sorted((e for e in struct_list if e["remote_accesses"] > 0),
                    key=lambda e: (-e["remote_accesses"], e["name"]))[:5]
    modes = sorted({d.meta.get("counts", "exact" if d.meta.get("mode", "exact") == "exact" else "sampled")
                    for d in ranks if d.meta} or {"unknown"})
    return {
        "tool": "clampi-locality", "report_version": 1,
        "ranks": [d.rank for d in ranks],
        "threads": [threads.name(g) for g in range(nthreads)],
        "counts": modes[0] if len(modes) == 1 else modes,
        "page_size": ranks[0].meta.get("page_size", 4096),
        "overall": overall.summary(),
        "allocations": allocated.summary(),
        "scopes": {k: v.summary() for k, v in scopes.items()},
        "nodes": {"map": {threads.name(g): n for g, n in sorted(node_of.items())}, "source": nodes_note,
                  "count": len(set(node_of.values()))},
        "load_imbalance": lam,
        "structures": struct_list,
        "costliest": [e["description"] for e in costly],
        "shared": [describe_shared(name, pages, threads) for name, pages in sorted(shared.items())],
        "comm_matrix": comm,
    }, page_rows


# ---------------------------------------------------------------- output -----------------

def summary_text(rep, warnings):
    o, a = rep["overall"], rep["allocations"]
    lines = [f"clampi-locality report: {len(rep['ranks'])} rank{'s' if len(rep['ranks']) != 1 else ''}, "
             f"{len(rep['threads'])} threads, {o['pages']} pages, {o['accesses']:,} accesses "
             f"(counts: {rep['counts']})",
             f"overall locality:            {fmt_pct(o['locality_pct'])}  "
             f"({o['local_accesses']:,} of {o['accesses']:,} accesses by the first-touching thread)",
             f"first-touch correctness:     {fmt_pct(o['first_touch_correctness_pct'])}  "
             f"({o['first_touch_correct_pages']} of {o['pages_with_accesses']} pages first touched "
             f"by the thread that uses them most)",
             f"  in tracked allocations:    locality {fmt_pct(a['locality_pct'])}, first-touch correctness "
             f"{fmt_pct(a['first_touch_correctness_pct'])}  ({a['pages']} pages of allocations >= --min-size; "
             f"the rest is static data, stacks, libraries)"]
    sc = rep.get("scopes")
    if sc:
        p = sc["program"]
        lines.append(f"  program data:              locality {fmt_pct(p['locality_pct'])}, first-touch correctness "
                     f"{fmt_pct(p['first_touch_correctness_pct'])}  ({p['pages']} pages of the program's allocations "
                     f"and static data; left out: {sc['libraries']['pages']} pages of libraries' own data "
                     f"(MPI, OpenMP runtime, libc), {sc['stacks']['pages']} of thread stacks, "
                     f"{sc['unattributed']['pages']} unattributed)")
    lines += [
             f"node-level locality:         {fmt_pct(o['node_locality_pct'])}  "
             f"({rep['nodes']['count']} node{'s' if rep['nodes']['count'] != 1 else ''}; {rep['nodes']['source']})"]
    lam = rep["load_imbalance"]
    if lam and lam["lambda_pct"] is not None:
        line = f"load imbalance lambda:       {lam['lambda_pct']:.1f} %  (Eq. 1 over {lam['threads_counted']} threads, work in {lam['work_unit']})"
        if lam["threads_counted"] < lam["threads"]:
            line += f"; {lam['lambda_all_threads_pct']:.1f} % over all {lam['threads']} threads"
        rt = lam.get("runtime_threads") or []
        if rt:
            line += (f"; runtime threads left out: {', '.join(rt[:4])}"
                     f"{f' and {len(rt) - 4} more' if len(rt) > 4 else ''}")
        lines.append(line)
    else:
        lines.append("load imbalance lambda:       n/a (no thread_work in the rank JSON)")
    lines += ["", "structures (by accesses):",
              f"  {'name':<28} {'pages':>7} {'accesses':>14} {'locality':>9} {'ft-correct':>10} {'node-loc':>9}"]
    for e in rep["structures"][:20]:
        lines.append(f"  {e['name'][:28]:<28} {e['pages']:>7} {e['accesses']:>14,} "
                     f"{fmt_pct(e['locality_pct']):>9} {fmt_pct(e['first_touch_correctness_pct']):>10} "
                     f"{fmt_pct(e['node_locality_pct']):>9}")
    if len(rep["structures"]) > 20:
        lines.append(f"  ... {len(rep['structures']) - 20} more in report.json")
    if rep["costliest"]:
        lines += ["", "costliest structures (most accesses by threads other than the first toucher):"]
        lines += [f"  - {d}" for d in rep["costliest"]]
    if rep["shared"]:
        lines += ["", "shared memory across ranks:"] + [f"  - {d}" for d in rep["shared"]]
    if rep.get("sampling_confidence"):
        lines += ["", rep["sampling_confidence"]]
    if warnings:
        lines += ["", "warnings:"] + [f"  - {w}" for w in warnings]
    return "\n".join(lines) + "\n"


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        # a Python without matplotlib (pyenv, venv) next to Debian's python3-matplotlib
        dist = "/usr/lib/python3/dist-packages"
        if not os.path.isdir(dist) or dist in sys.path:
            return None
        sys.path.append(dist)
        try:
            import matplotlib
        except ImportError:
            return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_comm(plt, rep, path):
    names, m = rep["threads"], rep["comm_matrix"]
    n = len(names)
    size = min(12, 3 + 0.35 * n)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    im = ax.imshow(m if n else [[0]], cmap="viridis", interpolation="nearest")
    fig.colorbar(im, ax=ax, label="accesses to shared pages (sum of min per page)")
    if n <= 48:
        ax.set_xticks(range(n), names, rotation=90, fontsize=7 if n > 16 else 9)
        ax.set_yticks(range(n), names, fontsize=7 if n > 16 else 9)
    ax.set_title("Communication matrix: threads sharing pages")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=90)
    plt.close(fig)


def plot_structures(plt, rep, path):
    top = rep["structures"][:20][::-1]
    fig, ax = plt.subplots(figsize=(9, 1.5 + 0.4 * max(1, len(top))))
    names = [e["name"][:32] for e in top]
    local = [e["local_accesses"] for e in top]
    remote = [e["accesses"] - e["local_accesses"] for e in top]
    ax.barh(names, local, color="#2a9d8f", label="by first-touching thread (local)")
    ax.barh(names, remote, left=local, color="#e76f51", label="by other threads (remote)")
    for i, e in enumerate(top):
        ax.text(e["accesses"], i, f" {fmt_pct(e['locality_pct'])}", va="center", fontsize=8)
    ax.set_xlabel("memory accesses")
    ax.set_title("Locality per structure")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=90)
    plt.close(fig)


def pages_csv(page_rows, threads):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["rank", "address", "struct.name", "firsttouch.thread", "firsttouch.location", "accesses",
                "locality_pct", "first_touch_correct", "node_locality_pct", "ranks"])
    for mp, total, local, correct, node_local in page_rows:
        v = mp.views[0]
        w.writerow([v.rank, f"0x{v.address:x}", mp.struct, threads.name(mp.ft) if mp.ft >= 0 else "-1",
                    mp.ft_location, total, f"{100.0 * local / total:.2f}" if total else "",
                    "" if correct is None else int(correct),
                    f"{100.0 * node_local / total:.2f}" if total else "",
                    " ".join(str(p.rank) for p in mp.views)])
    return buf.getvalue()


def index_html(summary, have_png, source):
    imgs = "".join(f'<h2>{title}</h2><p><a href="{f}"><img src="{f}" alt="{title}" style="max-width:100%"></a></p>\n'
                   for f, title in (("comm_matrix.png", "Communication matrix"),
                                    ("structures.png", "Locality per structure")) if have_png)
    links = " | ".join(f'<a href="{f}">{f}</a>' for f in ("summary.txt", "report.json", "pages.csv") +
                       (("comm_matrix.png", "structures.png") if have_png else ()))
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>clampi-locality report</title></head>\n"
            f"<body><h1>clampi-locality report</h1><p>input: {html.escape(source)}</p><p>{links}</p>\n"
            f"<pre>{html.escape(summary)}</pre>\n{imgs}</body></html>\n")


def write_outputs(outdir, rep, page_rows, threads, warnings, source, plots=True):
    """Everything goes to temporary names first and is renamed only when all are written."""
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        raise ReportError(f"{outdir}: cannot create output directory: {e.strerror or e}") from None
    tmp = {}

    def tmpname(name):
        tmp[name] = os.path.join(outdir, f".{name}.tmp{os.getpid()}")
        return tmp[name]

    try:
        summary = summary_text(rep, warnings)
        files = {"summary.txt": summary,
                 "report.json": json.dumps({**rep, "warnings": warnings, "input": source}, indent=1) + "\n",
                 "pages.csv": pages_csv(page_rows, threads)}
        for name, text in files.items():
            with open(tmpname(name), "w", encoding="utf-8") as f:
                f.write(text)
        plt = _pyplot() if plots else None
        have_png = plt is not None
        if have_png:
            plot_comm(plt, rep, tmpname("comm_matrix.png"))
            plot_structures(plt, rep, tmpname("structures.png"))
        elif plots:
            warnings.append("matplotlib not available: no PNG plots (install python3-matplotlib)")
        with open(tmpname("index.html"), "w", encoding="utf-8") as f:
            f.write(index_html(summary, have_png, source))
        for name, path in tmp.items():
            os.replace(path, os.path.join(outdir, name))
    except OSError as e:
        raise ReportError(f"{outdir}: cannot write the report: {e.strerror or e}") from None
    finally:
        for path in tmp.values():
            if os.path.exists(path):
                os.unlink(path)
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(prog=PROG, description="Locality report from clampi-locality run output.")
    parser.add_argument("dir", metavar="DIR", help="output directory of `clampi-locality run`")
    parser.add_argument("--nodes", metavar="MAP",
                        help="threads to NUMA nodes, e.g. 0-3:0,4-7:1 (global thread index: ranks in order), "
                             "r0:0,r1:1 or r1.t0-3:1; default: this machine's topology")
    parser.add_argument("-o", "--output", metavar="OUTDIR", help="where to write the report (default DIR/report)")
    parser.add_argument("-q", "--quiet", action="store_true", help="do not print the summary")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots (faster)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    try:
        ranks, warnings = load_dir(args.dir)
        threads = Threads(ranks)
        if args.nodes:
            node_of = parse_nodes(args.nodes, threads)
            source = f"--nodes {args.nodes}"
            # every thread that accessed a page needs a node; idle helper threads may be left out
            accessing = sorted({threads.index[(d.rank, t)] for d in ranks for p in d.pages
                                for t, c in enumerate(p.counts) if c})
            missing = [threads.name(g) for g in accessing if g not in node_of]
            if missing:
                raise ReportError(f"--nodes {args.nodes}: no node for thread{'s' if len(missing) > 1 else ''} "
                                  f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}")
        else:
            node_of, source = default_nodes(threads)
        rep, page_rows = analyse(ranks, threads, node_of, source)
        warnings += coverage_warnings(ranks, rep)
        rep["sampling_confidence"] = sampling_confidence(ranks, rep)
        outdir = args.output or os.path.join(args.dir, "report")
        summary = write_outputs(outdir, rep, page_rows, threads, warnings, os.path.abspath(args.dir),
                                plots=not args.no_plots)
    except ReportError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        sys.stdout.write(summary)
        print(f"report written to {outdir}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
