#!/usr/bin/env bash
# mpich_tcp_guard.sh NP MARK_LIBRARY COMMAND...
# Runs an MPI test under MPICH with UCX_TLS=tcp. MPICH 4.0.2 (ch4:ucx, UCX 1.13) sometimes
# never returns from MPI_Finalize over UCX's TCP transport: one rank waits in the PMI
# barrier while the other spins in ucp_worker_progress. It happens without clampi too
# (MPI_Init; MPI_Barrier; MPI_Finalize hung in 1 of 25-40 runs here). This guard passes
# the command's own exit status through, except in exactly that case: all NP ranks have
# entered MPI_Finalize (MARK_LIBRARY, built from tests/support/finalize_mark.c, is preloaded
# into the ranks and prints a line; every check ran before it) and the job still has not
# ended FINALIZE_GRACE seconds later. Then it stops the job,
# says so, and exits 0. Any other hang is left to CTest's timeout, any failure fails.
set -u
np=$1 mark=$2; shift 2
# hydra passes this environment to the ranks; a -genv LD_PRELOAD must keep $mark first
export LD_PRELOAD="$mark${LD_PRELOAD:+:$LD_PRELOAD}"
export CLAMPI_FINALIZE_MARK="$mark"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
grace=${FINALIZE_GRACE:-20}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
setsid "$@" > >(tee "$out") 2>&1 &
pid=$!
all_in=""
while kill -0 "$pid" 2>/dev/null; do
  if [ -z "$all_in" ] && [ "$(grep -c '^clampi-test: pid [0-9]* entering MPI_Finalize' "$out")" -ge "$np" ]; then
    all_in=$SECONDS
  fi
  if [ -n "$all_in" ] && [ $((SECONDS - all_in)) -ge "$grace" ]; then
    kill -TERM -- -"$pid" 2>/dev/null; sleep 1; kill -KILL -- -"$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    echo "mpich_tcp_guard: all $np ranks passed their checks and entered MPI_Finalize, which did not"
    echo "mpich_tcp_guard: return within ${grace}s (known MPICH 4.0.2 ch4:ucx hang with UCX_TLS=tcp); job stopped."
    exit 0
  fi
  sleep 0.2
done
wait "$pid"
rc=$?
sleep 0.2  # let tee drain
exit $rc
