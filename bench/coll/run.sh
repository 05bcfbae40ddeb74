#!/usr/bin/env bash
# bench/coll/run.sh: the collectives benchmark. Builds nothing; run scripts/build.sh first.
#   P=2        one rank per core: NOT oversubscribed (this machine has 2 cores)
#   P=4,8,16   OVERSUBSCRIBED (Open MPI --oversubscribe): timings include scheduling
# on Open MPI, and P=2, 4 on MPICH (MPICH busy-polls without yielding, so oversubscribed
# MPICH runs of its own collectives take minutes); then the cachegrind comparison and the
# plots. Output: bench/coll/results/{openmpi,mpich}_pN.{json,txt,png}, cachegrind.*, speedup_alltoall.png
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
out=$here/results
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ncpu=$(nproc)
for mpi in openmpi mpich; do
  bin=$root/build/$mpi/bench/coll/coll_bench
  [ -x "$bin" ] || { echo "skip $mpi: $bin not built"; continue; }
  if [ $mpi = openmpi ]; then launcher=(mpirun.openmpi --oversubscribe); Ps="2 4 8 16"; else launcher=(mpiexec.mpich); Ps="2 4"; fi
  for P in $Ps; do
    max=1M; factor=2
    [ "$P" -ge 8 ] && factor=4
    [ "$P" -ge 16 ] && max=256K
    [ $mpi = mpich ] && [ "$P" -gt "$ncpu" ] && { max=64K; factor=4; }
    if [ "$P" -le "$ncpu" ]; then label="P=$P on $ncpu cores, not oversubscribed"; else label="P=$P on $ncpu cores, OVERSUBSCRIBED"; fi
    echo "=== $mpi $label ==="
    "${launcher[@]}" -n "$P" "$bin" --max $max --factor $factor --json "$out/${mpi}_p$P.json" --label "$label" | tee "$out/${mpi}_p$P.txt"
  done
done
if [ -z "${SKIP_CACHEGRIND:-}" ]; then
  echo "=== cachegrind: naive vs Morton, alltoall, P=8..64 (Open MPI) ==="
  "$here/cachegrind.sh" "$root/build/openmpi" | tee "$out/cachegrind.txt"
fi
[ -n "${SKIP_B2B:-}" ] || "$here/run_b2b.sh"
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # Debian python3-matplotlib
"$py" "$here/plot.py" "$out"
"$py" "$here/tables.py" "$out" > "$out/tables.md"
