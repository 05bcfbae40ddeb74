#!/usr/bin/env bash
# Instructions per MPI_Irecv + MPI_Send + MPI_Wait round (callgrind, one rank, difference of
# 2000 and 1000 rounds, counted inside main only: the MPI's own threads poll as often as the
# machine lets them): plain, preloaded without CLAMPI_MATCH (CLAMPI_MATCH_PROFILE unset), and
# with the profile on. BEFORE=LIB adds another build's library, preloaded the same way.
#   bench/match/profile_cost.sh BUILD_DIR      -> bench/match/results/<mpi>-profile-cost.json
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
cd "$(dirname "$0")"; mkdir -p results
bin=$build/bench/match/match_profile_cost lib=$build/src/libclampi_pmpi.so
mpi=mpich; grep -q openmpi "$build/CMakeCache.txt" && grep -Eq '^MPI_C_COMPILER:.*openmpi' "$build/CMakeCache.txt" && mpi=openmpi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
count() {  # count N [env...] -> instructions
  local n=$1; shift
  local f; f=$(mktemp)
  env "$@" valgrind --tool=callgrind --toggle-collect=main --callgrind-out-file=/dev/null "$bin" "$n" 2>"$f" >/dev/null || true
  grep -E "Collected" "$f" | awk '{print $4}'; rm -f "$f"
}
per() { local a b; a=$(count 1000 "$@"); b=$(count 2000 "$@"); echo $(( (b - a) / 1000 )); }
plain=$(per)
before=""
if [ -n "${BEFORE:-}" ]; then b=$(per LD_PRELOAD=$BEFORE); before=", before ($BEFORE) $b (+$((b - plain)))"; fi
off=$(per LD_PRELOAD=$lib)
on=$(per LD_PRELOAD=$lib CLAMPI_MATCH_PROFILE=1)
echo "instructions per Irecv+Send+Wait round ($mpi): plain $plain$before, preload profile unset $off (+$((off - plain))), profile on $on (+$((on - plain)))"
printf '{"bench":"match_profile_cost","mpi":"%s","plain":%s,"preload_unset":%s,"profile_on":%s}\n' $mpi $plain $off $on \
  > results/$mpi-profile-cost.json
