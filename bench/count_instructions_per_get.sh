#!/bin/bash
# Instructions per 8-byte get under callgrind (1 rank, target self, 200 gets per flush),
# plain and preloaded: CLAMPI_MODE=off, window mode off, always_cache (hits). Deterministic:
# timing noise does not enter. Usage: bench/count_instructions_per_get.sh TREE openmpi|mpich
# count.sh TREE MPI -> instr/get for plain, mode off, window off, always_cache hit
tree=$1 m=$2; bin=$tree/build/$m/bench/pmpi_bench lib=$tree/build/$m/src/libclampi_pmpi.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
d=$(mktemp -d)
count() { env "$@" valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$d/cg" "$bin" count 200 >"$d/cnt.log" 2>&1
  local tot gets; tot=$(grep -E '^(summary|totals):' "$d/cg" | head -1 | awk '{print $2}'); gets=$(grep -o " gets=[0-9]*" "$d/cnt.log" | head -1 | cut -d= -f2)
  echo "scale=1; $tot / $gets" | bc; }
echo "$m $(basename $tree) plain=$(count X=1) mode_off=$(count LD_PRELOAD=$lib CLAMPI_MODE=off) window_off=$(count LD_PRELOAD=$lib CLAMPI_WINDOW_MODES=bench:off) always_cache_hit=$(count LD_PRELOAD=$lib CLAMPI_WINDOW_MODES=bench:always_cache)"
rm -rf $d
