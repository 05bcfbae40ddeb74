#!/usr/bin/env bash
# Intel's IMB-MPI1 point-to-point benchmarks (PingPong, PingPing, Sendrecv, Exchange: the
# last two are MPI_Sendrecv and MPI_Isend/MPI_Irecv + MPI_Waitall halo exchanges) on Intel
# MPI, plain against CLAMPI_MATCH=lla+hot on the preload's default carrier (MPI's), ROUNDS
# alternating rounds in one run, 2 ranks. Prints the time per size (us; Exchange and
# Sendrecv t_avg) and, per benchmark and size, the median over rounds of clampi's time /
# plain's (1 = plain's; above 1: slower).
#   I_MPI_ROOT=build/venv/impi bench/match/imb_p2p.sh BUILD [LABEL=LIB ...]
# BUILD: an Intel MPI build (scripts/build.sh impi BUILD); its libclampi_pmpi.so is "now";
# LABEL=LIB pairs add other libraries. ROUNDS (default 3), MSGLOG (default 0:12), ITER
# (default 20000), BENCHES (default "PingPong PingPing Sendrecv Exchange").
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); shift
: "${I_MPI_ROOT:?set I_MPI_ROOT to the Intel MPI wheel directory, build/venv/impi}"
export LD_LIBRARY_PATH=$I_MPI_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rounds=${ROUNDS:-3}
benches=${BENCHES:-"PingPong PingPing Sendrecv Exchange"}
libs=("now=$build/src/libclampi_pmpi.so" "$@")
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
echo "# $(date -u +%FT%TZ) commit $(git -C "$(dirname "$0")" log -1 --format=%h) build $build, $rounds rounds," \
  "IMB-MPI1 -msglog ${MSGLOG:-0:12} -iter ${ITER:-20000}"
echo "# each line: bench side round: size=us ..."
for r in $(seq 1 "$rounds"); do
  for side in plain= "${libs[@]}"; do
    name=${side%%=*} lib=${side#*=} extra=()
    [ -n "$lib" ] && extra=(-genv LD_PRELOAD "$lib" -genv CLAMPI_MATCH lla+hot)
    # each benchmark's table: "#bytes #repetitions ... t_avg[usec]" (PingPong: "t[usec]")
    timeout 600 "$I_MPI_ROOT/bin/mpiexec" -n 2 "${extra[@]}" "$I_MPI_ROOT/bin/IMB-MPI1" $benches \
      -msglog "${MSGLOG:-0:12}" -iter "${ITER:-20000}" -time 10 2>/dev/null |
      awk -v side="$name" -v r="$r" '
        /^# Benchmarking / {b = $3}
        /#bytes/ {col = 0; for (i = 1; i <= NF; i++) if ($i ~ /^t_avg|^t\[usec\]/) col = i; next}
        b != "" && col && $1 ~ /^[0-9]+$/ && NF >= col {v[b] = v[b] " " $1 "=" $col}
        END {for (k in v) print k, side, "r" r ":" v[k]}'
  done
done >"$raw"
sort -k1,1 -s "$raw"
python3 - "$raw" <<'PY'
import sys, collections, statistics
v = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    head, vals = line.split(":", 1)
    b, side, _ = head.split()
    for kv in vals.split():
        s, x = kv.split("=")
        v[(b, int(s))][side].append(float(x))
print("# median over rounds of clampi's time / plain's (1 = plain's; above 1: slower)")
for (b, s) in sorted(v):
    sides = v[(b, s)]
    for side in sorted(k for k in sides if k != "plain"):
        ratios = [c / p for c, p in zip(sides[side], sides["plain"]) if p > 0]
        if ratios:
            print(f"{b} {side} {s}: {statistics.median(ratios):.2f}")
PY
