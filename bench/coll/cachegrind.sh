#!/usr/bin/env bash
# bench/coll/cachegrind.sh [BUILD_DIR] [P...]: last-level (and D1) cache misses per byte
# copied of the naive shared-heap Alltoall against the Morton one, counted by valgrind's
# cachegrind: a simulated cache, deterministic, no timing (the paper's 1.4x cannot be timed
# on a 2-core machine). Default P = 8 16 32 64, blocks 8 B .. 64 KiB.
#
# The simulated caches are those of one core of the paper's own machine, the Intel Xeon
# Phi 5110P (KNC, 60 cores), where the paper measured its 1.4x: D1 32 KiB 8-way and a
# private 512 KiB 8-way L2 per core, its last level; 64 B lines. (A current server's
# share is similar: Xeon Platinum 8380, 60 MiB L3 / 40 cores = 1.5 MiB per core, e.g.
# CG_LL=1572864,12,64 CG_D1=49152,12,64; it needs 3x more calls per measurement.)
# Valgrind simulates each process's caches separately: the per-core share model.
#
# Sampled ranks: 4 ranks (0, P/4, P/2, 3P/4) run under cachegrind, the others natively
# (64 processes under valgrind on 2 cores would take hours; every rank's Morton segment
# has the same shape, so the sample stands for all). The calls run back to back over K
# buffer sets, K chosen so that what one rank touches in a pass over them is at least 2x
# the LL (a cyclic pass then finds none of its lines cached: valgrind does not simulate
# coherence, so this is how the misses a real core takes on lines the other cores wrote
# are counted). The misses of one whole extra pass are isolated by running K and 2K calls
# and subtracting (setup cancels out); they are divided by the bytes the sampled ranks
# copy in that pass (K * 4 * P * B).
# Writes results/cachegrind.json and prints a table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build/openmpi}
shift || true
Ps=${*:-8 16 32 64}
out=$here/results
mkdir -p "$out"
bin=$build/bench/coll/coll_bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launcher="mpirun.openmpi --oversubscribe"
grep -q mpich "$build/CMakeCache.txt" && launcher="mpiexec.mpich"
LL=${CG_LL:-524288,8,64}
D1=${CG_D1:-32768,8,64}
LLbytes=${LL%%,*}
sizes=${CG_SIZES:-8 64 512 4096 16384 65536}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the per-rank wrapper: sampled ranks under cachegrind
cat > "$tmp/wrap.sh" <<EOF
#!/bin/sh
r=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}
case " \$CG_SAMPLE " in
  *" \$r "*) exec valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=$D1 --LL=$LL \
               --cachegrind-out-file="\$CG_DIR/cg.\$r" "\$@" ;;
  *) exec "\$@" ;;
esac
EOF
chmod +x "$tmp/wrap.sh"

misses() {  # misses DIR -> "d1 ll" summed over the sampled ranks' files
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

json=${CG_JSON:-$out/cachegrind.json}
echo "{\"LL\": \"$LL\", \"D1\": \"$D1\", \"sampled_ranks\": 4, \"results\": [" > "$json"
first=1
printf "%4s %-8s %8s %5s %14s %14s %12s %12s\n" P algo bytes sets "D1miss/byte" "LLmiss/byte" "D1 misses" "LL misses"
for P in $Ps; do
  sample="0 $((P / 4)) $((P / 2)) $((3 * P / 4))"
  for B in $sizes; do
    for algo in naive morton; do
      # sets: what one rank touches in one pass over them must exceed 2x LL (so no line
      # survives to the next pass): 2*P*B bytes per call, at least ~2*sqrt(P) lines
      touched=$(python3 -c "import math; print(max(2 * $P * $B, int(128 * math.sqrt($P))))")
      K=$(( (2 * LLbytes + touched - 1) / touched )); [ $K -lt 2 ] && K=2; [ $K -gt 16384 ] && K=16384
      res=()
      for trials in 1 2; do   # K and 2K calls, back to back
        rm -f "$tmp"/cg.*
        CG_SAMPLE="$sample" CG_DIR="$tmp" timeout 3600 $launcher -x CG_SAMPLE -x CG_DIR -n "$P" "$tmp/wrap.sh" \
          "$bin" --ops alltoall --variants "$algo" --min "$B" --max "$B" --b2b "$K" --trials $trials --warmup 0 \
          --sets "$K" >/dev/null 2>"$tmp/log" || { cat "$tmp/log"; exit 1; }
        res+=("$(misses "$tmp")")
      done
      read -r d1a lla <<<"${res[0]}"; read -r d1b llb <<<"${res[1]}"
      bytes=$(( K * 4 * P * B ))   # bytes the 4 sampled ranks copy in the extra pass
      d1pb=$(python3 -c "print(f'{($d1b-$d1a)/$bytes:.5f}')"); llpb=$(python3 -c "print(f'{($llb-$lla)/$bytes:.5f}')")
      printf "%4d %-8s %8d %5d %14s %14s %12d %12d\n" "$P" "$algo" "$B" "$K" "$d1pb" "$llpb" $((d1b - d1a)) $((llb - lla))
      [ $first -eq 1 ] || echo "," >> "$json"; first=0
      printf '{"P": %d, "algo": "%s", "bytes": %d, "sets": %d, "d1_miss_per_byte": %s, "ll_miss_per_byte": %s, "d1_misses": %d, "ll_misses": %d}' \
        "$P" "$algo" "$B" "$K" "$d1pb" "$llpb" $((d1b - d1a)) $((llb - lla)) >> "$json"
    done
  done
done
echo "]}" >> "$json"
