#!/usr/bin/env bash
# The benchmark report: LCC, Barnes-Hut and the get microbenchmark on 2, 4 and 8 ranks,
# over shared memory and over TCP loopback, uncached (plain MPI) against clampi (fixed
# and adaptive), all configurations side by side in each run (alternating trials,
# medians); weak scaling (problem size per rank fixed); plus the adaptive study on
# 4 ranks over TCP (three starting sizes, fixed against adaptive; a too-small index).
# Writes raw JSON to bench/results/report/raw/, then report.json, PNG plots and
# summary.md (bench/report/plot.py).
#
# Usage: bench/report/run.sh [--quick] [--only REGEX] [BUILD_DIR]    (default build/openmpi;
#   build/mpich writes bench/results/report-mpich, 2 and 4 ranks)
#   --only: run just the jobs whose name matches (e.g. '^study-'); plots use every raw file.
# TCP runs set CLAMPI_SHM_DIRECT=0: on one machine, clampi would otherwise serve
# same-node targets by direct copy; with it off, TCP stands in for a network.
set -euo pipefail
quick=0; only=.
while [ $# -gt 0 ]; do
  case $1 in --quick) quick=1; shift ;; --only) only=$2; shift 2 ;; *) break ;; esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build/openmpi}" && pwd)
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
flavor=openmpi; "$mpiexec" --version 2>&1 | grep -q -E "Open MPI|OpenRTE" || flavor=mpich
# Open MPI's report in bench/results/report, MPICH's in bench/results/report-mpich
out=$root/bench/results/report; [ $flavor = mpich ] && out=$out-mpich
raw=$out/raw
mkdir -p "$raw"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
if [ $flavor = openmpi ]; then shm_flags=(--oversubscribe); tcp_flags=(--oversubscribe --mca btl tcp,self --mca osc pt2pt)
else shm_flags=(); tcp_flags=(-env UCX_TLS tcp); fi

if [ $quick = 1 ]; then
  ranks=(2 4); trials=3; lcc_base=8; bh_per_rank=64; bh_steps=1; gb_ops=200; study_trials=3
else
  ranks=(2 4 8); trials=3; lcc_base=9; bh_per_rank=128; bh_steps=2; gb_ops=400; study_trials=5
fi
# MPICH: 2 and 4 ranks only. Its passive-target RMA with more ranks than this machine's 2
# cores spins in progress for milliseconds per get; 8 ranks would measure only that.
[ $flavor = mpich ] && ranks=(2 4)
# LCC weak scaling: scale = lcc_base + log2(ranks), edge factor 16 (2^lcc_base vertices per rank).
# Barnes-Hut weak scaling: bh_per_rank bodies per rank, theta 0.5.
sweep_configs=(--config uncached --config fixed --config adaptive)

# Adaptive study sizes (index entries : buffer bytes): too small, about right, too large.
lcc_small=256:256K; lcc_right=16384:8M; lcc_large=1M:256M
bh_small=64:8K;    bh_right=4096:1M;   bh_large=1M:256M
study_lcc=(--config uncached --config fixed:$lcc_small --config fixed:$lcc_right --config fixed:$lcc_large
           --config adaptive:$lcc_small --config adaptive:$lcc_right --config adaptive:$lcc_large
           --config fixed:256:64M --config adaptive:256:64M)
study_bh=(--config uncached --config fixed:$bh_small --config fixed:$bh_right --config fixed:$bh_large
          --config adaptive:$bh_small --config adaptive:$bh_right --config adaptive:$bh_large)

jobs=()   # "name|transport|np|command..." built below, then run with progress
add() { jobs+=("$*"); }
for np in "${ranks[@]}"; do
  log2=0; n=$np; while [ $n -gt 1 ]; do n=$((n / 2)); log2=$((log2 + 1)); done
  for tr in shm tcp; do
    add "lcc-$tr-np$np|$tr|$np|lcc --scale $((lcc_base + log2)) --edgefactor 16 --trials $trials ${sweep_configs[*]}"
    add "bh-$tr-np$np|$tr|$np|bh --bodies-per-rank $bh_per_rank --steps $bh_steps --theta 0.5 --trials $trials ${sweep_configs[*]}"
    add "getbench-$tr-np$np|$tr|$np|get_bench --ops $gb_ops --trials 3 --max-size 16384"
  done
done
add "study-lcc-tcp-np4|tcp|4|lcc --scale $((lcc_base + 2)) --edgefactor 16 --trials $study_trials ${study_lcc[*]}"
add "study-bh-tcp-np4|tcp|4|bh --bodies-per-rank $bh_per_rank --steps $((bh_steps + 4)) --theta 0.5 --trials $study_trials ${study_bh[*]}"

selected=()
for job in "${jobs[@]}"; do [[ ${job%%|*} =~ $only ]] && selected+=("$job"); done
jobs=("${selected[@]}")
total=${#jobs[@]}
start=$(date +%s)
echo "clampi report: $total runs ($flavor, build $build), results in $out"
i=0
for job in "${jobs[@]}"; do
  i=$((i + 1))
  IFS='|' read -r name tr np cmd <<<"$job"
  read -r -a argv <<<"$cmd"
  exe=${argv[0]}; args=("${argv[@]:1}")
  case $exe in lcc|bh) path=$build/apps/$exe ;; get_bench) path=$build/bench/get_bench ;; esac
  if [ $exe = get_bench ]; then json_args=(--label "$flavor-$tr-np$np" --json "$raw/$name.json"); else json_args=(--json "$raw/$name.json"); fi
  elapsed=$(( $(date +%s) - start ))
  printf '[%2d/%d] %-22s %s -n %s %s  (%dm%02ds elapsed)\n' "$i" "$total" "$name" "$tr" "$np" "$cmd" $((elapsed / 60)) $((elapsed % 60))
  if [ $tr = tcp ]; then flags=("${tcp_flags[@]}"); envs=(env CLAMPI_SHM_DIRECT=0 UCX_TLS=tcp); else flags=("${shm_flags[@]}"); envs=(env); fi
  t0=$(date +%s)
  if ! "${envs[@]}" "$mpiexec" -n "$np" "${flags[@]}" "$path" "${args[@]}" "${json_args[@]}" >"$raw/$name.txt" 2>&1; then
    echo "        FAILED (see $raw/$name.txt)"; continue
  fi
  # the table each run prints (its last lines)
  grep -v '^# trial' "$raw/$name.txt" | sed -n '/^# \(lcc\|bh\|get_bench\),\? /,$p' | sed 's/^/        /' | head -14
  echo "        ($(( $(date +%s) - t0 ))s)"
done
echo "clampi report: all runs done in $(( ($(date +%s) - start) / 60 )) min; plotting"
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # Debian python3-matplotlib
"$py" "$root/bench/report/plot.py" "$out" "$flavor"
