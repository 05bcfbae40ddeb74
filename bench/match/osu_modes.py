#!/usr/bin/env python3
"""osu_latency under this VM is bimodal: a run lands in a fast or a slow mode (about 0.13 against
0.35 us on Open MPI, 0.19 against 0.65 on MPICH) whatever is preloaded, so the median of a few
trials compares modes, not libraries. This splits each size's trials of a latency_preload.sh
JSON at twice the fastest trial of either side and compares the two sides within each mode.
  bench/match/osu_modes.py RESULT.json [MAXSIZE]"""
import json, statistics, sys

d = json.load(open(sys.argv[1]))
maxsize = int(sys.argv[2]) if len(sys.argv) > 2 else 64
print('# %s: per size, the trials of each side split at 2x the fastest trial of both sides;' % sys.argv[1])
print('# size mode plain_n plain_median preload_n preload_median ratio')
for p in d['points']:
    if p['size'] > maxsize: continue
    pl = [v for v in p['plain_trials'] if v is not None]
    pr = [v for v in p['preload_trials'] if v is not None]
    cut = 2 * min(pl + pr)
    for mode, keep in (('fast', lambda v: v < cut), ('slow', lambda v: v >= cut)):
        a, b = [v for v in pl if keep(v)], [v for v in pr if keep(v)]
        if a and b:
            ma, mb = statistics.median(a), statistics.median(b)
            print('%d %s %d %.3f %d %.3f %.2f' % (p['size'], mode, len(a), ma, len(b), mb, mb / ma))
        else:
            print('%d %s %d - %d - -' % (p['size'], mode, len(a), len(b)))
