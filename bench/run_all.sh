#!/usr/bin/env bash
# Re-runs the figures of docs/performance.md, each with its baseline beside clampi in the same
# run, and regenerates docs/performance.md (tables and plots, naming the machine).
#   bench/run_all.sh BUILD_DIR [PART ...]
# PARTS (all but cluster by default):
#   get      the get cache against MPI's get, shared memory and TCP   (get_bench)
#   preload  the preload against plain MPI: cost per get, hits        (pmpi_bench)
#   coll     Morton-order collectives against MPI's, 2 ranks          (coll_bench)
#   apps     LCC and Barnes-Hut over TCP (4 ranks; MPICH 2), cached vs uncached
#   miss     a stream of get misses over TCP, plain vs the preload    (run_miss_stream.sh;
#            MISS_BEFORE=BUILD_DIR adds an older tree's preload to the same rounds)
#   order    a long stream and a short burst of ordered puts over TCP (run_order_stream.sh)
#   service  put + flush to a target waiting inside MPI, CLAMPI_PROGRESS_FROM_MPI on and off
#            (service/driven_by_mpi.sh)
#   match    CLAMPI_MATCH ping-pong at depth 0 and 1,024 (Debian MPIs only: match/depth_preload.sh)
#   cluster  the emulated nodes (root; bench/cluster/figures.sh)
# Results are regenerated in place, named by what they measure:
#   bench/results/performance/<mpi>/   get_bench-*, pmpi_bench-*, coll-*_p2, lcc-*, bh-*, machine.txt
#     and depth_preload-<mpi>-depth{0,1024}.*; bench/results/get_miss_stream-<mpi>.txt (part
#     miss); bench/results/order_stream_tcp-<mpi>.txt (part order);
#     bench/results/service_driven_by_mpi-<mpi>.txt (part service); bench/cluster/results/* (part cluster)
# QUICK=1: fewer trials (a smoke run: the figures it writes are not for the docs).
# Run it on a quiet machine: nothing else running. Then commit the results and the doc.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: bench/run_all.sh BUILD_DIR [PART ...]}" && pwd)
shift
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(get preload coll apps match miss order service)
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
flavor=openmpi; "$mpiexec" --version 2>&1 | grep -q -E "Open MPI|OpenRTE" || flavor=mpich
out=$root/bench/results/performance/$flavor
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
{
  echo "commit: $(git -C "$root" rev-parse --short HEAD)"
  echo "date: $(date -u +%FT%TZ)"
  echo "mpi: $("$mpiexec" --version 2>&1 | sed -n 's/^ *Version: *\(.*\)/MPICH (Hydra) \1/p; s/^.*(Open\(RTE\|MPI\)) \(.*\)/Open MPI \2/p' | head -1)"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  echo "cores: $(nproc)"
  echo "kernel: $(uname -r)"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "parts: ${parts[*]}"
  echo "quick: ${QUICK:-0}"
} >"$out/machine.txt"
fig_parts=()
for p in "${parts[@]}"; do
  case $p in
    get | preload | coll | apps) fig_parts+=("$p") ;;
    match)
      case $(basename "$mpiexec") in mpiexec.mpich | mpiexec.openmpi | mpirun.openmpi) debian=1 ;; *) debian=0 ;; esac
      if [ $debian = 0 ]; then
        echo "== match: skipped (bench/match/depth_preload.sh drives Debian's Open MPI and MPICH only)"
        continue
      fi
      args=(- -); [ $flavor = openmpi ] && args[0]=$build || args[1]=$build
      trials=5; iters=20000; [ "${QUICK:-0}" = 1 ] && trials=1 iters=2000
      for d in 0 1024; do
        echo "== match: CLAMPI_MATCH ping-pong at depth $d ($(date -u +%T))"
        OUT_DIR=$out DEPTH=$d TRIALS=$trials ITERS=$iters KINDS="lla+hot/ucx lla+hot/mpi" OUT_SUFFIX=-depth$d \
          "$root/bench/match/depth_preload.sh" "${args[@]}"
      done
      ;;
    miss)
      echo "== miss: a stream of get misses over TCP ($(date -u +%T))"
      "$root/bench/run_miss_stream.sh" "$build" "${MISS_BEFORE:-}" "$([ "${QUICK:-0}" = 1 ] && echo 1 || echo 5)"
      ;;
    order)
      echo "== order: ordered puts over TCP ($(date -u +%T))"
      "$root/bench/run_order_stream.sh" "$build" "$([ "${QUICK:-0}" = 1 ] && echo 1 || echo 5)"
      ;;
    service)
      echo "== service: put + flush to a target waiting inside MPI ($(date -u +%T))"
      "$root/bench/service/driven_by_mpi.sh" "$build" "$([ "${QUICK:-0}" = 1 ] && echo 1 || echo 7)"
      ;;
    cluster)
      echo "== cluster: the emulated nodes ($(date -u +%T))"
      "$root/bench/cluster/figures.sh" $flavor
      ;;
    *) echo "bench/run_all.sh: unknown part $p (get preload coll apps match miss order service cluster)" >&2; exit 2 ;;
  esac
done
if [ ${#fig_parts[@]} -gt 0 ]; then
  app_np=4; [ $flavor = mpich ] && app_np=2 # MPICH: passive-target RMA at 2 ranks (docs/platforms.md)
  rm -f "$out"/lcc-tcp-np*.* "$out"/bh-tcp-np*.*
  APP_NP=$app_np PARTS="${fig_parts[*]}" "$root/bench/existing_figures.sh" "$build" "$out"
fi
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3 # Debian's python3-matplotlib for the plots
$py "$root/bench/performance.py" "$root"
echo "bench/run_all.sh: wrote docs/performance.md (results under bench/results/performance/$flavor)"
