#!/usr/bin/env bash
# Sockets per process with the UCX carrier over TCP (UCX_TLS=tcp,self), NP ranks (8): plain
# MPI, the preload with CLAMPI_MATCH=lla+hot, and OLD_LIB's preload (a before/after), one
# run each; prints the median over ranks after MPI_Init and after one ring exchange.
#   bench/match/ring_sockets.sh BUILD_DIR [OUT.txt]     Env: NP (8), OLD_LIB
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); out=${2:-}; np=${NP:-8}
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
prog=$build/bench/match/match_ring_sockets
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then mpi=openmpi; else mpi=mpich; fi
run() { # $1 label, $2 preload library or -
  local env=()
  if [ $mpi = openmpi ]; then
    env=(--oversubscribe -x UCX_TLS=tcp,self)
    [ "$2" != - ] && env+=(-x LD_PRELOAD="$2" -x CLAMPI_MATCH=lla+hot -x CLAMPI_MATCH_CARRIER=ucx)
  else
    env=(-genv UCX_TLS tcp,self)
    [ "$2" != - ] && env+=(-genv LD_PRELOAD "$2" -genv CLAMPI_MATCH lla+hot -genv CLAMPI_MATCH_CARRIER ucx)
  fi
  # MPICH over UCX's TCP sometimes hangs in MPI_Finalize, plainly too: the lines come before
  timeout 60 "$mpiexec" -n "$np" "${env[@]}" "$prog" 2>/dev/null | grep '^sockets' | python3 -c '
import statistics, sys
rows = [dict(kv.split("=") for kv in l.split()[1:4]) for l in sys.stdin]
med = lambda k: statistics.median(int(r[k]) for r in rows) if rows else "n/a"
print("%-60s ranks=%d after_init=%s after_ring=%s" % (sys.argv[1], len(rows), med("after_init"), med("after_ring")))' "$1" || true
}
{
  echo "# $(date -u +%FT%TZ) commit $(git -C "$(dirname "$0")" rev-parse --short HEAD) $mpi np=$np UCX_TLS=tcp,self; median over ranks of sockets open"
  run plain -
  [ -n "${OLD_LIB:-}" ] && run "preload, before: $OLD_LIB" "$OLD_LIB"
  run "preload, endpoints at first use" "$build/src/libclampi_pmpi.so"
} | tee ${out:+"$out"}
