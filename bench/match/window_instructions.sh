#!/usr/bin/env bash
# Instructions per received message of a window of 64 1 B messages (bench/match/window.c,
# 2 ranks), plain against preloaded with CLAMPI_MATCH=lla+hot on the MPI carrier, counted
# on the receiving rank with callgrind at N1 and N2 windows: (Ir(N2) - Ir(N1)) / (64 (N2 -
# N1)) for the program and, inclusive, for MPI_Irecv / MPI_Waitall (the preload's entry
# points), MPI's own PMPI_Irecv / PMPI_Waitall under them, and the tracking of MPI's
# receives (clampi_carrier_track / clampi_carrier_untrack). The program total includes the
# polling of whichever rank waits, so it moves with timing; the call counts do not.
#   bench/match/window_instructions.sh BUILD_DIR [OUT.txt]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); out=${2:-}
n1=${N1:-1000}; n2=${N2:-3000}; w=64
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then mpi=openmpi; envf=-x; rankvar=OMPI_COMM_WORLD_RANK
else mpi=mpich; envf=-genv; rankvar=PMI_RANK; fi
prog=$build/bench/match/match_window; pre=$build/src/libclampi_pmpi.so
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run() { # $1 iters, $2 tag, rest launcher env
  local n=$1 tag=$2; shift 2
  timeout 900 "$mpiexec" -n 2 "$@" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$tag.%q{$rankvar}" \
    "$prog" "$n" $w >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
}
fn() { # $1 file, $2 function regex: inclusive Ir of the first matching line (0 if none)
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null | grep -E "$2" | head -1 | awk '{gsub(",", "", $1); print $1+0}'
}
tot() { grep -E '^(summary|totals):' "$1" | head -1 | awk '{print $2}'; }
if [ $mpi = openmpi ]; then cenv=(-x LD_PRELOAD=$pre -x CLAMPI_MATCH=lla+hot -x CLAMPI_MATCH_CARRIER=mpi)
else cenv=(-genv LD_PRELOAD $pre -genv CLAMPI_MATCH lla+hot -genv CLAMPI_MATCH_CARRIER mpi); fi
run $n1 p1; run $n2 p2; run $n1 c1 "${cenv[@]}"; run $n2 c2 "${cenv[@]}"
per() { echo "scale=1; ($1 - $2) / ($w * ($n2 - $n1))" | bc; }
{
  echo "# $(date -u +%FT%TZ) commit $(git -C "$(dirname "$0")" rev-parse --short HEAD) $mpi N1=$n1 N2=$n2 windows of $w, receiving rank"
  echo "plain program total per message: $(per "$(tot $tmp/cg.p2.1)" "$(tot $tmp/cg.p1.1)")"
  echo "preload program total per message: $(per "$(tot $tmp/cg.c2.1)" "$(tot $tmp/cg.c1.1)")"
  # the preload's entry points: callgrind names them "file:MPI_X [object]" or, where the
  # code came inlined from another file, "file:MPI_X" (both inclusive of the same calls)
  for f in ':MPI_Irecv( |$)' ':PMPI_Irecv ' ':MPI_Waitall( |$)' ':PMPI_Waitall ' ':clampi_carrier_track ' \
    ':clampi_carrier_untrack '; do
    name=$(sed 's/^://; s/[ (].*//' <<<"$f")
    [ "${name#MPI_}" != "$name" ] && name="$name (preload's)"
    echo "preload $name inclusive per message: $(per "$(fn $tmp/cg.c2.1 "$f")" "$(fn $tmp/cg.c1.1 "$f")")"
  done
  for f in ':PMPI_Irecv ' ':PMPI_Waitall '; do
    echo "plain $(sed 's/^://; s/ .*//' <<<"$f") inclusive per message: $(per "$(fn $tmp/cg.p2.1 "$f")" "$(fn $tmp/cg.p1.1 "$f")")"
  done
} | tee ${out:+"$out"}
