#!/usr/bin/env bash
# bench/rmaext/flush_count.sh [OUT]: what one flush does, counted, for a
# plain MPI window (Open MPI osc/rdma and osc/ucx, MPICH ch4:ucx) against clampi UCX
# windows with mpi_win_scope=process and =thread, at 1..32 threads, over shared memory.
# Counts (flush_probe.c, by interposition; clampi's flush probe): locks taken per flush,
# distinct lock words the flushing thread shares with another thread, UCX workers
# progressed, progress calls, endpoint/worker flushes; with CALLGRIND=1 also instructions
# per flush (callgrind, --toggle-collect on the flush, 1 and 4 threads).
# Needs build/openmpi and build/mpich (or OMPI_BUILD, MPICH_BUILD) with -DCLAMPI_BUILD_BENCH=ON. Counts do not depend
# on machine load; timings of the same pattern are rmaext_bench's "mt" experiment.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/bench/rmaext/results/flush_count.txt}
iters=${ITERS:-200}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi=${OMPI_BUILD:-$root/build/openmpi}/bench/rmaext/flush_count
mpich=${MPICH_BUILD:-$root/build/mpich}/bench/rmaext/flush_count
{
    echo "# bench/rmaext/flush_count.sh: per flush, rank 0 with T threads each put 8 B + flush to rank 1, $iters times per thread, shared memory"
    echo "# $(date -u +%F) $(uname -r); Open MPI $(ompi_info --version 2>/dev/null | head -1 | awk '{print $NF}'), MPICH $(mpichversion 2>/dev/null | awk '/Version/{print $NF}'), UCX $(pkg-config --modversion ucx 2>/dev/null)"
    for t in 1 2 4 8 16 32; do
        for v in mpi process thread; do
            echo "openmpi $(timeout 300 mpirun.openmpi --oversubscribe -np 2 "$ompi" $v $t "$iters" 2>/dev/null)"
        done
        echo "openmpi-osc-ucx $(timeout 300 mpirun.openmpi --oversubscribe --mca osc ucx -np 2 "$ompi" mpi $t "$iters" 2>/dev/null)"
        for v in mpi process thread; do
            echo "mpich $(timeout 300 mpiexec.mpich -n 2 "$mpich" $v $t "$iters" 2>/dev/null)"
        done
    done
    if [ "${CALLGRIND:-0}" = 1 ]; then
        echo "# instructions per flush (callgrind, rank 0, --toggle-collect='*Win_flush', $iters flushes per thread)"
        for t in 1 4; do
            for v in mpi process thread; do
                for m in openmpi mpich; do
                    f=$(mktemp /tmp/flush_cg.XXXXXX)
                    bin=$ompi launch=(mpirun.openmpi --oversubscribe -np 1)
                    [ $m = mpich ] && bin=$mpich launch=(mpiexec.mpich -n 1)
                    timeout 900 "${launch[@]}" valgrind -q --tool=callgrind --callgrind-out-file="$f" \
                        --toggle-collect='*Win_flush' "$bin" $v $t "$iters" : -n 1 "$bin" $v $t "$iters" >/dev/null 2>&1
                    ir=$(python3 "$root/bench/rmaext/callgrind_calls.py" "$f" | awk '/^Ir/{print $2}')
                    echo "$m variant=$v threads=$t instructions_per_flush=$(( ${ir:-0} / (t * iters) ))"
                    rm -f "$f"
                done
            done
        done
    fi
} | tee "$out"
