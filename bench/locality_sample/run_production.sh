#!/bin/sh
# The sampler at production size: plain against `--sample` side by side
# (overhead.py alternates them) on advect1d, LULESH and LCC at their default sizes; prints
# the wall-clock, CPU and peak-RSS ratios, the dropped page records and where the
# sampler's time went, and writes bench/locality_sample/results/production_<name>.json.
#
#   bench/locality_sample/run_production.sh BUILD_DIR [LULESH_BINARY]
#
# LULESH is third-party (not in the repo): build it outside, e.g.
#   mpicxx -O2 -g -fopenmp -DUSE_MPI=1 -o lulesh lulesh.cc lulesh-comm.cc lulesh-init.cc lulesh-util.cc lulesh-viz.cc
# Without it the LULESH line is skipped. Environment: TRIALS (3), THREADS (2),
# LULESH_ARGS ("-s 30": the default size, run to the end, about 930 cycles),
# ADVECT_ARGS ("": 192^3, 120 steps), LCC_ARGS ("": scale 12, edge factor 16, 3 trials),
# MPIEXEC (mpirun.openmpi), RESULTS (bench/locality_sample/results), SUFFIX (""),
# ONLY (names to run, e.g. "advect1d lcc").
set -eu
build=$(cd "${1:?usage: run_production.sh BUILD_DIR [LULESH_BINARY]}" && pwd)
lulesh=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
results=${RESULTS:-$here/results}
trials=${TRIALS:-3}
threads=${THREADS:-2}
mpiexec=${MPIEXEC:-mpirun.openmpi}
only=${ONLY:-advect1d lulesh lcc}
suffix=${SUFFIX:-}
lib=$build/src/libclampi_locality_sample.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$results"
launcher="$mpiexec -n 2"
case "$mpiexec" in *openmpi*) launcher="$launcher --oversubscribe" ;; esac

run() { # name, launcher, program...
    name=$1
    shift
    l=$1
    shift
    case " $only " in *" $name "*) ;; *) return 0 ;; esac
    echo "== $name: $* (launcher: ${l:-none}, $threads threads, load $(cut -d' ' -f1-3 /proc/loadavg))"
    python3 "$here/overhead.py" --lib "$lib" --trials "$trials" --label "$name" --launcher "$l" \
        --env OMP_NUM_THREADS="$threads" --json "$results/production_$name$suffix.json" -- "$@" |
        tee "$results/production_$name$suffix.txt"
}

# shellcheck disable=SC2086
run advect1d "" "$build/apps/advect1d/advect1d_baseline" ${ADVECT_ARGS:-}
if [ -n "$lulesh" ]; then
    # shellcheck disable=SC2086
    run lulesh "" "$lulesh" ${LULESH_ARGS:--s 30}
else
    echo "== lulesh: skipped (no LULESH binary given)"
fi
# shellcheck disable=SC2086
run lcc "$launcher" "$build/apps/lcc" ${LCC_ARGS:-}
python3 "$here/summarize.py" "$results" "$suffix" > "$results/production_summary$suffix.txt"
cat "$results/production_summary$suffix.txt"
