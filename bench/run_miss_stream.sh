#!/usr/bin/env bash
# Get misses in a stream over TCP (bench/miss_stream.c): plain MPI and the preload with
# CLAMPI_MODE=always_cache, alternating in one run (ROUNDS rounds, medians), at 8 B to
# 32 KiB, on memory from malloc (MPI_Win_create) and from MPI_Win_allocate. With a second
# build directory, its preload runs too (the tree before a change), in the same rounds.
# Env: GETS (gets per pass, default 2000: the cache's default 16 MiB buffer is all mapped
# after the first pass at 8 KiB and above; 300: every pass takes fresh buffer pages),
# SIZES (default "8 512 4096 32768"), TAG (added to the file name).
# Writes bench/results/get_miss_stream-MPI[-TAG].txt.
# Usage: run_miss_stream.sh BUILD_DIR [BEFORE_BUILD_DIR] [ROUNDS]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd) before=${2:-} rounds=${3:-5}
[ -n "$before" ] && before=$(cd "$before" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
flavor=openmpi; "$mpiexec" --version 2>&1 | grep -q -E "Open MPI|OpenRTE" || flavor=mpich
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { # run LIB SIZE MEM -> us per get (LIB "" = plain)
  local lib=$1 args=()
  if [ $flavor = openmpi ]; then
    args=(--mca btl tcp,self --mca osc pt2pt)
    [ -n "$lib" ] && args+=(-x LD_PRELOAD="$lib" -x CLAMPI_MODE=always_cache)
  else
    args=(-env UCX_TLS tcp)
    [ -n "$lib" ] && args+=(-env LD_PRELOAD "$lib" -env CLAMPI_MODE always_cache)
  fi
  # MPICH 4.0.2 over UCX's TCP hangs in MPI_Finalize now and then (plainly too): the
  # result line is printed before it, so a run is cut off after 60 s.
  timeout -k 5 60 "$mpiexec" -n 2 "${args[@]}" "$build/bench/miss_stream" "$2" "$3" "${GETS:-2000}" </dev/null |
    awk '/^miss_stream/ {print $4}' || true
}
out=$root/bench/results/get_miss_stream-$flavor${TAG:+-$TAG}.txt
{
  echo "# bench/run_miss_stream.sh, $(date -u +%F), $(uname -n), $flavor over TCP: rank 0 gets distinct blocks of"
  echo "# rank 1's window, MPI_Get + MPI_Win_flush each, ${GETS:-2000} gets a pass, best of 3 passes; medians of $rounds alternating rounds (us per get+flush)."
  echo "# clampi = the preload with CLAMPI_MODE=always_cache (every get a miss)${before:+; before = the preload of $before}."
  printf "%-9s %7s %9s %9s %7s%s\n" memory size plain clampi ratio "${before:+    before  ratio}"
  for mem in create allocate; do
    for size in ${SIZES:-8 512 4096 32768}; do
      P=() C=() B=()
      for _ in $(seq "$rounds"); do
        P+=("$(run "" $size $mem)")
        C+=("$(run "$build/src/libclampi_pmpi.so" $size $mem)")
        [ -n "$before" ] && B+=("$(run "$before/src/libclampi_pmpi.so" $size $mem)")
      done
      python3 - "$mem" "$size" "${P[*]}" "${C[*]}" "${B[*]:-}" <<'PY'
import statistics as st, sys
mem, size, p, c, b = sys.argv[1:6]
med = lambda s: st.median(float(x) for x in s.split())
line = "%-9s %7s %9.2f %9.2f %7.3f" % (mem, size, med(p), med(c), med(c) / med(p))
if b.strip(): line += " %9.2f %6.3f" % (med(b), med(b) / med(p))
print(line)
PY
    done
  done
} | tee "$out"
