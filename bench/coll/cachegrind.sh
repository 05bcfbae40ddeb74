#!/usr/bin/env bash
# bench/coll/cachegrind.sh [BUILD_DIR] [P]: last-level and D1 cache misses per byte of the
# naive shared-heap Alltoall against the Morton one, counted by valgrind's cachegrind
# (deterministic: a simulated cache, no timing). Each rank runs under cachegrind with a
# fixed cache (D1 32 KiB 8-way, LL 2 MiB 16-way, 64 B lines). The buffer sets rotate
# over >= 4x the LL size, and the misses of one whole extra pass over all sets are
# isolated by running K and 2K iterations and subtracting (setup cancels out).
# Writes results/cachegrind.json and prints a table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build/openmpi}
P=${2:-4}
out=$here/results
mkdir -p "$out"
bin=$build/bench/coll/coll_bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launcher="mpirun.openmpi --oversubscribe"
grep -q mpich "$build/CMakeCache.txt" && launcher="mpiexec.mpich"
LL=2097152
cg_opts="--tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=$LL,16,64"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# sum D1 and LL data misses over all ranks' cachegrind files
misses() {  # misses DIR -> "d1 ll"
  python3 - "$1" <<'PY'
import sys, glob
d1 = ll = 0
for f in glob.glob(sys.argv[1] + "/cg.*"):
    ev = summ = None
    for line in open(f):
        if line.startswith("events:"): ev = line.split()[1:]
        if line.startswith("summary:"): summ = [int(x) for x in line.split()[1:]]
    v = dict(zip(ev, summ))
    d1 += v.get("D1mr", 0) + v.get("D1mw", 0)
    ll += v.get("DLmr", 0) + v.get("DLmw", 0)
print(d1, ll)
PY
}

echo "{\"P\": $P, \"LL_bytes\": $LL, \"results\": [" > "$out/cachegrind.json"
first=1
printf "%-8s %8s %6s %14s %14s %12s %12s\n" algo bytes sets "D1miss/byte" "LLmiss/byte" "D1 misses" "LL misses"
for B in 8 64 512 4096 32768; do
  for algo in naive morton; do
    foot=$(( 2 * P * P * (B > 64 ? B : 64) + 4 * P * 64 ))   # one set over the node, headers included
    K=$(( 4 * LL / foot )); [ $K -lt 8 ] && K=8; [ $K -gt 4096 ] && K=4096
    res=()
    for iters in $K $((2 * K)); do
      rm -f "$tmp"/cg.*
      $launcher -n "$P" valgrind $cg_opts --cachegrind-out-file="$tmp/cg.%p" \
        "$bin" --ops alltoall --variants "$algo" --min "$B" --max "$B" --iters "$iters" --warmup 0 --sets "$K" \
        >/dev/null 2>"$tmp/log" || { cat "$tmp/log"; exit 1; }
      res+=("$(misses "$tmp")")
    done
    read -r d1a lla <<<"${res[0]}"; read -r d1b llb <<<"${res[1]}"
    bytes=$(( K * P * P * B ))   # bytes copied in the extra pass (all ranks)
    d1pb=$(python3 -c "print(f'{($d1b-$d1a)/$bytes:.5f}')"); llpb=$(python3 -c "print(f'{($llb-$lla)/$bytes:.5f}')")
    printf "%-8s %8d %6d %14s %14s %12d %12d\n" "$algo" "$B" "$K" "$d1pb" "$llpb" $((d1b - d1a)) $((llb - lla))
    [ $first -eq 1 ] || echo "," >> "$out/cachegrind.json"; first=0
    printf '{"algo": "%s", "bytes": %d, "sets": %d, "d1_miss_per_byte": %s, "ll_miss_per_byte": %s, "d1_misses": %d, "ll_misses": %d}' \
      "$algo" "$B" "$K" "$d1pb" "$llpb" $((d1b - d1a)) $((llb - lla)) >> "$out/cachegrind.json"
  done
done
echo "]}" >> "$out/cachegrind.json"
