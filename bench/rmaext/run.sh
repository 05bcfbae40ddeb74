#!/usr/bin/env bash
# bench/rmaext/run.sh [OUT_DIR]: the RMA-extension benchmarks, side by side.
# Needs build/openmpi and build/mpich built with -DCLAMPI_BUILD_BENCH=ON. Each binary runs
# its baseline (plain MPI window) and the clampi UCX variants alternately, trial by trial;
# the MPICH build contributes MPICH's baselines. Writes OUT_DIR/results.json (+ .jsonl per
# run), then plot.py draws the PNGs and the markdown table.
# Environment: TRIALS (default 5), QUICK=1 (fewer trials and threads: a smoke run),
# TCP_ITERS / TCP_TRIALS (default 100 / 2: Open MPI's osc pt2pt takes ~25 ms per put+flush
# over TCP on this machine), RESUME=1 (keep the runs already in OUT_DIR).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/bench/rmaext/results}
mkdir -p "$out"
trials=${TRIALS:-5}
maxthreads=32
[ "${QUICK:-0}" = 1 ] && trials=2 && maxthreads=4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi=$root/build/openmpi/bench/rmaext/rmaext_bench
mpich=$root/build/mpich/bench/rmaext/rmaext_bench
T=900

ompi_run() { # transport exp args...
    local tr=$1; shift
    local flags=(--oversubscribe -n 2)
    local tt=$trials
    [ "$tr" = tcp ] && flags+=(--mca btl tcp,self --mca osc pt2pt -x UCX_TLS=tcp) && tt=${TCP_TRIALS:-2} && set -- "$@" --iters "${TCP_ITERS:-100}"
    timeout $T mpirun.openmpi "${flags[@]}" -x RMAEXT_TRANSPORT=$tr "$ompi" "$@" --trials "$tt"
}
mpich_run() { # transport exp args...
    local tr=$1; shift
    local env=(-genv RMAEXT_TRANSPORT $tr)
    local tt=$trials
    [ "$tr" = tcp ] && env+=(-genv UCX_TLS tcp) && tt=${TCP_TRIALS:-2} && set -- "$@" --iters "${TCP_ITERS:-100}"
    timeout $T mpiexec.mpich -n 2 "${env[@]}" "$mpich" "$@" --trials "$tt" --mpi-only
}

run() { # label command...
    local label=$1; shift
    if [ "${RESUME:-0}" = 1 ] && [ -s "$out/$label.jsonl" ]; then echo "== $label (kept)" >&2; return; fi
    echo "== $label" >&2
    "$@" 2> "$out/$label.err" > "$out/$label.jsonl"
    [ "$?" = 0 ] || echo "   ($label failed or timed out: see $out/$label.err)" >&2
    [ -s "$out/$label.err" ] || rm -f "$out/$label.err" # keep only what a run said
}
run ompi_shm_mt    ompi_run shm mt --threads $maxthreads
run mpich_shm_mt   mpich_run shm mt --threads $maxthreads
for tr in shm; do
    run ompi_${tr}_order    ompi_run $tr order
    run mpich_${tr}_order   mpich_run $tr order
    run ompi_${tr}_wins     ompi_run $tr wins
    run mpich_${tr}_wins    mpich_run $tr wins
    run ompi_${tr}_progress ompi_run $tr progress --busy-ms 200
    run mpich_${tr}_progress mpich_run $tr progress --busy-ms 200
done
run ompi_shm_amo   ompi_run shm amo --no-mpi-cas
run mpich_shm_amo  mpich_run shm amo
# Open MPI's default one-sided component for shared memory (osc/rdma) crashes in
# MPI_Compare_and_swap (4.1.4); its osc/ucx is the other shared-memory choice.
run ompi_shm_amo_oscucx timeout $T mpirun.openmpi -n 2 --mca osc ucx -x RMAEXT_TRANSPORT=shm-osc-ucx "$ompi" amo --trials "$trials" --mpi-only
run ompi_tcp_order    ompi_run tcp order
run mpich_tcp_order   mpich_run tcp order
run ompi_tcp_progress ompi_run tcp progress --busy-ms 200
run mpich_tcp_progress mpich_run tcp progress --busy-ms 200
TCP_ITERS=20 run ompi_tcp_wins ompi_run tcp wins
TCP_ITERS=20 run mpich_tcp_wins mpich_run tcp wins
cat "$out"/*_*.jsonl > "$out/all.jsonl"
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
rows = [json.loads(l) for l in open(f"{out}/all.jsonl") if l.startswith("{")]
json.dump(rows, open(f"{out}/results.json", "w"), indent=1)
print(f"{len(rows)} results in {out}/results.json")
PY
/usr/bin/python3 "$root/bench/rmaext/plot.py" "$out"
