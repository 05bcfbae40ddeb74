#!/usr/bin/env bash
# Start-up cost of the preload: wall time of a whole job (mpiexec, MPI_Init, MPI_Finalize)
# of a program that only starts and stops MPI (tests/pmpi/plain_startup), plain against
# preloaded, at several process counts, ROUNDS alternating rounds in one run; and the msync
# calls each process made in MPI_Init (the program counts them), which do not move with load.
#   bench/startup/startup.sh BUILD [LABEL=LIB ...]
# BUILD: build/openmpi or build/mpich (its libclampi_pmpi.so is "now"); extra LABEL=LIB
# pairs add other libraries (e.g. before=/tmp/old/libclampi_pmpi.so). ROUNDS (default 5),
# NPS (default "2 4 8"; above 2 the processes share the 2 cores of this machine, where each
# collective in MPI_Init waits for the scheduler). Prints, per process count and side, the
# median seconds, the ratio to plain and the largest msync count of a process.
set -euo pipefail
build=$1; shift
rounds=${ROUNDS:-5}
nps=${NPS:-"2 4 8"}
prog=$build/tests/pmpi/plain_startup
libs=("now=$build/src/libclampi_pmpi.so" "$@")
if grep -q openmpi <<<"$build"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launch() { mpirun.openmpi --oversubscribe -np "$1" ${2:+-x LD_PRELOAD="$2"} "$prog"; }
else
  launch() { mpiexec.mpich -n "$1" ${2:+-genv LD_PRELOAD "$2"} "$prog"; }
fi
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
echo "# $(date -u +%FT%TZ) commit $(git -C "$(dirname "$0")" log -1 --format=%h) build $build, $rounds rounds"
echo "# each line: np side round seconds max_msync_per_process"
for r in $(seq 1 "$rounds"); do
  for np in $nps; do
    for s in "plain=" "${libs[@]}"; do
      t0=$(date +%s.%N)
      out=$(timeout 300 bash -c "$(declare -f launch); prog=$prog; launch $np '${s#*=}'" 2>/dev/null)
      t1=$(date +%s.%N)
      m=$(sed -n 's/^startup rank=[0-9]* msync=\([0-9]*\)$/\1/p' <<<"$out" | sort -n | tail -1)
      echo "$np ${s%%=*} r$r $(echo "$t1 - $t0" | bc) ${m:-?}"
    done
  done
done >"$raw"
cat "$raw"
python3 - "$raw" <<'PY'
import sys, collections, statistics
t = collections.defaultdict(list)
m = {}
for line in open(sys.argv[1]):
    np, side, r, sec, ms = line.split()
    t[(int(np), side)].append(float(sec))
    m[(int(np), side)] = ms
print("# np side median_s ratio_to_plain max_msync")
for (np, side) in sorted(t, key=lambda k: (k[0], k[1] != "plain", k[1])):
    med = statistics.median(t[(np, side)])
    base = statistics.median(t[(np, "plain")])
    print(f"{np} {side} {med:.3f} {med / base:.2f} {m[(np, side)]}")
PY
