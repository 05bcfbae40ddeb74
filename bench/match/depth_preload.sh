#!/usr/bin/env bash
# The depth benchmark (docs/matching.md), on an unmodified MPI program (bench/match/pingpong.c):
# rank 1 posts DEPTH MPI_ANY_SOURCE receives that never match, then 1 B MPI_Send/MPI_Recv
# ping-pong; every arriving message is compared against the DEPTH receives ahead of it.
# Plain MPI against the preload with each CLAMPI_MATCH structure, TRIALS alternating rounds
# in one run; the median round trip per side and the speed-up (plain / preloaded).
#   bench/match/depth_preload.sh OPENMPI_BUILD MPICH_BUILD   (either may be "-")
# Env: DEPTH (1024), ITERS (20000), TRIALS (3), KINDS ("list lla hot lla+hot bins lla+hot@thread";
# S@W: CLAMPI_MATCH=S with CLAMPI_MATCH_HOT_BY=W; S/C: S on carrier C, CLAMPI_MATCH_CARRIER=C; S alone: the default carrier),
# TRANSPORT (shm|tcp), OUT_SUFFIX (appended to the results' names), FORM (blocking: MPI_Send/
# MPI_Recv, the default; nonblocking: MPI_Isend/MPI_Irecv each completed by MPI_Wait).
# Writes bench/match/results/depth_preload-<mpi>[-tcp].txt, .json and .png (plot_preload.py); OUT_DIR: elsewhere. 2 ranks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
depth=${DEPTH:-1024}; iters=${ITERS:-20000}; trials=${TRIALS:-3}; kinds=${KINDS:-list lla hot lla+hot bins lla+hot@thread}
form=0; [ "${FORM:-blocking}" = nonblocking ] && form=2
. "$here/preload_net.sh"
out_dir=${OUT_DIR:-$here/results}
mkdir -p "$out_dir"
run_one() {
  local mpi=$1 build; build=$(cd "$2" && pwd)
  local prog=$build/bench/match/match_pingpong pre=$build/src/libclampi_pmpi.so tmp; tmp=$(mktemp -d)
  for t in $(seq "$trials"); do
    for side in plain $kinds; do
      # a side "S@W" is CLAMPI_MATCH=S with CLAMPI_MATCH_HOT_BY=W (who touches the queues)
      local m=${side%@*} hb= carrier=; [ "$side" != "$m" ] && hb=${side#*@}
      [ "$m" != "${m%/*}" ] && carrier=${m#*/} && m=${m%/*}
      if [ $mpi = openmpi ]; then
        env=(); [ $side != plain ] && env=(-x LD_PRELOAD=$pre -x CLAMPI_MATCH=$m)
        [ -n "$hb" ] && env+=(-x CLAMPI_MATCH_HOT_BY=$hb)
        [ -n "$carrier" ] && env+=(-x CLAMPI_MATCH_CARRIER=$carrier)
        timeout 600 mpirun.openmpi -n 2 "${ompi_net[@]}" "${env[@]}" $prog $iters $depth 200 $form >>"$tmp/${side//\//_}"
      else
        env=(); [ $side != plain ] && env=(-genv LD_PRELOAD $pre -genv CLAMPI_MATCH $m)
        [ -n "$hb" ] && env+=(-genv CLAMPI_MATCH_HOT_BY $hb)
        [ -n "$carrier" ] && env+=(-genv CLAMPI_MATCH_CARRIER $carrier)
        timeout 600 mpiexec.mpich -n 2 "${mpich_net[@]}" "${env[@]}" $prog $iters $depth 200 $form >>"$tmp/${side//\//_}"
      fi
    done
  done
  python3 - "$tmp" "$mpi" "$depth" "$iters" "$trials" "$out_dir/depth_preload-$mpi${OUT_SUFFIX:-}$sfx" "$transport" $kinds <<'PY'
import sys, os, json, statistics, time, re
tmp, mpi, depth, iters, trials, out, transport, kinds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7], sys.argv[8:]
def vals(side):
    return [float(m.group(1)) for m in re.finditer(r'us_per_roundtrip=([0-9.]+)', open('%s/%s' % (tmp, side.replace('/', '_'))).read())]
plain = vals('plain'); pm = statistics.median(plain)
rows = [{'side': 'plain', 'us_per_roundtrip': pm, 'trials': plain, 'speedup': 1.0}]
for k in kinds:
    v = vals(k); m = statistics.median(v)
    rows.append({'side': k, 'us_per_roundtrip': m, 'trials': v, 'speedup': pm / m})
hdr = ('# depth benchmark %s %s 2 ranks bound to cores: %d MPI_ANY_SOURCE receives posted ahead, 1 B %s ping-pong, '
       '%d iterations, %d alternating trials (median), %s\n# side us_per_roundtrip speedup_over_plain trials' %
       (mpi, transport, depth, 'MPI_Isend+MPI_Wait/MPI_Irecv+MPI_Wait' if os.environ.get('FORM') == 'nonblocking' else 'MPI_Send/MPI_Recv', iters, trials, time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())))
txt = hdr + '\n' + '\n'.join('%s %.2f %.2f %s' % (r['side'], r['us_per_roundtrip'], r['speedup'], r['trials']) for r in rows)
print(txt)
open(out + '.txt', 'w').write(txt + '\n')
json.dump({'bench': 'depth_preload', 'mpi': mpi, 'transport': transport, 'depth': depth, 'iters': iters, 'trials': trials, 'points': rows},
          open(out + '.json', 'w'), indent=1)
PY
  rm -rf "$tmp"
  py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # Debian python3-matplotlib
  $py "$here/plot_preload.py" "$out_dir/depth_preload-$mpi${OUT_SUFFIX:-}$sfx.json"
}
[ "${1:--}" != - ] && run_one openmpi "$1"
[ "${2:--}" != - ] && run_one mpich "$2"
exit 0
