#!/usr/bin/env bash
# bench/service/run.sh OLD_BUILD NEW_BUILD: the progress service of two builds side by side
# (alternating, 2 ranks, Open MPI, clampi's UCX over TCP so that the target side needs
# progress): CPU seconds a process spends while its program sleeps 2 s outside MPI, and
# put+flush latency while the target computes outside MPI. Prints one line per run.
set -euo pipefail
old=$1 new=$2 runs=${RUNS:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for i in $(seq "$runs"); do
  for b in "$old" "$new"; do
    echo "$b idle: $(mpirun.openmpi -n 2 -x UCX_TLS=tcp,self "$b/bench/service_idle_cpu" | sort | tr '\n' ' ')"
    echo "$b flush: $(mpirun.openmpi -n 2 -x UCX_TLS=tcp,self "$b/bench/service_flush_latency")"
  done
done
