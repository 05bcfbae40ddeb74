#!/usr/bin/env bash
# The locality demo (the hybrid-MPI locality paper): builds clampi against Open MPI, installs it under the build
# directory, traces the three advect1d builds with `clampi-locality run --exact` (and
# `--sample` when the sampler is built), runs `clampi-locality report` on each and prints
# the comparison: the baseline's serial initialization gives low locality and first-touch
# correctness; parallel first touch and clampi::numa_allocator bring both near 100 %.
#
#   scripts/locality_demo.sh [--threads T] [--keep]     (default 4 OpenMP threads, 1 rank)
# Output: build/locality-demo/out/<mode>/<variant>/ (page tables, report/index.html).
set -euo pipefail
cd "$(dirname "$0")/.."
threads=4
while [ $# -gt 0 ]; do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    *) echo "usage: $0 [--threads T]" >&2; exit 2 ;;
  esac
done
scripts/deps.sh
build=build/locality-demo
scripts/build.sh openmpi "$build" -DCLAMPI_BUILD_TESTS=OFF -DCLAMPI_BUILD_BENCH=OFF -DCLAMPI_BUILD_APPS=ON
prefix=$PWD/$build/install
cmake --install "$build" --prefix "$prefix" >/dev/null
tool=$prefix/bin/clampi-locality
[ -x "$tool" ] || tool=$PWD/tools/locality/clampi-locality
if [ ! -x "$tool" ]; then
  echo "locality demo: clampi-locality is not built in this tree (tools/locality/clampi-locality)" >&2
  exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive
# small grid: exact mode runs every load and store through Valgrind. nz is a multiple of
# the thread count (each thread gets whole z planes); 80 steps, so that the solver's
# accesses outweigh the one-time initialization as in a real run.
args=(--nx 128 --ny 16 --nz $((threads * 8)) --t-end 0.5)
out=$PWD/$build/out
rm -rf "$out"

modes=(exact)
"$tool" run --sample -o "$out/probe" -- /bin/true >/dev/null 2>&1 && modes+=(sample)
rm -rf "$out/probe"

variants=()
for v in baseline first_touch numa_alloc; do
  [ -x "$build/apps/advect1d/advect1d_$v" ] && variants+=("$v")
done
echo "clampi-locality demo: advect1d ${args[*]} (exact; sample: default 192^3), 1 rank x $threads OpenMP threads; variants: ${variants[*]}; modes: ${modes[*]}"
for mode in "${modes[@]}"; do
  for v in "${variants[@]}"; do
    dir=$out/$mode/$v
    echo "== $mode: $v"
    # sample mode samples accesses over time: it needs a run of seconds, so it gets the
    # default grid (192^3); exact mode counts every access, the small grid is enough
    margs=("${args[@]}")
    [ "$mode" = sample ] && margs=()
    timeout 900 mpiexec.openmpi -n 1 "$tool" run --"$mode" -o "$dir" -- "$build/apps/advect1d/advect1d_$v" "${margs[@]}"
    "$tool" report "$dir" --quiet
  done
done

# one table: overall numbers per mode and build, then the structures
/usr/bin/env python3 - "$out" "${modes[@]}" -- "${variants[@]}" <<'EOF'
import json, os, sys
out = sys.argv[1]
sep = sys.argv.index("--")
modes, variants = sys.argv[2:sep], sys.argv[sep + 1:]
def pct(v): return "   n/a" if v is None else f"{v:5.1f}%"
print()
print("overall = every page the program touched (incl. libraries, stacks, MPI's buffers);")
print("allocations = pages of the program's allocations >= one page (u, uNew, sendBuf, recvBuf, MPI's own)")
print(f"{'mode':<7} {'build':<12} {'locality':>9} {'ft-correct':>11} {'alloc-loc':>10} {'alloc-ftc':>10} {'lambda':>8} {'pages':>7} {'accesses':>14}")
reps = {}
for m in modes:
    for v in variants:
        with open(os.path.join(out, m, v, "report", "report.json")) as f:
            r = reps[(m, v)] = json.load(f)
        o, a, lam = r["overall"], r["allocations"], r["load_imbalance"] or {}
        print(f"{m:<7} {v:<12} {pct(o['locality_pct']):>9} {pct(o['first_touch_correctness_pct']):>11} "
              f"{pct(a['locality_pct']):>10} {pct(a['first_touch_correctness_pct']):>10} "
              f"{pct(lam.get('lambda_pct')):>8} {o['pages']:>7} {o['accesses']:>14,}")
print()
for m in modes:
    print(f"per structure ({m} mode): locality / first-touch correctness (accesses)")
    names = ["u", "uNew", "sendBuf", "recvBuf"]
    print(f"  {'structure':<10}" + "".join(f" {v:>30}" for v in variants))
    for n in names:
        cells = []
        for v in variants:
            s = next((s for s in reps[(m, v)]["structures"] if s["name"] == n), None)
            cells.append("-" if s is None else f"{pct(s['locality_pct']).strip()} / "
                         f"{pct(s['first_touch_correctness_pct']).strip()} ({s['accesses']:,})")
        print(f"  {n:<10}" + "".join(f" {c:>30}" for c in cells))
print("(sendBuf/recvBuf: the ghost-cell buffers, a few pages shared by all threads' z planes and")
print(" hardly used with one rank; u and uNew are the solver's arrays)")
base = reps.get((modes[0], "baseline"))
if base and base["costliest"]:
    print()
    print("baseline, costliest structure:", base["costliest"][0])
print()
print(f"reports: {out}/<mode>/<build>/report/index.html")
EOF
