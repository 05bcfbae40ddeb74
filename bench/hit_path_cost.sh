#!/usr/bin/env bash
# Instructions per CMPI_Get hit (8 bytes), counted by callgrind: only instructions
# executed inside CMPI_Get (inclusive of what it calls) during 10000 hits are collected.
# Usage: hit_path_cost.sh BINARY [BUDGET]   (exit 1 if over BUDGET)
set -euo pipefail
bin=${1:?binary}; budget=${2:-200}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect=CMPI_Get --callgrind-out-file="$out/cg.out" "$bin" >"$out/log" 2>&1 \
  || { cat "$out/log"; exit 1; }
total=$(grep -E '^(summary|totals):' "$out/cg.out" | head -1 | awk '{print $2}')
calls=$(grep -o 'calls=[0-9]*' "$out/log" | head -1 | cut -d= -f2)
per=$(( total / calls ))
echo "CMPI_Get 8-byte hit path: $per instructions per call ($total over $calls calls; budget $budget)"
[ "$per" -le "$budget" ]
