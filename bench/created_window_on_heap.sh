#!/usr/bin/env bash
# MPI_Win_create windows over MPI_Alloc_mem memory under the preload with CLAMPI_BACKEND=ucx
# against plain MPI (and, given a second tree, that tree's clampi), alternating in one run,
# on Debian MPICH over shared memory, 2 ranks: bench/created_window_on_heap.c (lock, one
# put/get/accumulate, unlock), optionally beside BUSY processes that only spin (a crowded
# node: a target's progress thread then waits for the scheduler; loads and stores do not).
#   bench/created_window_on_heap.sh [OLD_TREE] [ROUNDS] [BUSY] [ITERS] [BYTES]
# Trees are built with scripts/build.sh mpich (build/mpich). Prints one line per run and the
# median ratio of each clampi build to plain per operation.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=${1:-}
rounds=${2:-3}
busy=${3:-0}
iters=${4:-1000}
bytes=${5:-8}
d=$(mktemp -d)
busy_pids=()
cleanup() {
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$d"
}
trap cleanup EXIT
mpicc.mpich -O2 -o "$d/prog" "$root/bench/created_window_on_heap.c"
declare -A lib=([new]="$root/build/mpich/src/libclampi_pmpi.so")
modes=(plain new)
if [ -n "$old" ]; then
  lib[old]="$(cd "$old" && pwd)/build/mpich/src/libclampi_pmpi.so"
  modes=(plain old new)
fi
for m in "${modes[@]}"; do [ "$m" = plain ] || [ -f "${lib[$m]}" ] || { echo "missing ${lib[$m]}"; exit 1; }; done
for ((k = 0; k < busy; k++)); do
  (while :; do :; done) &
  busy_pids+=($!)
done
echo "# created_window_on_heap: $rounds rounds, $busy busy processes, $iters epochs of $bytes B per operation"
for ((r = 1; r <= rounds; r++)); do
  for m in "${modes[@]}"; do
    env=()
    [ "$m" = plain ] || env=(-genv LD_PRELOAD "${lib[$m]}" -genv CLAMPI_BACKEND ucx)
    line=$(timeout 600 mpiexec.mpich -n 2 "${env[@]}" "$d/prog" "$iters" "$bytes" 2>&1 | grep '^bytes' || echo "failed")
    echo "round $r $m $line" | tee -a "$d/runs"
  done
done
python3 - "$d/runs" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if "failed" in f or "WRONG" in f: print("a run failed or was wrong:", line.strip()); sys.exit(1)
    runs.setdefault(f[2], []).append({k: float(f[f.index(k) + 1]) for k in ("put", "get", "acc")})
for m in runs:
    if m == "plain": continue
    ratios = {k: statistics.median(p[k] / c[k] for p, c in zip(runs["plain"], runs[m])) for k in ("put", "get", "acc")}
    print(f"{m}: plain/clampi median per epoch  put {ratios['put']:.2f}x  get {ratios['get']:.2f}x  acc {ratios['acc']:.2f}x")
PY
