#!/usr/bin/env bash
# osu_latency (unmodified OSU micro-benchmarks, outside the repo) plain against preloaded with
# CLAMPI_MATCH (every message through clampi's matching engine), side by side in one run:
# TRIALS alternating pairs per MPI, the median of each side per size, and the ratio.
#   bench/match/latency_preload.sh OPENMPI_BUILD MPICH_BUILD      (either may be "-": skipped)
# Env: OSU_OMPI / OSU_MPICH (osu_latency binaries built with mpicc.openmpi / mpicc.mpich;
# default /work/ext/osu/mpi/pt2pt/osu_latency{,.mpich}), MATCH (lla+hot, the default carrier; S/C: structure S
# on carrier C, CLAMPI_MATCH_CARRIER=C), TRIALS (3),
# ITERS (osu -i, 10000), MAXSIZE (sizes reported, 65536; this OSU 5.x has no -m: it runs
# to 4 MiB with fewer iterations above 8 KiB). Shared memory, 2 ranks.
# Writes bench/match/results/latency_preload-<mpi>[-tcp].txt, .json and .png (plot_preload.py).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
match=${MATCH:-lla+hot}; trials=${TRIALS:-3}; iters=${ITERS:-10000}; maxsize=${MAXSIZE:-65536}
. "$here/preload_net.sh"
mkdir -p "$here/results"
run_one() { # mpi build
  local mpi=$1 build; build=$(cd "$2" && pwd)
  local osu pre=$build/src/libclampi_pmpi.so tmp; tmp=$(mktemp -d)
  if [ $mpi = openmpi ]; then osu=${OSU_OMPI:-/work/ext/osu/mpi/pt2pt/osu_latency}; else osu=${OSU_MPICH:-/work/ext/osu/mpi/pt2pt/osu_latency.mpich}; fi
  for t in $(seq "$trials"); do
    for side in plain preload; do
      if [ $mpi = openmpi ]; then
        env=(); [ $side = preload ] && env=(-x LD_PRELOAD=$pre -x CLAMPI_MATCH=${match%/*})
        [ $side = preload ] && [ "$match" != "${match%/*}" ] && env+=(-x CLAMPI_MATCH_CARRIER=${match#*/})
        timeout 600 mpirun.openmpi -n 2 "${ompi_net[@]}" "${env[@]}" $osu -i $iters >$tmp/$side.$t
      else
        env=(); [ $side = preload ] && env=(-genv LD_PRELOAD $pre -genv CLAMPI_MATCH ${match%/*})
        [ $side = preload ] && [ "$match" != "${match%/*}" ] && env+=(-genv CLAMPI_MATCH_CARRIER ${match#*/})
        timeout 600 mpiexec.mpich -n 2 "${mpich_net[@]}" "${env[@]}" $osu -i $iters >$tmp/$side.$t
      fi
    done
  done
  python3 - "$tmp" "$trials" "$mpi" "$match" "$here/results/latency_preload-$mpi${OUT_SUFFIX:-}$sfx" "$iters" "$maxsize" "$transport" <<'PY'
import sys, json, statistics, time
tmp, trials, mpi, match, out, iters = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
maxsize = int(sys.argv[7]); transport = sys.argv[8]
def load(f):
    d = {}
    for l in open(f):
        p = l.split()
        if len(p) == 2 and p[0].isdigit(): d[int(p[0])] = float(p[1])
    return d
runs = {s: [load('%s/%s.%d' % (tmp, s, t)) for t in range(1, trials + 1)] for s in ('plain', 'preload')}
sizes = [z for z in sorted(runs['plain'][0]) if z <= maxsize]
rows = []
for sz in sizes:
    pl = statistics.median(r[sz] for r in runs['plain'] if sz in r)
    pr = statistics.median(r[sz] for r in runs['preload'] if sz in r)
    rows.append({'size': sz, 'plain_us': pl, 'preload_us': pr, 'ratio': pr / pl if pl else None,
                 'plain_trials': [r.get(sz) for r in runs['plain']], 'preload_trials': [r.get(sz) for r in runs['preload']]})
hdr = ('# osu_latency %s %s 2 ranks bound to cores -i %s, plain vs LD_PRELOAD=libclampi_pmpi.so CLAMPI_MATCH=%s, %d alternating '
       'trials (median), %s\n# size plain_us preload_us ratio   (per-trial values in the .json)' %
       (mpi, transport, iters, match, trials, time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())))
txt = hdr + '\n' + '\n'.join('%d %.2f %.2f %.2f' % (r['size'], r['plain_us'], r['preload_us'], r['ratio']) for r in rows)
print(txt)
open(out + '.txt', 'w').write(txt + '\n')
json.dump({'bench': 'osu_latency_preload', 'mpi': mpi, 'transport': transport, 'match': match, 'trials': trials, 'iters': int(iters),
           'points': rows}, open(out + '.json', 'w'), indent=1)
PY
  rm -rf "$tmp"
  py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # Debian python3-matplotlib
  $py "$here/plot_preload.py" "$here/results/latency_preload-$mpi${OUT_SUFFIX:-}$sfx.json"
}
[ "${1:--}" != - ] && run_one openmpi "$1"
[ "${2:--}" != - ] && run_one mpich "$2"
exit 0
