#!/usr/bin/env bash
# Every existing figure, re-run in one session: the get cache's hits and misses
# (get_bench, 2 ranks, shared memory and TCP), the preload against plain MPI (pmpi_bench:
# default mode, mode off, always-cache hits, threads, TCP), the collectives at P = 2
# (coll_bench: MPI's, naive and Morton order), and the report's two targets, LCC and
# Barnes-Hut at 4 ranks over TCP (uncached against fixed and adaptive). Each benchmark runs
# its baseline beside clampi in the same processes or alternating trials; then
# bench/existing_figures.py sets every figure beside the committed run it was last
# reported from, and writes OUT_DIR/summary.md.
#   bench/existing_figures.sh BUILD_DIR OUT_DIR        (QUICK=1: fewer trials, a smoke run)
# PARTS: which of "get preload coll apps" to run (all by default; bench/run_all.sh sets it).
# APP_NP: ranks of LCC and Barnes-Hut (4; MPICH's passive-target RMA with more ranks than
# cores spins for milliseconds per get, so bench/run_all.sh uses 2 there).
# Run it on a quiet machine: nothing else running.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?build dir}" && pwd)
mkdir -p "${2:?out dir}"
out=$(cd "$2" && pwd)
quick=${QUICK:-0}
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
flavor=openmpi; "$mpiexec" --version 2>&1 | grep -q -E "Open MPI|OpenRTE" || flavor=mpich
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
np=${APP_NP:-4}
if [ $flavor = openmpi ]; then np4=(--oversubscribe); tcp=(--mca btl tcp,self --mca osc pt2pt)
else np4=(); tcp=(-env UCX_TLS tcp); fi
# as in bench/report/run.sh: TCP stands in for a network, so no same-node direct copy
tcp_env=(env CLAMPI_SHM_DIRECT=0 UCX_TLS=tcp)
if [ "$quick" = 1 ]; then ops=200; trials=2; pmpi_trials=1; coll_max=64K; app_trials=1
else ops=2000; trials=5; pmpi_trials=5; coll_max=1M; app_trials=3; fi
parts=" ${PARTS:-get preload coll apps} "
want() { [[ "$parts" == *" $1 "* ]]; }
step() { echo "== $* ($(date -u +%T))"; }
{
  echo "commit $(git -C "$root" rev-parse --short HEAD) $flavor $(date -u +%FT%TZ) quick=$quick"
  uptime
} >"$out/run.txt"

if want get; then
step "get cache: get_bench, shared memory and TCP"
"$mpiexec" -n 2 "$build/bench/get_bench" --ops $ops --trials $trials --label "$flavor-shm" \
  --json "$out/get_bench-$flavor-shm.json" >"$out/get_bench-$flavor-shm.txt"
"${tcp_env[@]}" "$mpiexec" -n 2 "${tcp[@]}" "$build/bench/get_bench" --ops $ops --trials $trials \
  --label "$flavor-tcp" --json "$out/get_bench-$flavor-tcp.json" >"$out/get_bench-$flavor-tcp.txt"
fi

if want preload; then
step "the preload against plain MPI: pmpi_bench"
OUT="$out/pmpi_bench-$flavor.json" "$root/bench/run_pmpi_bench.sh" "$build" $pmpi_trials >"$out/pmpi_bench-$flavor.txt"
fi

if want coll; then
step "collectives at P = 2: coll_bench"
"$mpiexec" -n 2 "$build/bench/coll/coll_bench" --max $coll_max --factor 2 --label "P=2 on $(nproc) cores" \
  --json "$out/coll-${flavor}_p2.json" >"$out/coll-${flavor}_p2.txt"
fi

if want apps; then
step "LCC and Barnes-Hut, $np ranks over TCP (the report's targets)"
cfg=(--config uncached --config fixed --config adaptive)
# MPICH 4.0.2 over UCX's TCP transport can hang in MPI_Finalize (docs/platforms.md, "MPI bugs
# clampi works around"): its runs go through the test suite's guard, which stops a job once
# every rank has entered MPI_Finalize; every run also has a time limit.
guard=()
mark=$build/tests/libclampi_finalize_mark.so
[ $flavor = mpich ] && [ -e "$mark" ] && guard=("$root/tests/support/mpich_tcp_guard.sh" $np "$mark")
app() { # NAME ARGS...: one application run, its JSON and text in OUT_DIR
  local name=$1; shift
  "${tcp_env[@]}" timeout "${APP_TIMEOUT:-3600}" "${guard[@]}" "$mpiexec" -n $np "${np4[@]}" "${tcp[@]}" \
    "$build/apps/$name" "$@" --trials $app_trials "${cfg[@]}" --json "$out/$name-tcp-np$np.json" \
    >"$out/$name-tcp-np$np.txt"
}
app lcc --scale 11 --edgefactor 16
app bh --bodies-per-rank 128 --steps 2 --theta 0.5
fi

step "compare with the committed runs"
python3 "$root/bench/existing_figures.py" "$out" "$flavor" | tee "$out/summary.md"
