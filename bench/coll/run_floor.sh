#!/usr/bin/env bash
# Alltoall and Allgather at P = 2 (one rank per core) against their floor: the MPI's own,
# the forced Morton schedule, clampi's default path and "flags" (each process raises one
# flag and waits for the other's, no data: the least a shared-memory collective does).
# RUNS runs per MPI, 8 B - 16 KiB. Output: bench/coll/results/p2_floor-{openmpi,mpich}.{txt,json}
# Usage: run_floor.sh [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
runs=${1:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for mpi in openmpi mpich; do
  bin=$root/build/$mpi/bench/coll/coll_bench
  [ -x "$bin" ] || { echo "skip $mpi: $bin not built"; continue; }
  if [ $mpi = openmpi ]; then launcher=(mpirun.openmpi); else launcher=(mpiexec.mpich); fi
  out=$here/results/p2_floor-$mpi
  : > "$out.txt"
  for r in $(seq "$runs"); do
    echo "## run $r of $runs, $(date -u +%F)" >> "$out.txt"
    "${launcher[@]}" -n 2 "$bin" --max 16K --variants mpi,morton,clampi,flags --json "$out-run$r.json" \
      --label "P=2 on 2 cores, floor" >> "$out.txt"
  done
done
