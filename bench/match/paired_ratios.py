#!/usr/bin/env python3
"""Ratios of depth_preload.sh results that survive this VM's two speed modes.

A run lands in a fast or a slow mode whatever is preloaded, so the median of all trials of
one side can mix modes. depth_preload.sh alternates plain and preloaded within each trial;
the ratio of a trial's pair is taken in one mode. Prints, per results file and preloaded
side: the ratio of the medians (the script's headline), of the minima (least disturbed),
and the median of the paired ratios.
  bench/match/paired_ratios.py RESULTS.json...
"""
import json
import statistics
import sys

for f in sys.argv[1:]:
    d = json.load(open(f))
    sides = {r['side']: r for r in d['points']}
    plain = sides['plain']['trials']
    for side, r in sides.items():
        if side == 'plain':
            continue
        pairs = [c / p for c, p in zip(r['trials'], plain)]
        print('%s %s depth=%d trials=%d: plain/preloaded us median %.3f/%.3f (x%.3f) min %.3f/%.3f (x%.3f) '
              'paired-median x%.3f' % (f.split('/')[-1], side, d['depth'], len(pairs), statistics.median(plain),
                                       statistics.median(r['trials']), statistics.median(r['trials']) /
                                       statistics.median(plain), min(plain), min(r['trials']),
                                       min(r['trials']) / min(plain), statistics.median(pairs)))
