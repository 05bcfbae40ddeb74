#!/usr/bin/env bash
# bench/rmaext/mh_nodes_ab.sh MPI [ROUNDS] > OUT.txt: memory handles whose owner is on the
# other of two emulated nodes (scripts/cluster.sh up 2 first), put or get + flush against
# the MPI's own dynamic window (mh_user_memory.c, 1 rank per node), alternating in one run
# between CLAMPI_MH_SUBSCRIBE_AFTER=0 (every operation and flush fetches the handle's
# liveness word: one round trip) and the default (after 16 fetches the peer keeps a copy
# that the owner's release clears). MPI: openmpi | mpich (build/<mpi> with benchmarks).
# Quiet machine.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mpi=${1:?openmpi or mpich}; rounds=${2:-3}
prog=$root/build/$mpi/bench/rmaext/mh_user_memory
env=(CLAMPI_MH_SHARE=false)
[ "$mpi" = openmpi ] && env+=(OMPI_MCA_osc=pt2pt) # Open MPI 4.1's one-sided component over TCP
echo "# $(date -u +%FT%TZ) commit $(git -C "$root" rev-parse --short HEAD) $mpi, 2 emulated nodes, 1 rank each; $(uptime)"
for r in $(seq "$rounds"); do
    for after in 0 16; do
        for m in malloc stack; do
            timeout 600 bash "$root/scripts/cluster.sh" run "$mpi" 2 "${env[@]}" CLAMPI_MH_SUBSCRIBE_AFTER=$after \
                "$prog" $m 200 2 | sed "s/^/round=$r subscribe_after=$after /"
        done
    done
done
