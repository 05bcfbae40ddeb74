#!/usr/bin/env bash
# bench/cluster/figures.sh [openmpi] [mpich]
# Timed figures across emulated nodes (scripts/cluster.sh: separate hostnames, network
# namespaces and UCX system ids, TCP between nodes), baseline and clampi alternating in one
# run, for each MPI given (default both; builds in build/openmpi, build/mpich):
#   coll   2 nodes x 2 ranks: MPI_Alltoall/MPI_Allgather of the MPI against clampi's
#          hierarchical path and the floor of any hierarchical method ("flags": flags on
#          the node, the leaders' MPI exchange of the bytes that cross; coll_bench --b2b,
#          alternating trials), 8 B .. 64 KiB
#   get    2 nodes x 1 rank: MPI_Get+flush against CMPI_Get+flush, hit/miss/skewed/subrange
#          (get_bench, alternating trials)
#   match  2 nodes x 1 rank: 1-byte ping-pong at depth 0 and 1,024 (match_pingpong), plain
#          against the preload with CLAMPI_MATCH=lla+hot, alternating rounds
#   apps   2 nodes x 2 ranks: LCC and Barnes-Hut (apps/), uncached against the get cache
# This machine has 2 cores: the 4 ranks of a 2 x 2 job share them (oversubscribed), so
# only the ratios mean something. Writes bench/cluster/results/{coll_2x2,get_2x1,
# match_pingpong_2x1,lcc_2x2,bh_2x2}-MPI.json and the PNGs beside them (plot.py). Run on a quiet machine.
# Env: TRIALS (coll 15, get 9, match 5 rounds), PARTS ("coll get match apps").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster=$root/scripts/cluster.sh
res=$here/results
mkdir -p "$res"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for mpi in ${*:-openmpi mpich}; do
  build=$root/build/$mpi
  [ -x "$build/bench/coll/coll_bench" ] || { echo "skip $mpi: $build not built (scripts/build.sh)"; continue; }
  env=()
  rma=()
  # Open MPI 4.1 between nodes: TCP and its shared memory within a node; a waiting rank
  # yields (4 ranks on 2 cores spin the scheduler's tick away otherwise); osc pt2pt is its
  # one-sided component over TCP (for the gets only: the collectives' shared windows need
  # osc sm).
  [ "$mpi" = openmpi ] && env=(OMPI_MCA_btl=tcp,self,vader OMPI_MCA_mpi_yield_when_idle=1) rma=(OMPI_MCA_osc=pt2pt)
  "$cluster" up 2 >/dev/null
  parts=" ${PARTS:-coll get match apps} "
  [[ $parts == *" coll "* ]] && {
  echo "=== $mpi coll 2 nodes x 2 ranks ==="
  timeout 1200 "$cluster" run "$mpi" 4 "${env[@]}" "$build/bench/coll/coll_bench" --b2b 16 \
    --variants mpi,clampi,flags --trials "${TRIALS:-15}" --min 8 --max 64K --factor 2 --json "$res/coll_2x2-$mpi.json" \
    --label "$mpi, 2 emulated nodes x 2 ranks, TCP between nodes, 2 cores" | tee "$res/coll_2x2-$mpi.txt" ||
    echo "($mpi coll: failed)"
  }
  [[ $parts == *" get "* ]] && {
  echo "=== $mpi get 2 nodes x 1 rank ==="
  timeout 1200 "$cluster" run "$mpi" 2 "${env[@]}" "${rma[@]}" "$build/bench/get_bench" --trials "${TRIALS:-9}" --ops 300 \
    --json "$res/get_2x1-$mpi.json" --label "$mpi, 2 emulated nodes x 1 rank" | tee "$res/get_2x1-$mpi.txt" ||
    echo "($mpi get: failed)"
  }
  [[ $parts == *" apps "* ]] && {
  # LCC and Barnes-Hut (apps/): uncached against the get cache, alternating trials inside
  for app in "lcc --scale 11 --edgefactor 16 --config fixed:16384:8M" \
             "bh --bodies-per-rank 256 --steps 2 --theta 0.5 --config fixed:4096:1M"; do
    read -r -a argv <<<"$app"
    echo "=== $mpi ${argv[0]} 2 nodes x 2 ranks ==="
    timeout 1200 "$cluster" run "$mpi" 4 "${env[@]}" "${rma[@]}" "$build/apps/${argv[0]}" "${argv[@]:1}" \
      --config uncached --trials 3 --json "$res/${argv[0]}_2x2-$mpi.json" | grep -v '^# trial' |
      tee "$res/${argv[0]}_2x2-$mpi.txt" || echo "($mpi ${argv[0]}: failed)"
  done
  }
  [[ $parts == *" match "* ]] && {
  echo "=== $mpi match ping-pong 2 nodes x 1 rank ==="
  lib=$build/src/libclampi_pmpi.so prog=$build/bench/match/match_pingpong
  # MPICH 4.0.2 may hang in MPI_Finalize over TCP (docs/testing.md): the line is printed before.
  pingpong() { timeout 60 "$cluster" run "$mpi" 2 "${env[@]}" "$@" "$prog" 5000 "$depth" 500 0 2>/dev/null |
    sed -n 's/.*us_per_roundtrip=//p' || true; }
  # clampi: the default settings; clampi_progress: hot caching at progress instead of auto's
  # thread (each emulated node sees both cores, so auto starts a thread per rank that takes
  # the core the other node's rank is using)
  for depth in 0 1024; do
    plain=() pre=() atp=()
    for _ in $(seq "${TRIALS:-5}"); do
      plain+=("$(pingpong)")
      pre+=("$(pingpong LD_PRELOAD="$lib" CLAMPI_MATCH=lla+hot)")
      atp+=("$(pingpong LD_PRELOAD="$lib" CLAMPI_MATCH=lla+hot CLAMPI_MATCH_HOT_BY=progress)")
    done
    p=$(printf '%s\n' "${plain[@]}" | grep . | median) c=$(printf '%s\n' "${pre[@]}" | grep . | median)
    g=$(printf '%s\n' "${atp[@]}" | grep . | median)
    r=$(awk -v p="$p" -v c="$c" 'BEGIN {printf "%.2f", c / p}') rg=$(awk -v p="$p" -v c="$g" 'BEGIN {printf "%.2f", c / p}')
    echo "depth=$depth plain_us=$p clampi_us=$c clampi/plain=$r plain_rounds=$(IFS=,; echo "${plain[*]}") clampi_rounds=$(IFS=,; echo "${pre[*]}") clampi_progress_us=$g clampi_progress/plain=$rg clampi_progress_rounds=$(IFS=,; echo "${atp[*]}")"
  done | tee "$res/match_pingpong_2x1-$mpi.txt"
  python3 - "$res/match_pingpong_2x1-$mpi.txt" "$res/match_pingpong_2x1-$mpi.json" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
    rows.append({"depth": int(kv["depth"]), "plain_us": float(kv["plain_us"]), "clampi_us": float(kv["clampi_us"]),
                 "plain_rounds": [float(x) for x in kv["plain_rounds"].split(",") if x],
                 "clampi_rounds": [float(x) for x in kv["clampi_rounds"].split(",") if x],
                 "clampi_progress_us": float(kv["clampi_progress_us"]),
                 "clampi_progress_rounds": [float(x) for x in kv["clampi_progress_rounds"].split(",") if x]})
json.dump(rows, open(sys.argv[2], "w"), indent=1)
PY
  }
done
"$cluster" down >/dev/null
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # Debian python3-matplotlib
"$py" "$here/plot.py" "$res" || echo "(plots skipped: $here/plot.py failed)"
