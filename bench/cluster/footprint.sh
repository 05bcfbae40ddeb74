#!/usr/bin/env bash
# bench/cluster/footprint.sh BUILD_DIR [openmpi|mpich]
# What one process holds as the job grows: resident memory, sockets and file descriptors per
# process (footprint.c), and the UCX carrier's endpoints per process (CLAMPI_STATS), at 4, 8
# and 16 ranks over 2, 4 and 8 emulated nodes (scripts/cluster.sh, two ranks per node), plainly
# and under the preload with each part used: the get cache (rma), the collectives (coll),
# CLAMPI_MATCH point-to-point on the UCX carrier (p2p), all of them. Counts, not times: valid on
# a busy machine. Writes bench/cluster/results/footprint-MPI.json (one object per run).
# FOOTPRINT_TIMEOUT (seconds, default 90) bounds each job: MPICH 4.0.2 may hang in
# MPI_Finalize between nodes, after the line is printed.
set -euo pipefail
build=$(cd "${1:?usage: footprint.sh BUILD_DIR [openmpi|mpich]}" && pwd)
mpi=${2:-openmpi}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster=$root/scripts/cluster.sh
prog=$build/bench/cluster/cluster_footprint
lib=$build/src/libclampi_pmpi.so
out=$here/results/footprint-$mpi.json
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
common=()
# Open MPI 4.1 between nodes (btl tcp): osc pt2pt is its one-sided component there.
[ "$mpi" = openmpi ] && common=(OMPI_MCA_osc=pt2pt)
echo "[" >"$out"
first=1
for layout in 4:2 8:4 16:8; do
  np=${layout%:*} nodes=${layout#*:}
  "$cluster" up "$nodes" >/dev/null
  for mode in plain preload preload_match; do
    for part in init rma coll p2p all; do
      vars=("${common[@]}")
      case $mode in
        preload) vars+=(LD_PRELOAD="$lib" CLAMPI_STATS=1) ;;
        preload_match) vars+=(LD_PRELOAD="$lib" CLAMPI_STATS=1 CLAMPI_MATCH=lla+hot CLAMPI_MATCH_CARRIER=ucx) ;;
      esac
      # MPICH 4.0.2 may hang in MPI_Finalize over TCP (docs/testing.md): the line is printed before.
      timeout "${FOOTPRINT_TIMEOUT:-90}" "$cluster" run "$mpi" "$np" "${vars[@]}" "$prog" "$part" >"$tmp" 2>&1 || true
      line=$( (grep '^footprint ' "$tmp" || true) | head -1)
      if [ -z "$line" ]; then echo "footprint: no result for $mpi $mode $part np=$np" >&2; cat "$tmp" >&2; continue; fi
      eps=$( (grep -o '^clampi: msg rank=[0-9]* endpoints=[0-9]*' "$tmp" || true) | sed 's/.*endpoints=//' | sort -n |
            awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)] " " a[NR]; else print "null null"}')
      json=$(echo "$line" | sed 's/^footprint //' | tr ' ' '\n' |
             awk -F= -v mpi="$mpi" -v mode="$mode" -v nodes="$nodes" -v eps="$eps" '
               BEGIN { split(eps, e, " "); printf "{\"mpi\": \"%s\", \"mode\": \"%s\", \"nodes\": %s", mpi, mode, nodes }
               $1 == "part" { printf ", \"part\": \"%s\"", $2; next }
               { printf ", \"%s\": %s", $1, $2 }
               END { printf ", \"endpoints_median\": %s, \"endpoints_max\": %s}", e[1], e[2] }')
      [ $first = 1 ] || echo "," >>"$out"
      first=0
      echo -n "  $json" >>"$out"
      echo "$mpi np=$np nodes=$nodes $mode $part: ${line#footprint } endpoints(median max)=$eps"
    done
  done
done
echo "" >>"$out"; echo "]" >>"$out"
"$cluster" down >/dev/null
echo "footprint: $out"
