#!/usr/bin/env bash
# bench/rmaext/mh_user_memory.sh [OUT_DIR]: memory handles to the program's own memory
# (malloc, calloc, a stack array, a 16 KiB and a 4 KiB block inside malloc's heap) against each MPI's own
# dynamic window, 2 ranks bound to cores, both in one run alternating per trial
# (mh_user_memory.c). Shared memory and UCX over TCP (UCX_TLS=tcp,self) on this host, on
# Open MPI and MPICH; then, if `scripts/cluster.sh up 2` was run, MPICH across two emulated
# nodes. Writes OUT_DIR/<mpi>-<transport>.txt, OUT_DIR/results.json and OUT_DIR/speedup.png.
# Needs build/openmpi and build/mpich built with -DCLAMPI_BUILD_BENCH=ON; quiet machine.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/bench/rmaext/results/mh_user_memory}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mems="malloc calloc stack malloc_small malloc_4k"
ompi=$root/build/openmpi/bench/rmaext/mh_user_memory
mpich=$root/build/mpich/bench/rmaext/mh_user_memory
for tr in shm tcp; do
    iters=2000
    [ $tr = tcp ] && iters=300
    of=() ef=()
    [ $tr = tcp ] && of=(--mca btl tcp,self --mca osc pt2pt -x UCX_TLS=tcp,self) && ef=(-genv UCX_TLS tcp,self)
    for m in $mems; do
        timeout 600 mpirun.openmpi -n 2 --bind-to core "${of[@]}" "$ompi" $m $iters 3
    done > "$out/openmpi-$tr.txt"
    for m in $mems; do
        timeout 600 mpiexec.mpich -n 2 -bind-to core "${ef[@]}" "$mpich" $m $iters 3
    done > "$out/mpich-$tr.txt"
done
if bash "$root/scripts/cluster.sh" status >/dev/null 2>&1; then
    for m in malloc stack; do
        timeout 600 bash "$root/scripts/cluster.sh" run mpich 2 "$mpich" $m 200 2
    done > "$out/mpich-nodes.txt"
fi
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3 # Debian's python3-matplotlib
$py "$root/bench/rmaext/plot_mh_user_memory.py" "$out"
