#!/usr/bin/env bash
# The transparent preload (default mode) against plain MPI on the OSU one-sided patterns
# (bench/osu_like.c), side by side in one run, 2 ranks:
#  1. instructions per iteration of rank 0's loop (callgrind, rank 0 only; deterministic
#     for the passive-target syncs over shared memory; fence/PSCW include waiting), plain
#     and preloaded, and the ratio;
#  2. microseconds per iteration, TRIALS alternating runs, medians and the ratio (noisy on
#     a loaded machine: the counts are the reliable measure).
# Usage: bench/run_osu_like.sh BUILD_DIR [TRIALS] [shm|tcp] [quick]
#   -> bench/results/osu_like-<mpi>-<transport>.txt (the table printed; OSU_LIKE_OUT overrides)
# Environment: OSU_LIKE_ENV="VAR=value ..." is added to the preloaded runs only.
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); trials=${2:-3}; transport=${3:-shm}; quick=${4:-}
cd "$(dirname "$0")/.."
bin=$build/bench/osu_like lib=$build/src/libclampi_pmpi.so
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
extra=(); for kv in ${OSU_LIKE_ENV:-}; do extra+=("$kv"); done
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then
  flavor=openmpi; flags=(--oversubscribe); rankvar=OMPI_COMM_WORLD_RANK
  [ "$transport" = tcp ] && flags+=(--mca btl tcp,self --mca osc pt2pt)
  pre() { local a=(-x LD_PRELOAD="$lib"); for kv in "${extra[@]}"; do a+=(-x "$kv"); done; echo "${a[@]}"; }
  envx() { echo "-x $1"; }
else
  flavor=mpich; flags=(); rankvar=PMI_RANK
  [ "$transport" = tcp ] && flags+=(-genv UCX_TLS tcp)
  pre() { local a=(-genv LD_PRELOAD "$lib"); for kv in "${extra[@]}"; do a+=(-genv "${kv%%=*}" "${kv#*=}"); done; echo "${a[@]}"; }
  envx() { echo "-genv ${1%%=*} ${1#*=}"; }
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# rank 0 under callgrind, rank 1 natively
cat >"$tmp/cg.sh" <<EOF
#!/bin/sh
if [ "\${$rankvar:-0}" = 0 ]; then
  exec valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="\$CG_OUT" "\$@" 2>/dev/null
fi
exec "\$@"
EOF
chmod +x "$tmp/cg.sh"
field() { grep -o " $1=[0-9.]*" | head -1 | cut -d= -f2; }
median() { grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
run() {  # run plain|preload ARGS... -> us_per_iter
  local p=(); [ "$1" = preload ] && read -r -a p <<<"$(pre)"; shift
  { timeout 120 "$mpiexec" -n 2 "${flags[@]}" "${p[@]}" "$bin" "$@" 2>/dev/null || true; } | { field us_per_iter || true; }
}
count() {  # count plain|preload ITERS ARGS... -> instructions per iteration
  local p=(); [ "$1" = preload ] && read -r -a p <<<"$(pre)"; shift
  local iters=$1; shift
  rm -f "$tmp/cg.out"
  read -r -a cgenv <<<"$(envx CG_OUT="$tmp/cg.out")"
  timeout 300 "$mpiexec" -n 2 "${flags[@]}" "${p[@]}" "${cgenv[@]}" "$tmp/cg.sh" "$bin" "$@" "$iters" >/dev/null 2>&1 || true
  [ -s "$tmp/cg.out" ] || { echo nan; return; }
  local tot; tot=$(grep -E '^(summary|totals):' "$tmp/cg.out" | head -1 | awk '{print $2}')
  echo "scale=1; $tot / $iters" | bc
}
# pattern win sync size
configs=()
for p in get_bw get_bw_same get_lat put_bw put_lat acc_lat get_acc_lat fop_lat cas_lat; do configs+=("$p allocate flush 8"); done
for s in flush_local lock lock_all fence pscw; do for p in get_bw get_lat put_bw; do configs+=("$p allocate $s 8"); done; done
for k in create dynamic; do for p in get_bw get_bw_same get_lat put_bw put_lat acc_lat; do configs+=("$p $k flush 8"); done; done
for p in get_bw get_lat put_bw; do configs+=("$p allocate flush 1024"); done
if [ -n "$quick" ]; then configs=("get_bw allocate flush 8" "get_bw_same allocate flush 8" "get_lat allocate flush 8" "put_bw allocate flush 8" "get_bw create flush 8" "get_lat allocate fence 8"); fi
if [ "$transport" = tcp ]; then tit=100; cit=20; else tit=2000; cit=${OSU_LIKE_COUNT_ITERS:-300}; fi
out=${OSU_LIKE_OUT:-bench/results/osu_like-$flavor-$transport.txt}
mkdir -p bench/results
{
echo "# osu_like: plain MPI vs LD_PRELOAD=libclampi_pmpi.so (default mode${OSU_LIKE_ENV:+, $OSU_LIKE_ENV}), $flavor, $transport, 2 ranks"
echo "# instr = callgrind instructions per iteration of rank 0's loop (an iteration of a _bw pattern is 64 ops + sync);"
echo "# us = median of $trials alternating timed runs ($tit iterations); ratio = preload / plain (instr: lower is better)"
printf "%-12s %-9s %-12s %5s %12s %12s %7s %10s %10s %7s\n" pattern win sync size instr_plain instr_pre ratio us_plain us_pre ratio
} | tee "$out"
for c in "${configs[@]}"; do
  read -r p k s z <<<"$c"
  ip=$(count plain "$cit" "$p" "$k" "$s" "$z"); ic=$(count preload "$cit" "$p" "$k" "$s" "$z")
  rm -f "$tmp/tp" "$tmp/tc"
  for t in $(seq "$trials"); do
    run plain "$p" "$k" "$s" "$z" "$tit" >>"$tmp/tp"; run preload "$p" "$k" "$s" "$z" "$tit" >>"$tmp/tc"
  done
  tp=$(median <"$tmp/tp"); tc=$(median <"$tmp/tc")
  ri=$(echo "scale=3; $ic / $ip" | bc 2>/dev/null || echo nan); rt=$(echo "scale=3; $tc / $tp" | bc 2>/dev/null || echo nan)
  printf "%-12s %-9s %-12s %5s %12s %12s %7s %10s %10s %7s\n" "$p" "$k" "$s" "$z" "$ip" "$ic" "$ri" "$tp" "$tc" "$rt" | tee -a "$out"
done
echo "wrote $out"
