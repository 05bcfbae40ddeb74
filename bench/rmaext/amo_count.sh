#!/usr/bin/env bash
# bench/rmaext/amo_count.sh [OUT]: instructions per fetch-and-op and compare-and-swap
# (callgrind on rank 0, --toggle-collect on the call), plain MPI windows
# (Open MPI osc/rdma and osc/ucx, MPICH ch4:ucx) against clampi UCX windows with and without
# mpi_assert_accumulate_intrinsic, over shared memory; plus the top self costs of clampi's
# intrinsic path. Needs build/openmpi and build/mpich (or OMPI_BUILD, MPICH_BUILD) with
# -DCLAMPI_BUILD_BENCH=ON.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/bench/rmaext/results/amo_instructions.txt}
n=${N:-100}
ob=${OMPI_BUILD:-$root/build/openmpi} mb=${MPICH_BUILD:-$root/build/mpich}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
count() { # label launcher... -- binary args
    local label=$1 f=$tmp/cg.$RANDOM; shift
    local -a launch=()
    while [ "$1" != -- ]; do launch+=("$1"); shift; done
    shift
    local -a toggles=(--toggle-collect='*Fetch_and_op' --toggle-collect='*Compare_and_swap')
    [ -n "${TOGGLE:-}" ] && toggles=(--toggle-collect="$TOGGLE")
    timeout 900 "${launch[@]}" -n 1 valgrind -q --tool=callgrind --callgrind-out-file="$f" \
        "${toggles[@]}" "$@" : -n 1 "$@" >"$f.out" 2>&1
    local ir; ir=$(awk '/^summary:/{print $2}' "$f")
    local wrong; wrong=$(grep -c "wrong result" "$f.out")
    echo "$label instructions_per_op=$(( ${ir:-0} / n ))$([ "$wrong" != 0 ] && echo ' WRONG-RESULT')$([ -z "$ir" ] && echo ' FAILED')"
    cp "$f" "$tmp/last"
}
top() { # callgrind file: the 15 largest self costs per op
    python3 - "$1" "$n" <<'PY'
import re, sys
names, cur, cost, incall = {}, None, {}, False
for line in open(sys.argv[1], errors="replace"):
    if line.startswith(("fn=", "cfn=")):
        m = re.match(r"c?fn=\((\d+)\)(?:\s+(.*))?", line)
        if m and m.group(2): names[m.group(1)] = m.group(2).strip()
        if line.startswith("fn="): cur = names.get(m.group(1))
        continue
    if line.startswith("calls="): incall = True; continue
    if cur and re.match(r"^[+\-*]?\d", line):
        parts = line.split()
        if len(parts) >= 2:
            if incall: incall = False; continue
            cost[cur] = cost.get(cur, 0) + int(parts[1])
for k, v in sorted(cost.items(), key=lambda kv: -kv[1])[:15]:
    print(f"#   {v // int(sys.argv[2]):5d} {k}")
PY
}
{
    echo "# bench/rmaext/amo_count.sh: instructions per atomic, then per flush, $n ops after one warm-up, rank 0 -> rank 1, shared memory"
    echo "# $(date -u +%F); Open MPI $(ompi_info --version 2>/dev/null | head -1 | awk '{print $NF}'), MPICH $(mpichversion 2>/dev/null | awk '/Version/{print $NF}'), UCX $(pkg-config --modversion ucx 2>/dev/null)"
    for op in fop cas; do
        # Open MPI 4.1.4's osc/rdma crashes in MPI_Compare_and_swap (see run.sh): fop only.
        [ $op = fop ] && count "openmpi-osc-rdma $op" mpirun.openmpi --oversubscribe -- "$ob/bench/rmaext/amo_count" mpi $op $n
        count "openmpi-osc-ucx $op" mpirun.openmpi --oversubscribe --mca osc ucx -- "$ob/bench/rmaext/amo_count" mpi $op $n
        count "mpich $op" mpiexec.mpich -- "$mb/bench/rmaext/amo_count" mpi $op $n
        count "clampi-ucx-lock-based $op" mpirun.openmpi --oversubscribe -- "$ob/bench/rmaext/amo_count" ucx $op $n
        count "clampi-ucx-intrinsic $op" mpirun.openmpi --oversubscribe -- "$ob/bench/rmaext/amo_count" intrinsic $op $n
    done
    echo "# the flush after each op (MPI_Win_flush / CMPI_Win_flush), instructions per flush"
    TOGGLE='*Win_flush' count "openmpi-osc-rdma fop flush" mpirun.openmpi --oversubscribe -- "$ob/bench/rmaext/amo_count" mpi fop $n
    TOGGLE='*Win_flush' count "mpich fop flush" mpiexec.mpich -- "$mb/bench/rmaext/amo_count" mpi fop $n
    TOGGLE='*Win_flush' count "clampi-ucx-intrinsic fop flush" mpirun.openmpi --oversubscribe -- "$ob/bench/rmaext/amo_count" intrinsic fop $n
    echo "# self instructions per flush of the last run (clampi intrinsic), top 15"
    top "$tmp/last"
    TOGGLE= count "clampi-ucx-intrinsic cas" mpirun.openmpi --oversubscribe -- "$ob/bench/rmaext/amo_count" intrinsic cas $n >/dev/null
    echo "# self instructions per op of the last run (clampi intrinsic cas), top 15"
    top "$tmp/last"
} | tee "$out"
rm -rf "$tmp"
