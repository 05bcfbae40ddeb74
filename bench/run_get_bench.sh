#!/usr/bin/env bash
# Runs get_bench on 2 ranks over shared memory and over TCP loopback (the network
# stand-in), for the MPI of BUILD_DIR; writes JSON into bench/results/.
# Usage: run_get_bench.sh BUILD_DIR [extra get_bench args]
set -euo pipefail
build=${1:?build dir}; shift
root=$(cd "$(dirname "$0")/.." && pwd)
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
flavor=openmpi; "$mpiexec" --version 2>&1 | grep -q -E "Open MPI|OpenRTE" || flavor=mpich
mkdir -p "$root/bench/results"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ $flavor = openmpi ]; then shm=(); tcp=(--mca btl tcp,self --mca osc pt2pt); else shm=(); tcp=(-env UCX_TLS tcp); fi
"$mpiexec" -n 2 "${shm[@]}" "$build/bench/get_bench" --label "$flavor-shm" \
  --json "$root/bench/results/get_bench-$flavor-shm.json" "$@"
# TCP stands in for a remote node: no target shares memory with the origin, so the
# shared-memory shortcut is off (MPICH would otherwise still map the target directly).
CLAMPI_SHM_DIRECT=0 "$mpiexec" -n 2 "${tcp[@]}" "$build/bench/get_bench" --label "$flavor-tcp" \
  --json "$root/bench/results/get_bench-$flavor-tcp.json" "$@"
