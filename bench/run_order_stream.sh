#!/usr/bin/env bash
# Ordered puts over TCP as a plain MPI program writes them (bench/order_stream.c): rank 0
# streams N x (data put, flag put) to rank 1 and flushes once, on a window the preload gives
# to clampi's UCX backend (info clampi_backend=ucx). Three ways to order, alternating in one
# run (ROUNDS rounds, medians, us per put): a flush after every put, mpi_win_order=true, and
# no ordering (the bound); the plain MPI's put+flush beside them. A long stream (2,000
# pairs) and a short burst (50 pairs), 8 B and 4 KiB, MPI_Win_allocate and MPI_Win_create
# over malloc memory. Writes bench/results/order_stream_tcp-MPI.txt.
# Targets (issue "fast and right on workloads nobody here tuned for"): ordered >= 3x faster
# than put+flush and within 1.5x of unordered.
# Usage: run_order_stream.sh BUILD_DIR [ROUNDS]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd) rounds=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
flavor=openmpi; "$mpiexec" --version 2>&1 | grep -q -E "Open MPI|OpenRTE" || flavor=mpich
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lib=$build/src/libclampi_pmpi.so
run() { # run PRELOAD(0|1) WIN MODE N SIZE -> us per put
  local args=()
  if [ $flavor = openmpi ]; then
    args=(--mca btl tcp,self --mca osc pt2pt -x UCX_TLS=tcp,self -x ORDER_STREAM_WIN="$2")
    [ "$1" = 1 ] && args+=(-x LD_PRELOAD="$lib" -x ORDER_STREAM_KEYS=clampi_backend=ucx)
  else
    args=(-env UCX_TLS tcp,self -env ORDER_STREAM_WIN "$2")
    [ "$1" = 1 ] && args+=(-env LD_PRELOAD "$lib" -env ORDER_STREAM_KEYS clampi_backend=ucx)
  fi
  # MPICH 4.0.2 over UCX's TCP hangs in MPI_Finalize now and then (plainly too): the
  # result line is printed before it, so a run is cut off after 60 s.
  timeout -k 5 60 "$mpiexec" -n 2 "${args[@]}" "$build/bench/order_stream" "$3" "$4" "$5" </dev/null |
    awk '/^order_stream/ && / check=ok/ {sub("us_per_put=", "", $6); print $6}' || true
}
out=$root/bench/results/order_stream_tcp-$flavor.txt
{
  echo "# bench/run_order_stream.sh, $(date -u +%F), $(uname -n), $flavor, 2 ranks, TCP (UCX_TLS=tcp,self);"
  echo "# us per put, medians of $rounds alternating rounds; clampi = the preload, window info clampi_backend=ucx."
  echo "# flush = a flush after every put; ordered = mpi_win_order=true, one flush; unordered = one flush."
  # flush/unord: the most any ordering could gain over a flush after every put
  printf "%-8s %5s %5s %10s %9s %9s %9s %12s %12s %12s\n" window pairs size mpi_flush flush ordered unordered \
    flush/ordered ordered/unord flush/unord
  for win in allocate create; do
    for n in 2000 50; do
      for size in 8 4096; do
        M=() F=() O=() U=()
        for _ in $(seq "$rounds"); do
          M+=("$(run 0 $win put_flush $n $size)")
          F+=("$(run 1 $win put_flush $n $size)")
          O+=("$(run 1 $win ordered $n $size)")
          U+=("$(run 1 $win unordered $n $size)")
        done
        python3 - "$win" "$n" "$size" "${M[*]}" "${F[*]}" "${O[*]}" "${U[*]}" <<'PY'
import statistics as st, sys
win, n, size, *cols = sys.argv[1:]
med = [st.median(float(x) for x in c.split()) if c.split() else float("nan") for c in cols]
m, f, o, u = med
print("%-8s %5s %5s %10.2f %9.2f %9.2f %9.2f %12.2f %12.2f %12.2f" % (win, n, size, m, f, o, u, f / o, o / u, f / u))
PY
      done
    done
  done
} | tee "$out"
