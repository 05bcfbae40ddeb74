#!/usr/bin/env bash
# One clampi build for the MPI-5 ABI, one program built with mpicc_abi, two MPIs: runs the
# program under MPICH 5 (the build's own launcher) and under Intel MPI (I_MPI_ROOT), each
# plainly and with libclampi_pmpi_abi.so preloaded. Requires identical "result" lines in all
# four runs, and the same clampi stats lines (windows, collectives) under both MPIs; match
# lines, where CLAMPI_MATCH is set, must show messages under both.
# Usage: run_abi.sh MPIEXEC NP PRELOAD_LIB WHICH_MPI -- PROGRAM [ARGS...]
# Extra environment for the preloaded runs: CLAMPI_ABI_ENV="VAR=VALUE ..." (set by ctest).
set -uo pipefail
mpiexec=$1 np=$2 lib=$3 which=$4; shift 4
[ "$1" = -- ] && shift
if [ -z "${I_MPI_ROOT:-}" ] || [ ! -e "$I_MPI_ROOT/lib/libmpi_abi.so" ]; then
  echo "SKIP: Intel MPI with the MPI-5 ABI not found (I_MPI_ROOT=${I_MPI_ROOT:-unset}; scripts/mpi_wheels.sh installs it)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpich_lib=$(dirname "$(dirname "$mpiexec")")/lib
extra=()
for v in ${CLAMPI_ABI_ENV:-}; do extra+=(-genv "${v%%=*}" "${v#*=}"); done
# shellcheck source=../support/rank_output.sh
. "$(dirname "$0")/../support/rank_output.sh"
run() {  # run NAME LAUNCHER LIBDIR [launcher args] -- PROGRAM...
  local name=$1 launcher=$2 libdir=$3 rc=0; shift 3
  # shellcheck disable=SC2046  # the launcher's arguments, split on purpose
  timeout 240 "$launcher" $(rank_output_args mpich "$out/$name.rank") -n "$np" -genv LD_LIBRARY_PATH "$libdir" "$@" \
    >"$out/$name.launcher" 2>"$out/$name.err" || rc=$?
  rank_output_collect "$out/$name.rank" "$np" >"$out/$name.out"
  if [ $rc -ne 0 ]; then
    echo "FAIL: $name exited with an error"; cat "$out/$name.out" "$out/$name.launcher" "$out/$name.err"; exit 1
  fi
}
status=0
for mpi in mpich intel; do
  if [ $mpi = mpich ]; then launcher=$mpiexec libdir=$mpich_lib want=MPICH; else
    launcher=$I_MPI_ROOT/bin/mpiexec libdir=$I_MPI_ROOT/lib want=Intel; fi
  run $mpi-which "$launcher" "$libdir" "$which"
  grep -q "^mpi=.*$want" "$out/$mpi-which.out" || { echo "FAIL: expected $want, ran on: $(cat "$out/$mpi-which.out")"; exit 1; }
  echo "$mpi: $(head -1 "$out/$mpi-which.out")"
  run $mpi-plain "$launcher" "$libdir" "$@"
  run $mpi-preload "$launcher" "$libdir" -genv LD_PRELOAD "$lib" -genv CLAMPI_STATS 1 "${extra[@]}" "$@"
  for r in plain preload; do grep '^result' "$out/$mpi-$r.out" | sort >"$out/$mpi-$r.res"; done
  grep -E '^clampi: (rank|coll rank)=' "$out/$mpi-preload.out" | sort >"$out/$mpi.stats"
  grep -E '^clampi: match rank=' "$out/$mpi-preload.out" >"$out/$mpi.match"
done
[ -s "$out/mpich-plain.res" ] || { echo "FAIL: no result lines"; cat "$out/mpich-plain.out"; exit 1; }
for f in mpich-preload intel-plain intel-preload; do
  diff "$out/mpich-plain.res" "$out/$f.res" >/dev/null || { echo "FAIL: results of $f differ"; diff "$out/mpich-plain.res" "$out/$f.res" | head; status=1; }
done
[ -s "$out/mpich.stats" ] || [ -s "$out/mpich.match" ] || { echo "FAIL: the preload printed no stats line"; exit 1; }
if ! diff "$out/mpich.stats" "$out/intel.stats" >"$out/stats.diff"; then
  echo "FAIL: stats lines differ between the MPIs"; cat "$out/stats.diff"; status=1
fi
for mpi in mpich intel; do
  if echo "${CLAMPI_ABI_ENV:-}" | grep -q CLAMPI_MATCH=; then
    msgs=$(grep -o ' messages=[0-9]*' "$out/$mpi.match" | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
    [ "$msgs" -gt 0 ] || { echo "FAIL: $mpi: no message through clampi's matching"; cat "$out/$mpi.match"; status=1; }
    echo "$mpi: match messages=$msgs"
  fi
done
echo "results: $(wc -l <"$out/mpich-plain.res") lines identical in 4 runs; stats lines under both MPIs:"
cat "$out/mpich.stats" | cut -c1-160
exit $status
