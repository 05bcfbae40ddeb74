#!/usr/bin/env bash
# bench/rmaext/mh_flush_read_ab.sh MPI OLD_LIB_DIR [ROUNDS] > OUT.txt: memory-handle windows
# whose owner is on the other of two emulated nodes (scripts/cluster.sh up 2 first) and that
# fetch the handle's liveness word (CLAMPI_MH_SUBSCRIBE_AFTER=0: no copy is kept, every check
# and flush fetches it), put or get + flush against the MPI's own dynamic window
# (mh_user_memory.c, 1 rank per node), alternating in one run between an older
# libclampi_pmpi.so (OLD_LIB_DIR: its flush gets the word, then flushes the endpoint) and
# build/MPI's (after puts only, its flush fences and gets the word: the answer completes the
# puts, no endpoint flush). MPI: openmpi | mpich. Quiet machine.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mpi=${1:?openmpi or mpich}; old=$(cd "${2:?old library dir}" && pwd); rounds=${3:-3}
prog=$root/build/$mpi/bench/rmaext/mh_user_memory
env=(CLAMPI_MH_SHARE=false CLAMPI_MH_SUBSCRIBE_AFTER=0)
[ "$mpi" = openmpi ] && env+=(OMPI_MCA_osc=pt2pt) # Open MPI 4.1's one-sided component over TCP
echo "# $(date -u +%FT%TZ) commit $(git -C "$root" rev-parse --short HEAD) $mpi, 2 emulated nodes, 1 rank each; old library $old; $(uptime)"
for r in $(seq "$rounds"); do
    for lib in old new; do
        libenv=()
        [ $lib = old ] && libenv=(LD_LIBRARY_PATH=$old)
        for m in malloc stack; do
            timeout 600 bash "$root/scripts/cluster.sh" run "$mpi" 2 "${env[@]}" "${libenv[@]}" \
                "$prog" $m 200 2 | sed "s/^/round=$r library=$lib /"
        done
    done
done
