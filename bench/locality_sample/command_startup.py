#!/usr/bin/env python3
"""What `clampi-locality run --sample` costs by itself: runs of /bin/true through the
command as built (its #! line) and as `/usr/bin/env python3` would start it, wall seconds,
median of 11 runs each.
  command_startup.py CLAMPI_LOCALITY SAMPLE_LIB"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

cmd, lib = sys.argv[1], sys.argv[2]
env = dict(os.environ, CLAMPI_LOCALITY_SAMPLE_LIB=lib)
with open(cmd) as f:
    shebang = f.readline().strip()
ways = {"as built (%s)" % shebang: [cmd],
        "through /usr/bin/env python3 (%s)" % (shutil.which("python3") or "?"): ["/usr/bin/env", "python3", cmd]}
print("# clampi-locality run --sample -- /bin/true: wall seconds, median of 11 runs "
      "(bench/locality_sample/command_startup.py)")
for name, argv in ways.items():
    t = []
    for _ in range(11):
        d = tempfile.mkdtemp()
        t0 = time.perf_counter()
        subprocess.run(argv + ["run", "--sample", "-o", d + "/o", "--", "/bin/true"], env=env, check=True)
        t.append(time.perf_counter() - t0)
        shutil.rmtree(d)
    print("%-70s %.3f s (min %.3f, max %.3f)" % (name, statistics.median(t), min(t), max(t)))
