#!/usr/bin/env bash
# A communicator's life (MPI_Comm_dup, one exchange, MPI_Comm_free, every other one with the
# exchange still pending, or all after it completed; bursts of 10
# duplicates made, then freed; MPI_Comm_split, one exchange, MPI_Comm_free) plainly and preloaded
# with CLAMPI_MATCH (UCX carrier, MPI carrier), and with another library (PRELOAD_OLD: a
# before/after comparison), TRIALS alternating rounds, NP ranks (2); prints each run's lines.
#   bench/match/comm_free_cost.sh BUILD_DIR [N]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); n=${2:-3000}; trials=${TRIALS:-2}; np=${NP:-2}
prog=$build/bench/match/match_comm_free_cost; lib=$build/src/libclampi_pmpi.so
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then e() { echo -x "$1=$2"; }; else e() { echo -genv "$1" "$2"; }; fi
run() { # label, then launcher env words
  local label=$1; shift
  timeout 600 "$mpiexec" -n "$np" "$@" "$prog" "$n" | grep -E '^comm_(free|done_free|burst|split)_cost' | sed "s/^/$label: /"
}
echo "# $(date -u +%FT%TZ) commit $(git -C "$(dirname "$0")" rev-parse --short HEAD) N=$n NP=$np"
for t in $(seq "$trials"); do
  run plain
  [ -n "${PRELOAD_OLD:-}" ] && run "before ucx" $(e LD_PRELOAD "$PRELOAD_OLD") $(e CLAMPI_MATCH lla+hot) $(e CLAMPI_MATCH_CARRIER ucx)
  run "ucx" $(e LD_PRELOAD "$lib") $(e CLAMPI_MATCH lla+hot) $(e CLAMPI_MATCH_CARRIER ucx)
  [ -n "${PRELOAD_OLD:-}" ] && run "before mpi" $(e LD_PRELOAD "$PRELOAD_OLD") $(e CLAMPI_MATCH lla+hot) $(e CLAMPI_MATCH_CARRIER mpi)
  run "mpi" $(e LD_PRELOAD "$lib") $(e CLAMPI_MATCH lla+hot) $(e CLAMPI_MATCH_CARRIER mpi)
done
