#!/usr/bin/env bash
# bench/coll/run_b2b.sh [SUFFIX [BUILD_ROOT]]: CMPI_Alltoall/CMPI_Allgather against the MPI library called
# back to back (no barrier between calls) over 8 rotating buffer sets, as applications call
# them; P = 2, 3, 4 on Open MPI and MPICH. Variants alternate trial by trial in one run;
# each cell is the median over trials of (trial time / calls), maximum over ranks.
# Output: bench/coll/results/b2b_{openmpi,mpich}_pN[-SUFFIX].{json,txt}. Run scripts/build.sh first.
# P = 3, 4 are oversubscribed on a 2-core machine (scheduler-bound timings). BUILD_ROOT
# (default: this tree) holds build/{openmpi,mpich}: e.g. another commit's build, its files
# told apart by SUFFIX; B2B_MPIS and B2B_PS select the MPIs and process counts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
suffix=${1:+-$1}
broot=${2:-$root}
out=$here/results
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ncpu=$(nproc)
for mpi in ${B2B_MPIS:-openmpi mpich}; do
  bin=$broot/build/$mpi/bench/coll/coll_bench
  [ -x "$bin" ] || { echo "skip $mpi: $bin not built"; continue; }
  if [ $mpi = openmpi ]; then launcher=(mpirun.openmpi --oversubscribe); else launcher=(mpiexec.mpich); fi
  for P in ${B2B_PS:-2 3 4}; do
    args=(--b2b 64 --max 1M --factor 2)
    [ "$P" -gt 2 ] && args=(--b2b 64 --max 1M --factor 4)
    # MPICH busy-polls without yielding: oversubscribed, each of its calls costs time slices
    [ $mpi = mpich ] && [ "$P" -gt "$ncpu" ] && args=(--b2b 16 --trials 11 --max 1M --factor 4)
    if [ "$P" -le "$ncpu" ]; then label="b2b P=$P on $ncpu cores, not oversubscribed"; else label="b2b P=$P on $ncpu cores, OVERSUBSCRIBED"; fi
    echo "=== $mpi $label${suffix} ==="
    timeout 1200 "${launcher[@]}" -n "$P" "$bin" "${args[@]}" --json "$out/b2b_${mpi}_p$P$suffix.json" --label "$label$suffix" \
      | tee "$out/b2b_${mpi}_p$P$suffix.txt"
  done
done
