#!/usr/bin/env bash
# bench/cluster/manyrma2_parts.sh MPI MANYRMA2 MANYRMA2_PUT [ROUNDS]
# MPICH's test/mpi rma/manyrma2 (many small RMA operations between synchronizations, the
# graph500 pattern) across 2 emulated nodes (scripts/cluster.sh, TCP between them), one
# part at a time, plain MPI, the preload with CLAMPI_BACKEND=ucx, and that with
# CLAMPI_ACC_INTRINSIC=1 (accumulates as UCX atomics), in turn, ROUNDS (default 2) rounds.
#   MANYRMA2      the test as MPICH builds it: "-acc -SYNC" runs accumulates only
#   MANYRMA2_PUT  the same source with `rma_t rmaChoice = RMA_NONE;` (the test's default is
#                 RMA_ACC and "-put" adds to it, so the stock binary cannot run puts alone)
# The test is fetched outside the repository (MPICH's source); build both against MPI's
# mpicc with its mtest objects. Prints whole-job seconds per part and mode, and each
# mode's ratio to plain. Run on a quiet machine.
# Env: CLAMPI_LIB (default build/MPI/src/libclampi_pmpi.so); CLAMPI_LIB_BASE, another build
# of the library to run beside it as mode ucx_base (an A/B of a change); PARTS (default
# "put:fence put:lock put:pscw acc:fence acc:lock acc:pscw"); MAXCOUNT (default 1024), the
# test's -maxcount: operations per epoch go 1, 2, 4 .. MAXCOUNT, each 8 times, at 1 and 2
# elements. Keep it low enough that no epoch takes 5 s: the test stops doubling after such
# an epoch, so a slower library would do less work and its whole-job time would mislead.
set -euo pipefail
mpi=${1:?openmpi or mpich} acc=${2:?manyrma2 binary} put=${3:?manyrma2 binary built with RMA_NONE}
rounds=${4:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=${CLAMPI_LIB:-$root/build/$mpi/src/libclampi_pmpi.so}
cluster=$root/scripts/cluster.sh
was_up=0; "$cluster" status >/dev/null 2>&1 && was_up=1
"$cluster" up 2 >/dev/null
[ $was_up = 1 ] || trap '"$cluster" down >/dev/null' EXIT # nodes this script made go with it
common=()
[ "$mpi" = openmpi ] && common+=(OMPI_MCA_osc=pt2pt) # osc rdma makes no window over btl tcp
declare -A modes=(
  [plain]=""
  [ucx]="LD_PRELOAD=$lib CLAMPI_BACKEND=ucx"
  [ucx_acc_intrinsic]="LD_PRELOAD=$lib CLAMPI_BACKEND=ucx CLAMPI_ACC_INTRINSIC=1"
)
order=(plain ucx ucx_acc_intrinsic)
if [ -n "${CLAMPI_LIB_BASE:-}" ]; then
  modes[ucx_base]="LD_PRELOAD=$CLAMPI_LIB_BASE CLAMPI_BACKEND=ucx"
  order=(plain ucx_base ucx ucx_acc_intrinsic)
fi
printf '# manyrma2 parts across 2 emulated nodes, %s, %s, library %s, %s rounds, -maxcount %s\n' "$mpi" \
  "$(date -u +%FT%TZ)" "$(git -C "$root" describe --always --dirty)" "$rounds" "${MAXCOUNT:-1024}"
printf '%-12s %-18s %s\n' part mode "seconds per round"
for part in ${PARTS:-put:fence put:lock put:pscw acc:fence acc:lock acc:pscw}; do
  set -- ${part/:/ }
  bin=$acc; [ "$1" = put ] && bin=$put
  declare -A t=()
  for r in $(seq "$rounds"); do
    for m in "${order[@]}"; do
      s0=$(date +%s.%N)
      # shellcheck disable=SC2086
      out=$("$cluster" run "$mpi" 2 "${common[@]}" ${modes[$m]} "$bin" "-$1" "-$2" -maxcount "${MAXCOUNT:-1024}" 2>&1) ||
        { echo "manyrma2_parts.sh: $part $m failed:" >&2; echo "$out" | tail -5 >&2; exit 1; }
      grep -q "No Errors" <<<"$out" || { echo "manyrma2_parts.sh: $part $m: no \"No Errors\"" >&2; exit 1; }
      t[$m]+="$(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') "
    done
  done
  for m in "${order[@]}"; do
    ratio=$(awk -v a="${t[$m]}" -v b="${t[plain]}" 'BEGIN { n = split(a, x, " "); split(b, y, " ");
      s = 0; u = 0; for (i = 1; i <= n; i++) { s += x[i]; u += y[i] } printf "%.2f", s / u }')
    printf '%-12s %-18s %s (x%s of plain)\n' "$1 $2" "$m" "${t[$m]}" "$ratio"
  done
done
