#!/usr/bin/env bash
# End to end (the hybrid-MPI locality paper's finding, the locality demo): clampi-locality run --exact + report on
# advect1d. The baseline (serial resize) must show low locality and first-touch correctness
# for the solver array u; the fixed build must show both near 100 %.
#   advect1d_e2e.sh CLAMPI_LOCALITY MPIEXEC BASELINE_EXE FIXED_EXE [mpiexec flags...]
set -euo pipefail
tool=$1 mpiexec=$2 baseline=$3 fixed=$4
shift 4
out=$(mktemp -d /tmp/clampi-advect1d-e2e.XXXXXX)
trap 'rm -rf "$out"' EXIT
export OMP_NUM_THREADS=4 OMP_WAIT_POLICY=passive
args=(--nx 64 --ny 32 --nz 32 --t-end 0.5)   # 8 z planes (33 pages) per thread
for exe in "$baseline" "$fixed"; do
  name=$(basename "$exe")
  "$mpiexec" -n 1 "$@" "$tool" run --exact -o "$out/$name" -- "$exe" "${args[@]}"
  "$tool" report "$out/$name" --quiet
done
python3 - "$out/$(basename "$baseline")/report/report.json" "$out/$(basename "$fixed")/report/report.json" <<'PY'
import json, sys
def u(path):
    rep = json.load(open(path))
    s = next(s for s in rep["structures"] if s["name"] == "u")
    return s["locality_pct"], s["first_touch_correctness_pct"], s["first_touch_location"]
bl, bf, bloc = u(sys.argv[1])
fl, ff, floc = u(sys.argv[2])
print(f"u: baseline locality {bl:.1f} %, first-touch correctness {bf:.1f} % (first touch at {bloc}); "
      f"fixed {fl:.1f} %, {ff:.1f} % (at {floc})")
ok = bl < 50 and bf < 50 and fl > 80 and ff > 85 and bloc.startswith("advect1d.cpp:")
print("OK" if ok else "FAILED: expected baseline < 50 % / < 50 %, fixed > 80 % / > 85 %")
sys.exit(0 if ok else 1)
PY
