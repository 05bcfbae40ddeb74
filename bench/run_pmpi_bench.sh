#!/usr/bin/env bash
# The transparent preload against plain MPI, side by side in one run (alternating trials,
# medians), on 2 ranks over shared memory:
#  1. overhead: 8-byte gets (64 per flush) plainly, with CLAMPI_MODE=off (pure
#     pass-through) and with the window's mode off (CLAMPI_WINDOW_MODES=bench:off);
#  2. the same counted in instructions per get (callgrind, 1 rank, deterministic);
#  3. hit throughput with 1, 2, 4, 8 threads (MPI_THREAD_MULTIPLE): plain MPI gets vs
#     preloaded with the window always_cache (every get a hit after warm-up);
#  4. over TCP loopback (a network stand-in): plain, window mode off, always_cache.
# Usage: bench/run_pmpi_bench.sh BUILD_DIR [TRIALS]   -> bench/results/pmpi_bench-<mpi>.json
#   (OUT=FILE writes there instead)
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); trials=${2:-5}
cd "$(dirname "$0")/.."
bin=$build/bench/pmpi_bench lib=$build/src/libclampi_pmpi.so
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then
  flavor=openmpi; flags=(--oversubscribe); tcp=(--mca btl tcp,self --mca osc pt2pt)
  pre() { echo "-x LD_PRELOAD=$lib -x $1"; }
else
  flavor=mpich; flags=(-genv PMPI_BENCH_SPIN 1); tcp=(-genv UCX_TLS tcp)
  pre() { echo "-genv LD_PRELOAD $lib -genv ${1%%=*} ${1#*=}"; }
fi
shm_flags=("${flags[@]}")
field() { grep -o " $1=[0-9.]*" | head -1 | cut -d= -f2; }
median() { grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
run() {  # run FIELD PRELOAD_ENV(or -) ARGS...
  local f=$1 env=$2; shift 2
  local p=(); [ "$env" != - ] && read -r -a p <<<"$(pre "$env")"
  # a run that hangs (MPICH + UCX tcp sometimes does in MPI_Finalize) is dropped
  { timeout 120 "$mpiexec" -n 2 "${flags[@]}" "${p[@]}" "$bin" "$@" || true; } | { field "$f" || true; }
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "== overhead: ns per 8-byte get, 2 ranks, shared memory ($flavor, $trials alternating trials)"
for t in $(seq "$trials"); do
  run ns_per_get - latency 20000 >>"$tmp/plain"
  run ns_per_get CLAMPI_MODE=off latency 20000 >>"$tmp/off"
  run ns_per_get CLAMPI_WINDOW_MODES=bench:off latency 20000 >>"$tmp/winoff"
done
p=$(median <"$tmp/plain"); o=$(median <"$tmp/off"); wo=$(median <"$tmp/winoff")
printf "%-28s %10s %10s\n" config ns/get ratio
printf "%-28s %10.1f %10.3f\n" plain "$p" 1 "preload CLAMPI_MODE=off" "$o" "$(echo "$o / $p" | bc -l)" \
  "preload window mode off" "$wo" "$(echo "$wo / $p" | bc -l)"
echo "== instructions per 8-byte get (callgrind, 1 rank, target self)"
count() { env "$@" valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$tmp/cg" "$bin" count 200 >"$tmp/cnt.log" 2>&1
  local tot gets; tot=$(grep -E '^(summary|totals):' "$tmp/cg" | head -1 | awk '{print $2}'); gets=$(field gets <"$tmp/cnt.log")
  echo "scale=1; $tot / $gets" | bc; }
ip=$(count X=1); io=$(count LD_PRELOAD="$lib" CLAMPI_MODE=off); iw=$(count LD_PRELOAD="$lib" CLAMPI_WINDOW_MODES=bench:off)
ih=$(count LD_PRELOAD="$lib" CLAMPI_WINDOW_MODES=bench:always_cache)
printf "%-28s %10s %10s\n" config instr/get ratio
printf "%-28s %10.1f %10.3f\n" plain "$ip" 1 "preload CLAMPI_MODE=off" "$io" "$(echo "$io / $ip" | bc -l)" \
  "preload window mode off" "$iw" "$(echo "$iw / $ip" | bc -l)" "preload always_cache (hits)" "$ih" "$(echo "$ih / $ip" | bc -l)"
echo "== hit throughput, Mgets/s (rank 0's threads; plain = MPI gets, preload = cache hits)"
printf "%-8s %12s %12s %8s\n" threads plain preload speedup
rows=""
for th in 1 2 4 8; do
  rm -f "$tmp/tp" "$tmp/tc"
  for t in $(seq 3); do
    run mgets_per_s - threads "$th" $((8000 / th)) >>"$tmp/tp"
    run mgets_per_s CLAMPI_WINDOW_MODES=bench:always_cache threads "$th" $((8000 / th)) >>"$tmp/tc"
  done
  a=$(median <"$tmp/tp"); b=$(median <"$tmp/tc")
  printf "%-8s %12.3f %12.3f %8.2f\n" "$th" "$a" "$b" "$(echo "$b / $a" | bc -l)"
  rows="$rows${rows:+,}{\"threads\":$th,\"plain_mgets_per_s\":$a,\"preload_hit_mgets_per_s\":$b}"
done
echo "== over TCP loopback: ns per 8-byte get (64 per flush), 3 alternating trials"
flags=("${shm_flags[@]}" "${tcp[@]}")
rm -f "$tmp/tcp_"*
for t in 1 2 3; do
  run ns_per_get - latency 300 >>"$tmp/tcp_plain"
  run ns_per_get CLAMPI_WINDOW_MODES=bench:off latency 300 >>"$tmp/tcp_off"
  run ns_per_get CLAMPI_WINDOW_MODES=bench:always_cache latency 300 >>"$tmp/tcp_hit"
done
tp=$(median <"$tmp/tcp_plain"); to=$(median <"$tmp/tcp_off"); th=$(median <"$tmp/tcp_hit")
printf "%-28s %10s %10s\n" config ns/get ratio
printf "%-28s %10.1f %10.3f\n" plain "$tp" 1 "preload window mode off" "$to" "$(echo "$to / $tp" | bc -l)" \
  "preload always_cache (hits)" "$th" "$(echo "$th / $tp" | bc -l)"
out=${OUT:-bench/results/pmpi_bench-$flavor.json}
mkdir -p "$(dirname "$out")"
cat >"$out" <<JSON
{"mpi":"$flavor","transport":"shm","np":2,"trials":$trials,
 "overhead_ns_per_get":{"plain":$p,"preload_mode_off":$o,"preload_window_off":$wo},
 "instructions_per_get":{"plain":$ip,"preload_mode_off":$io,"preload_window_off":$iw,"preload_always_cache_hit":$ih},
 "threads":[$rows],
 "tcp_ns_per_get":{"plain":$tp,"preload_window_off":$to,"preload_always_cache_hit":$th},
 "note":"2-core machine shared with other builds: timings are noisy; instruction counts are deterministic"}
JSON
echo "wrote $out"
