#!/usr/bin/env bash
# Wall time of tests/pmpi/plain_many_windows (N ucx-backend windows alive at once on one
# communicator, each fenced twice with a put, then freed), 2 ranks, preloaded: an older
# libclampi_pmpi.so (OLD) against BUILD's, alternating, ROUNDS rounds.
#   bench/many_windows_ab.sh BUILD OLD_LIB [N] [ROUNDS]      (BUILD: build/openmpi or build/mpich)
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
old=$(realpath "${2:?old libclampi_pmpi.so}")
n=${3:-1000}
rounds=${4:-5}
new=$build/src/libclampi_pmpi.so
prog=$build/tests/pmpi/plain_many_windows
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { # lib
  if grep -q "mpicc.openmpi" "$build/CMakeCache.txt"; then
    mpirun.openmpi -np 2 -x LD_PRELOAD="$1" -x CLAMPI_BACKEND=ucx "$prog" "$n" 1
  else
    mpiexec.mpich -n 2 -genv LD_PRELOAD "$1" -genv CLAMPI_BACKEND ucx "$prog" "$n" 1
  fi
}
echo "# $n windows, 2 ranks, CLAMPI_BACKEND=ucx, $(date -u '+%F %H:%M UTC'), $(basename "$build")"
echo "# old: $old"
echo "# new: $new ($(git -C "$(dirname "$0")/.." rev-parse --short HEAD))"
for r in $(seq 1 "$rounds"); do
  for which in old new; do
    lib=$old; [ $which = new ] && lib=$new
    t0=$(date +%s.%N)
    out=$(run "$lib" 2>&1)
    t1=$(date +%s.%N)
    ok=$(echo "$out" | grep -c "ok=1$" || true)
    printf 'round %d %s %.3f s ok_lines=%d\n' "$r" "$which" "$(echo "$t1 - $t0" | bc)" "$ok"
  done
done
