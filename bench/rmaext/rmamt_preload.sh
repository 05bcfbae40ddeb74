#!/usr/bin/env bash
# RMA-MT's latency test (rmamt_lat, unmodified, built outside the repository) plain against the
# preload with CLAMPI_WIN_SCOPE=thread (every thread flushes only its own operations, on
# clampi's UCX backend), put + flush, 1, 2, 4, 8 threads, side by side: TRIALS alternating
# pairs per MPI, the median per size and thread count, and the ratio plain / preloaded.
#   bench/rmaext/rmamt_preload.sh OPENMPI_BUILD MPICH_BUILD      (either may be "-": skipped)
# Env: RMAMT_OMPI / RMAMT_MPICH (rmamt_lat binaries; default /work/ext/rmamt_lat_{openmpi,mpich},
# built with mpicc.<mpi> -I. rmamt_lat.c rmamt_common.c rmamt_options.c from hpc/rma-mt),
# THREADS ("1 2 4 8"), TRIALS (3), ITERS (rmamt -i, 1000), MAXSIZE (rmamt -m, 4096).
# Writes bench/rmaext/results/rmamt_preload-<mpi>.txt, .json and .png. Shared memory, 2 ranks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
threads=${THREADS:-1 2 4 8}; trials=${TRIALS:-3}; iters=${ITERS:-1000}; maxsize=${MAXSIZE:-4096}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$here/results"
run_one() { # mpi build
  local mpi=$1 build; build=$(cd "$2" && pwd)
  local bin pre=$build/src/libclampi_pmpi.so tmp; tmp=$(mktemp -d)
  if [ $mpi = openmpi ]; then bin=${RMAMT_OMPI:-/work/ext/rmamt_lat_openmpi}; else bin=${RMAMT_MPICH:-/work/ext/rmamt_lat_mpich}; fi
  for tr in $(seq "$trials"); do
    for t in $threads; do
      for side in plain preload; do
        local args=(-o put -s flush -t "$t" -i "$iters" -m "$maxsize") out=$tmp/$side.$t.$tr
        if [ $mpi = openmpi ]; then
          env=(); [ $side = preload ] && env=(-x LD_PRELOAD=$pre -x CLAMPI_WIN_SCOPE=thread)
          timeout 90 mpirun.openmpi -n 2 --bind-to none "${env[@]}" "$bin" "${args[@]}" >"$out" 2>&1 || echo "rc=$?" >>"$out"
        else
          env=(); [ $side = preload ] && env=(-genv LD_PRELOAD $pre -genv CLAMPI_WIN_SCOPE thread)
          timeout 90 mpiexec.mpich -n 2 "${env[@]}" "$bin" "${args[@]}" >"$out" 2>&1 || echo "rc=$?" >>"$out"
        fi
      done
    done
  done
  local py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # Debian python3-matplotlib
  $py - "$tmp" "$mpi" "$trials" "$iters" "$here/results/rmamt_preload-$mpi" $threads <<'PY'
import sys, json, statistics, time, re
tmp, mpi, trials, iters, out, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], [int(t) for t in sys.argv[6:]]
def load(f):
    d = {}
    for l in open(f):
        p = l.split()
        if len(p) == 3 and p[0].isdigit(): d[int(p[0])] = float(p[2])  # BpT BxT latency(us)
    return d
rows = []
for t in threads:
    runs = {s: [load('%s/%s.%d.%d' % (tmp, s, t, k)) for k in range(1, trials + 1)] for s in ('plain', 'preload')}
    sizes = sorted(set().union(*[r.keys() for r in runs['plain'] + runs['preload']]))
    for sz in sizes:
        pl = [r[sz] for r in runs['plain'] if sz in r]; pr = [r[sz] for r in runs['preload'] if sz in r]
        if not pl or not pr: continue
        a, b = statistics.median(pl), statistics.median(pr)
        rows.append({'threads': t, 'size': sz, 'plain_us': a, 'preload_us': b, 'speedup': a / b if b else None,
                     'plain_trials': pl, 'preload_trials': pr})
hdr = ('# RMA-MT rmamt_lat put+flush, %s shm 2 ranks, -i %d: plain vs LD_PRELOAD=libclampi_pmpi.so CLAMPI_WIN_SCOPE=thread, '
       '%d alternating trials (median), %s\n# threads size plain_us preload_us speedup(plain/preload)   (per-trial values in the .json)'
       % (mpi, iters, trials, time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())))
txt = hdr + '\n' + '\n'.join('%d %d %.3f %.3f %.2f' % (r['threads'], r['size'], r['plain_us'], r['preload_us'], r['speedup'] or 0) for r in rows)
print(txt)
open(out + '.txt', 'w').write(txt + '\n')
json.dump({'bench': 'rmamt_preload', 'mpi': mpi, 'trials': trials, 'iters': iters, 'points': rows}, open(out + '.json', 'w'), indent=1)
try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, t in enumerate(threads):
        pts = [r for r in rows if r['threads'] == t]
        xs = [r['size'] for r in pts]
        ax.plot(xs, [r['plain_us'] for r in pts], 'o--', color='C%d' % i, label='plain, %d thr' % t)
        ax.plot(xs, [r['preload_us'] for r in pts], 's-', color='C%d' % i, label='thread scope, %d thr' % t)
    ax.set_xscale('log', base=2); ax.set_yscale('log')
    ax.set_xlabel('bytes per thread'); ax.set_ylabel('put+flush latency (us, median)')
    ax.set_title('RMA-MT rmamt_lat, %s: plain vs clampi thread scope (preload)' % mpi)
    ax.legend(fontsize=7, ncol=2); fig.tight_layout(); fig.savefig(out + '.png', dpi=90)
except ImportError:
    print('no matplotlib: no PNG')
PY
  rm -rf "$tmp"
}
[ "${1:--}" != - ] && run_one openmpi "$1"
[ "${2:--}" != - ] && run_one mpich "$2"
exit 0
