#!/usr/bin/env bash
# A target that waits inside MPI progresses clampi's UCX workers itself
# (CLAMPI_PROGRESS_FROM_MPI, src/services/ucx/service.h) instead of waking the progress
# thread for every emulated put. Over TCP (UCX_TLS=tcp,self), 2 ranks bound to cores, ROUNDS alternating
# rounds in one run (medians); each line: the MPI's own window, clampi with the option on
# (the default) and off (the progress thread alone), and on/off's speed-up:
#  - stream:  bench/order_stream put_flush, 2,000 x 8 B, MPI_Win_allocate (preloaded, window
#             info clampi_backend=ucx); target in MPI_Barrier; us per put+flush
#  - burst:   the same, 50 x 4 KiB, MPI_Win_create over malloc memory
#  - handle:  bench/rmaext/mh_user_memory malloc_small (a memory handle to a 16 KiB heap
#             block, reached through UCX), put + flush of 8 B, best of 3 trials of 1,000, against
#             the MPI's dynamic window
#  - compute: bench/service_flush_latency: the target computes outside MPI (the thread's
#             case: both must be alike; Open MPI's own transports stay the default, its
#             osc/pt2pt refuses the program's MPI_THREAD_MULTIPLE)
#  - pingpong: bench/service_pingpong_beside_window over shared memory: an MPI 1 B
#             ping-pong while a UCX window lives (what the pass costs MPI's progress engine)
#  - nodes:   the stream across two emulated nodes, if `scripts/cluster.sh up 2` was run
# Usage: driven_by_mpi.sh BUILD [ROUNDS]; writes bench/results/service_driven_by_mpi-<mpi>.txt.
# Quiet machine: nothing else running.
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd) rounds=${2:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
flavor=openmpi; "$mpiexec" --version 2>&1 | grep -q -E "Open MPI|OpenRTE" || flavor=mpich
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lib=$build/src/libclampi_pmpi.so
# job TCP(0|1|2: clampi's UCX only) PRELOAD(0|1) FROM_MPI(true|false) ENV... -- PROGRAM ARGS
job() {
  local tcp=$1 pre=$2 from=$3; shift 3
  local args=()
  if [ $flavor = openmpi ]; then
    args+=(--bind-to core)
    [ "$tcp" = 1 ] && args+=(--mca btl tcp,self --mca osc pt2pt)
    [ "$tcp" != 0 ] && args+=(-x UCX_TLS=tcp,self)
    [ "$pre" = 1 ] && args+=(-x LD_PRELOAD="$lib")
    args+=(-x CLAMPI_PROGRESS_FROM_MPI="$from")
    while [ "$1" != -- ]; do args+=(-x "$1"); shift; done
  else
    args+=(-bind-to core)
    [ "$tcp" != 0 ] && args+=(-genv UCX_TLS tcp,self)
    [ "$pre" = 1 ] && args+=(-genv LD_PRELOAD "$lib")
    args+=(-genv CLAMPI_PROGRESS_FROM_MPI "$from")
    while [ "$1" != -- ]; do args+=(-genv "${1%%=*}" "${1#*=}"); shift; done
  fi
  shift
  # MPICH 4.0 over UCX's TCP now and then hangs in MPI_Finalize (plainly too): results
  # are printed before it
  timeout -k 5 120 "$mpiexec" -n 2 "${args[@]}" "$@" </dev/null 2>/dev/null || true
}
num() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" | head -1; }
stream() { # N SIZE WIN PRELOAD FROM
  job 1 "$4" "$5" ORDER_STREAM_WIN="$3" ORDER_STREAM_KEYS=clampi_backend=ucx -- "$build/bench/order_stream" \
    put_flush "$1" "$2" | num us_per_put
}
handle() { # FROM: "mpi_us clampi_us" of put 8 B
  job 1 0 "$1" -- "$build/bench/rmaext/mh_user_memory" malloc_small 1000 3 |
    awk '$2 == "put" && $3 == 8 {sub("mpi_dynamic_us=", "", $4); sub("memhandle_us=", "", $5); print $4, $5}'
}
nodes() { # PRELOAD FROM: the stream across two emulated nodes (scripts/cluster.sh up 2)
  local v=(CLAMPI_PROGRESS_FROM_MPI="$2")
  [ $flavor = openmpi ] && v+=(OMPI_MCA_osc=pt2pt)
  [ "$1" = 1 ] && v+=(LD_PRELOAD="$lib" ORDER_STREAM_KEYS=clampi_backend=ucx)
  timeout -k 5 120 bash "$root/scripts/cluster.sh" run $flavor 2 "${v[@]}" "$build/bench/order_stream" put_flush 2000 8 \
    2>/dev/null | num us_per_put || true
}
cluster=0
bash "$root/scripts/cluster.sh" status >/dev/null 2>&1 && cluster=1
out=$root/bench/results/service_driven_by_mpi-$flavor.txt
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for r in $(seq "$rounds"); do
  for from in true false; do
    echo "stream $from $(stream 2000 8 allocate 1 $from)"
    echo "burst $from $(stream 50 4096 create 1 $from)"
    h=($(handle $from))
    echo "handle $from ${h[1]:-nan}"
    echo "handle_mpi $from ${h[0]:-nan}"
    echo "compute $from $(job 2 0 $from -- "$build/bench/service_flush_latency" | num median)"
    echo "pingpong $from $(job 0 0 $from -- "$build/bench/service_pingpong_beside_window" | num us_per_round_trip)"
  done
  if [ $cluster = 1 ]; then
    for from in true false; do echo "nodes $from $(nodes 1 $from)"; done
    echo "nodes mpi $(nodes 0 true)"
  fi
  echo "stream mpi $(stream 2000 8 allocate 0 true)"
  echo "burst mpi $(stream 50 4096 create 0 true)"
done >"$raw"
{
  echo "# bench/service/driven_by_mpi.sh, $(date -u +%F), $(uname -n), $flavor, commit $(git -C "$root" log -1 --format=%h), 2 ranks"
  echo "# medians (and minima) of $rounds alternating rounds, microseconds; on = CLAMPI_PROGRESS_FROM_MPI=true (default),"
  echo "# off = false; mpi = the MPI's own window (handle: its dynamic window)"
  echo "# stream/burst/handle/compute over TCP (UCX_TLS=tcp,self), pingpong over shared memory, nodes between"
  echo "# two emulated nodes (scripts/cluster.sh, TCP)"
  python3 - "$raw" <<'PY'
import collections, statistics, sys
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3:
        try: v[(f[0], f[1])].append(float(f[2]))
        except ValueError: pass
med = lambda k: statistics.median(v[k]) if v[k] else float("nan")
low = lambda k: min(v[k]) if v[k] else float("nan")
print("%-9s %9s %9s %9s %8s %9s %9s" % ("workload", "mpi", "on", "off", "off/on", "on_min", "off_min"))
for w in ("stream", "burst", "handle", "compute", "pingpong", "nodes"):
    if not v[(w, "true")]:
        continue
    m = med(("handle_mpi", "true")) if w == "handle" else med((w, "mpi"))
    on, off = med((w, "true")), med((w, "false"))
    print("%-9s %9.2f %9.2f %9.2f %8.2f %9.2f %9.2f" % (w, m, on, off, off / on, low((w, "true")), low((w, "false"))))
PY
} | tee "$out"
