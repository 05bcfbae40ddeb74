#!/usr/bin/env bash
# finalize_returns.sh RUNS MAX_HUNG CLUSTER_SCRIPT MPI NP [VAR=VALUE ...] COMMAND [ARGS...]
# Runs the job RUNS times across the emulated nodes, each under a 30 s timeout (launch across the nodes included), without the
# MPICH finalize guard, and fails if a run fails or more than MAX_HUNG runs do not end.
# MPICH 4.0 on UCX hangs in MPI_Finalize when its ranks reach the endpoint closes apart
# (src/services/finalize.c narrows that race, it cannot close it): with a UCX window
# between two nodes, one rank each, 5 runs of 5 hung without clampi's barrier, 0 of 5 with
# it on a quiet machine, 2 of 5 while another test loaded both cores.
set -u
runs=$1 max_hung=$2 cluster=$3; shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
hung=0 failed=0
for ((i = 1; i <= runs; i++)); do
  timeout -k 5 30 "$cluster" run "$@" >"$out" 2>&1
  rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then hung=$((hung + 1))
  elif [ $rc = 77 ]; then cat "$out"; exit 77
  elif [ $rc != 0 ]; then failed=$((failed + 1)); cat "$out"; fi
done
echo "finalize_returns: $runs runs, $hung did not end (at most $max_hung may), $failed failed"
[ $hung -le "$max_hung" ] && [ $failed = 0 ]
