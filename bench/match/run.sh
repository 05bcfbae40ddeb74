#!/usr/bin/env bash
# Matching benchmarks (docs/matching.md): writes bench/match/results/<mpi>-*.json, PNGs.
#   bench/match/run.sh BUILD_DIR [quick]
#  1. engine alone: cycles per match vs depth, clear on/off, 1/2/4 threads  (engine.json)
#  2. engine under cachegrind, caches cleared: D1/LL read misses per search (cachegrind.json)
# SKIP_ENGINE=1 skips 1 and 2, SKIP_DEPTH=1 skips 3.
#  3. MPI vs CMPIX_ at controlled depth, shared memory and TCP, 2 ranks      (depth-shm.json, depth-tcp.json)
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); quick=${2:-}
cd "$(dirname "$0")"
out=results; mkdir -p $out
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then
  mpi=openmpi; flags=(--oversubscribe); tcp=(--mca btl tcp,self -x UCX_TLS=tcp)
else
  mpi=mpich; flags=(); tcp=(-genv UCX_TLS tcp)
fi
eng=$build/bench/match/match_engine_bench
if [ -z "${SKIP_ENGINE:-}" ] && { [ "$mpi" = openmpi ] || [ ! -s $out/engine.json ]; }; then   # no MPI: once
  echo "== engine: cycles per match"
  if [ -z "${SKIP_CYCLES:-}" ]; then   # SKIP_CYCLES=1: only the cachegrind part
    $eng --json $out/engine.json --iters 400 | tee $out/engine.txt
    $eng --json $out/engine-other.json --iters 400 --threads 1 --ahead other --kinds list,lla+hot,bins | tee $out/engine-other.txt
  fi
  echo "== engine: cachegrind read misses per search (difference of two iteration counts)"
  echo '{"bench":"match_cachegrind","points":[' > $out/cachegrind.json
  first=1
  for k in list lla hot lla+hot bins; do for d in 0 128 1024 4096; do for c in 1; do
    m=()
    for n in 48 96; do
      f=$(mktemp)
      valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null $eng --kinds $k --depths $d \
        --threads 1 --clear $c --iters $n >/dev/null 2>$f
      d1=$(grep -E "D1  misses" $f | awk '{gsub(",","",$4); print $4}')
      ll=$(grep -E "LLd misses" $f | awk '{gsub(",","",$4); print $4}')
      m+=("$d1 $ll"); rm -f $f
    done
    eff=48; [ $c = 1 ] && eff=12   # engine_bench runs iters/4 iterations with clearing
    read a1 b1 <<<"${m[0]}"; read a2 b2 <<<"${m[1]}"
    d1=$(echo "scale=1; ($a2-$a1)/$eff" | bc | sed 's/^\./0./; s/^-\./-0./'); ll=$(echo "scale=1; ($b2-$b1)/$eff" | bc | sed 's/^\./0./; s/^-\./-0./')
    printf '%-8s D=%-5s clear=%s  D1 misses/search %8s  LL misses/search %8s\n' $k $d $c $d1 $ll | tee -a $out/cachegrind.txt
    [ $first = 1 ] || echo ',' >> $out/cachegrind.json; first=0
    printf '{"kind":"%s","D":%s,"clear":%s,"d1_misses":%s,"ll_misses":%s}' $k $d $c $d1 $ll >> $out/cachegrind.json
  done; done; done
  echo ']}' >> $out/cachegrind.json
fi
trials=3; [ -n "$quick" ] && trials=1
transports="shm tcp"; [ -n "${SKIP_DEPTH:-}" ] && transports=""
for tr in $transports; do
  extra=(); [ $tr = tcp ] && extra=("${tcp[@]}")
  echo "== $mpi $tr: MPI vs CMPIX_ at controlled depth"
  timeout 1800 "$mpiexec" -n 2 "${flags[@]}" "${extra[@]}" $build/bench/match/match_depth_bench \
    --json $out/$mpi-depth-$tr.json --trials $trials | tee $out/$mpi-depth-$tr.txt || echo "(run failed or timed out)"
done
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # the distribution's, with matplotlib
$py plot.py $out || true
