#!/bin/sh
# The sampler's first touches with and without pages opened ahead of a thread's streak
# (CLAMPI_LOCALITY_SAMPLE_AHEAD, src/locality/sample/lease.c): plain, `--sample` with
# CLAMPI_LOCALITY_SAMPLE_AHEAD=256 and `--sample` with the default 0 (one fault per first-touched
# page) in one rotation (overhead.py --compare), on the OpenMP heap triad at three shapes
# (short run over 96 MiB, short run over 384 MiB, long run) and on two other programs
# (advect1d, LCC at 2 ranks). Writes RESULTS/pages_opened_ahead-<name>.{json,txt}, then
# the summary and plot (plot_pages_ahead.py).
#   bench/locality_sample/run_pages_ahead.sh BUILD_DIR
# Environment: TRIALS (5), RESULTS (bench/locality_sample/results), ONLY (names), CLI=1: the
# sampled runs go through `clampi-locality run --sample` as a user runs them (its Python
# start-up and JSON annotation count; RESULTS/pages_opened_ahead_cli-<name>.*, and the
# command's own cost, RESULTS/command_startup.txt).
# (command_startup.py runs under /usr/bin/python3, so `env python3` finds what a user's PATH
# finds, a shim included.) Run it on a quiet machine: nothing else running.
set -eu
build=$(cd "${1:?usage: run_pages_ahead.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
results=${RESULTS:-$here/results}
trials=${TRIALS:-5}
only=${ONLY:-triad_4M_x40 triad_16M_x10 triad_4M_x400 advect1d lcc}
lib=$build/src/libclampi_locality_sample.so
prefix=pages_opened_ahead
cli=""
if [ "${CLI:-0}" = 1 ]; then
    prefix=pages_opened_ahead_cli
    cli="--cli $build/bin/clampi-locality"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$results"

run() { # name, launcher, program...
    name=$1
    l=$2
    shift 2
    case " $only " in *" $name "*) ;; *) return 0 ;; esac
    echo "== $name: $* (load $(cut -d' ' -f1-3 /proc/loadavg))"
    python3 "$here/overhead.py" --lib "$lib" --trials "$trials" --label "$name" --launcher "$l" \
        --env OMP_NUM_THREADS=2 --env CLAMPI_LOCALITY_SAMPLE_AHEAD=256 --compare CLAMPI_LOCALITY_SAMPLE_AHEAD=0 \
        $cli --json "$results/$prefix-$name.json" -- "$@" | tee "$results/$prefix-$name.txt"
}

[ -z "$cli" ] || /usr/bin/python3 "$here/command_startup.py" "$build/bin/clampi-locality" "$lib" | tee "$results/command_startup.txt"
run triad_4M_x40 "" "$build/bench/triad_omp" 4194304 40
run triad_16M_x10 "" "$build/bench/triad_omp" 16777216 10
run triad_4M_x400 "" "$build/bench/triad_omp" 4194304 400
run advect1d "" "$build/apps/advect1d/advect1d_baseline"
run lcc "mpirun.openmpi -n 2 --oversubscribe" "$build/apps/lcc"
/usr/bin/python3 "$here/plot_pages_ahead.py" "$results" $prefix | tee "$results/$prefix.txt"
