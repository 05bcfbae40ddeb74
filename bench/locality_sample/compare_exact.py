#!/usr/bin/env python3
"""Sample mode vs exact mode on the same program: first touch and access counts.

  compare_exact.py EXACT_DIR SAMPLE_DIR [--rank R] [--json OUT]

Addresses differ between the modes (the sampler serves tracked allocations from its own
arena), so pages are matched by structure name and page index within the structure
(structures with the same name are matched in allocation order). Reports, over the
structures of at least --min-pages pages:
  - first touch: share of pages whose first-touching thread agrees (and file:line);
  - counts: per structure, the thread shares of accesses (exact counts vs sampled
    estimates), max absolute difference; and the paper's metrics computed from both
    (locality, first-touch correctness over pages that have samples)."""
import argparse, csv, json, os, re, sys
from collections import defaultdict

def load(d, r):
    with open(os.path.join(d, "rank%d.json" % r)) as f:
        meta = json.load(f)
    with open(os.path.join(d, "rank%d.csv" % r)) as f:
        rows = list(csv.DictReader(f))
    return meta, rows

def by_structure(meta, rows, ps):
    """name -> list (per allocation, in address order) of {page index: row}"""
    structs = defaultdict(list)
    for s in sorted(meta["structures"], key=lambda s: int(s["address"], 16)):
        if s["name"].startswith("alloc@") or s["name"] in ("?",) or s["name"].startswith("["):
            continue
        lo = int(s["address"], 16) & ~(ps - 1)
        structs[s["name"]].append((lo, int(s["address"], 16) + s["size"], {}))
    for r in rows:
        a = int(r["address"], 16)
        for lst in structs.get(r["struct.name"], []):
            lo, hi, pages = lst
            if lo <= a < hi:
                pages[(a - lo) // ps] = r
    return structs

def counts(r, cols):
    return [int(r[c]) for c in cols]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exact")
    ap.add_argument("sample")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--min-pages", type=int, default=4)
    ap.add_argument("--json")
    a = ap.parse_args()
    me, re_ = load(a.exact, a.rank)
    ms, rs = load(a.sample, a.rank)
    ps = me["page_size"]
    se, ss = by_structure(me, re_, ps), by_structure(ms, rs, ps)
    ce = sorted((k for k in re_[0] if re.fullmatch(r"T\d+", k)), key=lambda k: int(k[1:]))
    cs = sorted((k for k in rs[0] if re.fullmatch(r"T\d+", k)), key=lambda k: int(k[1:]))
    nt = min(len(ce), len(cs))
    report = {"structures": {}}
    tot = same_t = same_loc = 0
    loc_e = [0, 0]; loc_s = [0, 0]; ftc_e = [0, 0]; ftc_s = [0, 0]
    for name in sorted(set(se) & set(ss)):
        for (elo, ehi, ep), (slo, shi, sp) in zip(se[name], ss[name]):
            if len(ep) < a.min_pages:
                continue
            n = agree_t = agree_l = 0
            ae, as_ = [0] * nt, [0] * nt
            for i, er in ep.items():
                sr = sp.get(i)
                if sr is None or er["firsttouch.thread"] == "-1":
                    continue
                n += 1
                agree_t += er["firsttouch.thread"] == sr["firsttouch.thread"]
                agree_l += er["firsttouch.location"] == sr["firsttouch.location"]
                xe, xs = counts(er, ce)[:nt], counts(sr, cs)[:nt]
                ae = [p + q for p, q in zip(ae, xe)]
                as_ = [p + q for p, q in zip(as_, xs)]
                ft_e, ft_s = int(er["firsttouch.thread"]), int(sr["firsttouch.thread"])
                if sum(xe):
                    loc_e[0] += xe[ft_e] if 0 <= ft_e < nt else 0
                    loc_e[1] += sum(xe)
                    ftc_e[0] += xe.index(max(xe)) == ft_e
                    ftc_e[1] += 1
                if sum(xs):
                    # weight sampled pages by their estimated accesses
                    loc_s[0] += xs[ft_s] if 0 <= ft_s < nt else 0
                    loc_s[1] += sum(xs)
                    ftc_s[0] += xs.index(max(xs)) == ft_s
                    ftc_s[1] += 1
            share_e = [x / sum(ae) if sum(ae) else 0 for x in ae]
            share_s = [x / sum(as_) if sum(as_) else 0 for x in as_]
            diff = max((abs(p - q) for p, q in zip(share_e, share_s)), default=0)
            report["structures"][name] = {"pages": n, "firsttouch_thread_agree": agree_t, "firsttouch_location_agree": agree_l,
                                          "share_exact": share_e, "share_sample": share_s, "max_share_diff": diff}
            print("%-12s pages %6d  first-touch thread agree %6.1f%%  location agree %6.1f%%  thread shares exact %s sample %s (max diff %.3f)"
                  % (name, n, 100 * agree_t / max(n, 1), 100 * agree_l / max(n, 1),
                     ["%.2f" % x for x in share_e], ["%.2f" % x for x in share_s], diff))
            tot += n; same_t += agree_t; same_l = agree_l; same_loc += agree_l
    pct = lambda x: 100 * x[0] / x[1] if x[1] else float("nan")
    summary = {"pages": tot, "firsttouch_thread_agree_pct": 100 * same_t / max(tot, 1),
               "firsttouch_location_agree_pct": 100 * same_loc / max(tot, 1),
               "locality_exact_pct": pct(loc_e), "locality_sample_pct": pct(loc_s),
               "ftc_exact_pct": pct(ftc_e), "ftc_sample_pct": pct(ftc_s), "sampled_pages_with_counts": ftc_s[1]}
    report["summary"] = summary
    print("overall: %d pages; first touch thread agrees on %.1f%%, location on %.1f%%; locality exact %.1f%% sample %.1f%%; "
          "first-touch correctness exact %.1f%% sample %.1f%% (over %d sampled pages)"
          % (tot, summary["firsttouch_thread_agree_pct"], summary["firsttouch_location_agree_pct"],
             summary["locality_exact_pct"], summary["locality_sample_pct"], summary["ftc_exact_pct"],
             summary["ftc_sample_pct"], ftc_s[1]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)

if __name__ == "__main__":
    main()
