#!/usr/bin/env bash
# System calls of a stream of get misses (bench/miss_stream.c), counted with strace -c on
# rank 0: plain MPI, the preload with CLAMPI_MODE=always_cache, and (with a second build
# directory) the preload of that build, at 4 KiB and 16 KiB, memory from malloc
# (MPI_Win_create) and MPI_Win_allocate. Counts do not move with the machine's load, where
# the timed figures of bench/run_miss_stream.sh do. Open MPI over TCP (osc pt2pt) or MPICH
# over UCX's TCP, 2 ranks, GETS gets a pass (default 300), 3 passes.
# The total moves with how long the MPI's progress waited (poll/epoll calls); madvise does not.
# Writes bench/results/get_miss_syscalls-MPI.txt.
# Usage: count_miss_syscalls.sh BUILD_DIR [BEFORE_BUILD_DIR]
set -euo pipefail
command -v strace >/dev/null || { echo "count_miss_syscalls.sh: needs strace (scripts/deps.sh installs it)" >&2; exit 1; }
build=$(cd "${1:?build dir}" && pwd) before=${2:-}
[ -n "$before" ] && before=$(cd "$before" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
flavor=openmpi; "$mpiexec" --version 2>&1 | grep -q -E "Open MPI|OpenRTE" || flavor=mpich
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gets=${GETS:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/rank0.sh" <<'SH'
#!/bin/sh
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
if [ "$rank" = 0 ]; then exec strace -f -c -o "$STRACE_OUT" "$@"; else exec "$@"; fi
SH
chmod +x "$tmp/rank0.sh"
count() { # count LIB SIZE MEM -> "madvise total" on rank 0 (LIB "" = plain)
  local lib=$1 args=() out=$tmp/strace.txt
  if [ $flavor = openmpi ]; then
    args=(--mca btl tcp,self --mca osc pt2pt -x STRACE_OUT="$out")
    [ -n "$lib" ] && args+=(-x LD_PRELOAD="$lib" -x CLAMPI_MODE=always_cache)
  else
    args=(-env UCX_TLS tcp -env STRACE_OUT "$out")
    [ -n "$lib" ] && args+=(-env LD_PRELOAD "$lib" -env CLAMPI_MODE always_cache)
  fi
  # MPICH 4.0.2 over UCX's TCP hangs in MPI_Finalize now and then (plainly too): such a run
  # is cut off, leaves no count, and is run again (3 tries).
  for _ in 1 2 3; do
    rm -f "$out"
    timeout -k 5 60 "$mpiexec" -n 2 "${args[@]}" "$tmp/rank0.sh" "$build/bench/miss_stream" "$2" "$3" "$gets" \
      </dev/null >/dev/null 2>&1 || true
    grep -q ' total$' "$out" 2>/dev/null && break
  done
  awk '$NF == "madvise" {m = $4} $NF == "total" {t = $4} END {printf "%d %d", m, t}' "$out" 2>/dev/null || echo "? ?"
}
out=$root/bench/results/get_miss_syscalls-$flavor.txt
{
  echo "# bench/count_miss_syscalls.sh, $(date -u +%F), $flavor over TCP: rank 0 gets distinct blocks of rank 1's"
  echo "# window, MPI_Get + MPI_Win_flush each, $gets gets a pass, 3 passes ($((3 * gets)) gets); strace -c -f of rank 0."
  echo "# clampi = the preload with CLAMPI_MODE=always_cache (every get a miss)${before:+; before = the preload of $before}."
  printf "%-9s %6s | %-17s | %-17s%s\n" memory size "plain madv/total" "clampi madv/total" "${before:+ | before madv/total}"
  for mem in create allocate; do
    for size in 4096 16384; do
      p=$(count "" $size $mem) c=$(count "$build/src/libclampi_pmpi.so" $size $mem) b=
      [ -n "$before" ] && b=$(count "$before/src/libclampi_pmpi.so" $size $mem)
      printf "%-9s %6s | %-17s | %-17s%s\n" $mem $size "${p/ //}" "${c/ //}" "${b:+ | ${b/ //}}"
    done
  done
} | tee "$out"
