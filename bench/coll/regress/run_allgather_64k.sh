#!/bin/sh
# A regression test of the shared-heap collectives: MPI_Allgather of 64 KiB blocks at P = 2, plain against
# the preload (collectives on, and CLAMPI_COLL=false: pure pass-through), malloc buffers
# (clampi agrees with its peers, then delegates to MPI) and MPI_Alloc_mem buffers (clampi's
# shared-heap path). Alternating trials in one run; prints each trial, the medians and the
# ratios to plain.
#   bench/coll/regress/run_allgather_64k.sh BUILD_DIR [TRIALS] [ITERS]   (Open MPI build)
set -eu
build=$(cd "${1:?usage: run_allgather_64k.sh BUILD_DIR [TRIALS] [ITERS]}" && pwd)
trials=${2:-5}
iters=${3:-2000}
here=$(cd "$(dirname "$0")" && pwd)
lib=$build/src/libclampi_pmpi.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpicc.openmpi -O2 -o "$tmp/ag" "$here/allgather_64k.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "# MPI_Allgather 64 KiB, P = 2, Open MPI, $iters calls, $trials alternating trials, load $(cut -d' ' -f1-3 /proc/loadavg)"
for t in $(seq "$trials"); do
    for alloc in 0 1; do
        for mode in plain preload passthrough; do
            case $mode in
            plain) set -- ;;
            preload) set -- -x LD_PRELOAD="$lib" ;;
            passthrough) set -- -x LD_PRELOAD="$lib" -x CLAMPI_COLL=false ;;
            esac
            us=$(mpirun.openmpi -n 2 --bind-to core "$@" "$tmp/ag" 65536 "$iters" "$alloc" | sed -n 's/.*us\/call=//p')
            echo "alloc=$alloc $mode us/call=$us" | tee -a "$tmp/all"
        done
    done
done
python3 - "$tmp/all" <<'PY'
import statistics, sys
v = {}
for line in open(sys.argv[1]):
    a, m, u = line.split()
    v.setdefault((a, m), []).append(float(u.split("=")[1]))
for a in ("alloc=0", "alloc=1"):
    p = statistics.median(v[(a, "plain")])
    for m in ("plain", "preload", "passthrough"):
        x = statistics.median(v[(a, m)])
        print(f"median {a} {m:12s} {x:7.2f} us/call  {x / p:5.2f}x plain")
PY
