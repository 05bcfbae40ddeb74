#!/usr/bin/env bash
# bench/coll/run_nodes.sh: the hierarchical (multi-node) Alltoall/Allgather against the MPI
# library's, on simulated nodes (CLAMPI_NODE_SIZE) over a network-like transport (Open MPI
# --mca btl tcp,self; MPICH UCX_TLS=tcp): 2 nodes of 2 ranks and 3 nodes of 1 rank (and
# 2 nodes of 1 rank). Back to back over 8 rotating buffer sets, alternating trials, median.
# Output: bench/coll/results/nodes_{openmpi,mpich}_pP_kK.{json,txt}. Run scripts/build.sh first.
# All ranks share this machine's 2 cores: P = 3, 4 are oversubscribed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
out=$here/results
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for mpi in ${NODES_MPIS:-openmpi mpich}; do
  bin=$root/build/$mpi/bench/coll/coll_bench
  [ -x "$bin" ] || { echo "skip $mpi: $bin not built"; continue; }
  for cfg in "4 2" "3 1" "2 1"; do
    read -r P K <<<"$cfg"
    label="P=$P, CLAMPI_NODE_SIZE=$K ($(( (P + K - 1) / K )) simulated nodes), TCP"
    args=(--b2b 16 --trials 15 --max 1M --factor 4)
    echo "=== $mpi $label ==="
    if [ $mpi = openmpi ]; then
      cmd=(mpirun.openmpi --oversubscribe --mca btl tcp,self -x CLAMPI_NODE_SIZE=$K -n "$P")
    else
      cmd=(env UCX_TLS=tcp CLAMPI_NODE_SIZE=$K mpiexec.mpich -n "$P")
      [ "$P" -gt 2 ] && args=(--b2b 8 --trials 7 --max 256K --factor 8)
    fi
    CLAMPI_NODE_SIZE=$K timeout 1200 "${cmd[@]}" "$bin" "${args[@]}" --json "$out/nodes_${mpi}_p${P}_k$K.json" \
      --label "$label" | tee "$out/nodes_${mpi}_p${P}_k$K.txt" || echo "($mpi $label: failed or timed out)"
  done
done
