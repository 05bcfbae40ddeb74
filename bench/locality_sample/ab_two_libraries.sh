#!/bin/bash
# Two sampler libraries against each other and plain, on the OpenMP heap triad (2 threads):
# plain, BEFORE and AFTER alternate in one rotation, TRIALS times (5); prints each one's
# seconds per run, wall and CPU (user+sys). Run it on a quiet machine.
#   bench/locality_sample/ab_two_libraries.sh BUILD_DIR BEFORE_LIB AFTER_LIB N SWEEPS
set -eu
build=$(cd "${1:?usage: ab_two_libraries.sh BUILD_DIR BEFORE_LIB AFTER_LIB N SWEEPS}" && pwd)
before=$2 after=$3 n=$4 sweeps=$5
out=$(mktemp -d)
times=$out/times
trap 'rm -rf "$out"' EXIT
for _ in $(seq "${TRIALS:-5}"); do
  for cfg in plain before after; do
    case $cfg in plain) pre="" ;; before) pre=$before ;; after) pre=$after ;; esac
    rm -rf "$out/locality"
    /usr/bin/time -a -o "$times" -f "$cfg %e %U %S" env OMP_NUM_THREADS=2 ${pre:+LD_PRELOAD=$pre} \
      CLAMPI_LOCALITY_OUT="$out/locality" "$build/bench/triad_omp" "$n" "$sweeps" > /dev/null
  done
done
awk '{w[$1] = w[$1] " " $2; c[$1] = c[$1] " " ($3 + $4)} END {for (k in w) print k, "wall:" w[k], " cpu:" c[k]}' "$times" | sort
