#!/usr/bin/env bash
# Two builds of clampi side by side on bench/order_stream.c over TCP (UCX_TLS=tcp,self):
# rank 0 streams N x (data put, flag put) to rank 1 on a window the preload gives to
# clampi's UCX backend, then flushes once. Library A and library B alternate run by run
# with the plain MPI's put+flush between them, ROUNDS rounds, medians in us per put.
# For changes to the UCX backend's issue and progress paths (issue: "fast and right on
# workloads nobody here tuned for", ordered >= 3x faster than put+flush).
# Usage: [PAIRS="2000 50"] [SIZES="8 4096"] order_stream_ab.sh BUILD_DIR LIB_A LIB_B OUT [ROUNDS]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd) liba=${2:?lib A} libb=${3:?lib B} out=${4:?results file} rounds=${5:-5}
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
flavor=openmpi; "$mpiexec" --version 2>&1 | grep -q -E "Open MPI|OpenRTE" || flavor=mpich
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { # run LIB|- MODE N SIZE -> us per put
  local args=()
  if [ $flavor = openmpi ]; then
    args=(--mca btl tcp,self --mca osc pt2pt -x UCX_TLS=tcp,self)
    [ "$1" != - ] && args+=(-x LD_PRELOAD="$1" -x ORDER_STREAM_KEYS=clampi_backend=ucx)
  else
    args=(-env UCX_TLS tcp,self)
    [ "$1" != - ] && args+=(-env LD_PRELOAD "$1" -env ORDER_STREAM_KEYS clampi_backend=ucx)
  fi
  # MPICH 4.0.2 over UCX's TCP hangs in MPI_Finalize now and then (plainly too): the result
  # line comes before it, so a run is cut off after 60 s
  timeout -k 5 60 "$mpiexec" -n 2 "${args[@]}" "$build/bench/order_stream" "$2" "$3" "$4" </dev/null |
    awk '/^order_stream/ && / check=ok/ {sub("us_per_put=", "", $6); print $6}' || true
}
{
  echo "# bench/order_stream_ab.sh, $(date -u +%F), $(uname -n), $flavor, 2 ranks, TCP (UCX_TLS=tcp,self), MPI_Win_allocate;"
  echo "# A = $liba, B = $libb; us per put, medians of $rounds alternating rounds."
  echo "# mpi_flush = plain MPI, a flush after every put; ordered = mpi_win_order=true, one flush; unordered = one flush."
  printf "%5s %5s %9s %9s %9s %9s %9s %9s %9s %11s %11s %12s\n" pairs size mpi_flush A_flush B_flush A_order \
    B_order A_unord B_unord A_flush/ord B_flush/ord mpi_flush/B_ord
  for n in ${PAIRS:-2000 50}; do
    for size in ${SIZES:-8 4096}; do
      cols=()
      for _ in $(seq "$rounds"); do
        cols+=("$(run - put_flush $n $size)" "$(run "$liba" put_flush $n $size)" "$(run "$libb" put_flush $n $size)"
          "$(run "$liba" ordered $n $size)" "$(run "$libb" ordered $n $size)"
          "$(run "$liba" unordered $n $size)" "$(run "$libb" unordered $n $size)")
      done
      python3 - "$n" "$size" "$rounds" "${cols[@]}" <<'PY'
import statistics as st, sys
n, size, rounds, *vals = sys.argv[1:]
cols = [[float(v) for v in vals[k::7] if v] for k in range(7)]
m = [st.median(c) if c else float("nan") for c in cols]
print("%5s %5s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %11.2f %11.2f %12.2f"
      % (n, size, *m, m[1] / m[3], m[2] / m[4], m[0] / m[4]))
PY
    done
  done
} | tee "$out"
