#!/bin/sh
# Fetch-and-op and compare-and-swap latency (op + flush, shared memory, 2 ranks bound) of
# two clampi libraries side by side: OLD_LIB (an earlier libclampi.so.0, preloaded so that
# the same rmaext_bench binary runs on it) and the build's own, alternating, each run also
# timing Open MPI's osc/rdma (the "mpi" variant) as the baseline.
#   bench/rmaext/amo_ab.sh BUILD_DIR OLD_LIB [RUNS]
set -eu
build=$(cd "${1:?usage: amo_ab.sh BUILD_DIR OLD_LIB [RUNS]}" && pwd)
old=${2:?usage: amo_ab.sh BUILD_DIR OLD_LIB [RUNS]}
runs=${3:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "# amo_ab.sh: op + flush latency (us, best of 5 trials per run), $runs alternating runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
    for v in before after; do
        case $v in before) set -- -x LD_PRELOAD="$old" ;; after) set -- ;; esac
        mpirun.openmpi -n 2 --bind-to core "$@" -x RMAEXT_TRANSPORT=shm "$build/bench/rmaext/rmaext_bench" amo \
            --trials 5 --no-mpi-cas 2>&1 | grep '"exp":"amo"' | grep -v '"clampi_ucx"' |
            python3 -c "
import json, sys
d = {(r['op'], r['variant']): r['lat_us'] for r in map(json.loads, sys.stdin)}
m, f, c = d[('fetch_and_op', 'mpi')], d[('fetch_and_op', 'clampi_ucx_intrinsic')], d[('cas', 'clampi_ucx_intrinsic')]
print(f'$v osc_rdma_fop={m} clampi_fop={f} clampi_cas={c} fop_speedup_over_osc_rdma={m / f:.2f}')"
    done
done
