#!/usr/bin/env bash
# finalize_returns.sh RUNS CLUSTER_SCRIPT MPI NP [VAR=VALUE ...] COMMAND [ARGS...]
# Runs the job RUNS times across the emulated nodes, each under a 30 s timeout, without the
# MPICH finalize guard, and fails if any run does not end or fails. MPICH 4.0 on UCX hangs
# in MPI_Finalize when its ranks reach the endpoint closes apart (services/finalize_barrier.c);
# with a UCX window between two nodes, one rank each, 5 runs of 5 hung without clampi's barrier.
set -u
runs=$1 cluster=$2; shift 2
hung=0 failed=0
for ((i = 1; i <= runs; i++)); do
  timeout -k 5 30 "$cluster" run "$@" >/tmp/clampi-finalize-returns.$$ 2>&1
  rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then hung=$((hung + 1))
  elif [ $rc = 77 ]; then cat /tmp/clampi-finalize-returns.$$; rm -f /tmp/clampi-finalize-returns.$$; exit 77
  elif [ $rc != 0 ]; then failed=$((failed + 1)); cat /tmp/clampi-finalize-returns.$$; fi
done
rm -f /tmp/clampi-finalize-returns.$$
echo "finalize_returns: $runs runs, $hung did not end, $failed failed"
[ $hung = 0 ] && [ $failed = 0 ]
