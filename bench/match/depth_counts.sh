#!/usr/bin/env bash
# The depth benchmark counted, not timed: a plain MPI program (match_pingpong, one rank
# sending 1 B to itself: MPI_Irecv + MPI_Send + MPI_Wait) with DEPTH MPI_ANY_SOURCE receives
# posted ahead that never match, so every message is compared against DEPTH receives
# before its own. Plain MPI against the preload on each carrier (lla: CLAMPI_MATCH_CARRIER=ucx,
# UCX active messages; lla/mpi: CLAMPI_MATCH_CARRIER=mpi), under cachegrind with its cache
# simulation at N1 and N2 messages: (count(N2) - count(N1)) / (N2 - N1) per message, for
# instructions, first-level data-cache misses and last-level misses. One rank: no peer's
# polling in the counts, and no VM speed mode in them either (the timed figures of
# depth_preload.sh move with both). The linked list of arrays without hot caching: hot
# caching reads the queues every CLAMPI_MATCH_HOT_PERIOD microseconds of wall-clock time,
# which under cachegrind's slowdown is every message (a side "S" may still name lla+hot).
#   bench/match/depth_counts.sh BUILD_DIR [OUT.txt]     Env: DEPTH (1024), N1 (200), N2 (600), SIDES
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); out=${2:-}
depth=${DEPTH:-1024}; n1=${N1:-200}; n2=${N2:-600}; sides=${SIDES:-plain lla lla/mpi}
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then mpi=openmpi; envf=-x; else mpi=mpich; envf=-genv; fi
prog=$build/bench/match/match_pingpong; pre=$build/src/libclampi_pmpi.so
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
counts() { # $1 iters, $2 side: prints "Ir D1misses LLmisses" of the whole run
  local n=$1 side=$2 env=()
  if [ "$side" != plain ]; then
    local m=${side%/mpi}
    if [ $mpi = openmpi ]; then env=(-x LD_PRELOAD=$pre -x CLAMPI_MATCH=$m); else env=(-genv LD_PRELOAD $pre -genv CLAMPI_MATCH $m); fi
    local c=ucx; [ "$side" != "$m" ] && c=mpi
    if [ $mpi = openmpi ]; then env+=(-x CLAMPI_MATCH_CARRIER=$c); else env+=(-genv CLAMPI_MATCH_CARRIER $c); fi
  fi
  timeout 900 "$mpiexec" -n 1 "${env[@]}" valgrind --tool=cachegrind --cache-sim=yes \
    --cachegrind-out-file="$tmp/cg" "$prog" "$n" "$depth" 100 0 >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  # events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
  awk '/^events:/ {for (i = 2; i <= NF; i++) ev[i - 1] = $i}
       /^summary:/ {for (i = 2; i <= NF; i++) v[ev[i - 1]] = $i
                    printf "%s %s %s\n", v["Ir"], v["D1mr"] + v["D1mw"], v["DLmr"] + v["DLmw"]}' "$tmp/cg"
}
declare -A per
for side in $sides; do
  read -r i1 d1 l1 <<<"$(counts "$n1" "$side")"
  read -r i2 d2 l2 <<<"$(counts "$n2" "$side")"
  per[$side]="$(( (i2 - i1) / (n2 - n1) )) $(( (d2 - d1) / (n2 - n1) )) $(( (l2 - l1) / (n2 - n1) ))"
done
{
  echo "# $(date -u +%FT%TZ) commit $(git -C "$(dirname "$0")" rev-parse --short HEAD) $mpi depth=$depth N1=$n1 N2=$n2"
  echo "# per 1 B message to self behind $depth MPI_ANY_SOURCE receives; cachegrind --cache-sim=yes (its default caches)"
  printf "%-12s %12s %12s %12s %10s %10s %10s\n" side instructions D1_misses LL_misses plain/Ir plain/D1 plain/LL
  read -r pi pd pl <<<"${per[plain]:-0 0 0}"
  for side in $sides; do
    read -r i d l <<<"${per[$side]}"
    r() { [ "$2" -gt 0 ] && echo "scale=2; $1 / $2" | bc || echo n/a; }
    printf "%-12s %12d %12d %12d %10s %10s %10s\n" "$side" "$i" "$d" "$l" "$(r "$pi" "$i")" "$(r "$pd" "$d")" "$(r "$pl" "$l")"
  done
} | tee ${out:+"$out"}
