#!/usr/bin/env bash
# What the preload costs a program's small point-to-point messages: OSU's osu_bw and
# osu_bibw (windows of 64 nonblocking messages; built outside the repository) at 1 B and
# 64 B, plain, preloaded with this build's library and with another's (OLD), each also with
# CLAMPI_MATCH=lla+hot, ROUNDS alternating rounds in one run, 2 ranks bound to cores, shared
# memory. Prints MB/s per round and, per size, the median over rounds of each side / plain.
#   bench/preload_small_messages.sh BUILD OSU_PT2PT_DIR OLD_LIB
# ROUNDS (default 9), ITERS (OSU's -i, default 30000).
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd) osu=${2:?OSU pt2pt dir} old=${3:?old library}
new=$build/src/libclampi_pmpi.so rounds=${ROUNDS:-9} iters=${ITERS:-30000}
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then
  launch=("$mpiexec" -np 2 --bind-to core); e() { echo "-x $1=$2"; }
else
  launch=("$mpiexec" -n 2 -bind-to core); e() { echo "-genv $1 $2"; }
fi
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
echo "# $(date -u +%FT%TZ) commit $(git -C "$(dirname "$0")" log -1 --format=%h) $mpiexec old=$old rounds=$rounds iters=$iters"
for r in $(seq "$rounds"); do
  for b in osu_bw osu_bibw; do
    for side in plain old new old+match new+match; do
      lib=$new; [[ $side == old* ]] && lib=$old
      env=()
      [ "$side" = plain ] || read -ra env <<<"$(e LD_PRELOAD "$lib")"
      [[ $side == *+match ]] && read -ra env <<<"${env[*]} $(e CLAMPI_MATCH lla+hot)"
      line=$(timeout 300 "${launch[@]}" "${env[@]}" "$osu/$b" -m 1:64 -i "$iters" -x 1000 2>/dev/null |
        awk '$1 == "1" || $1 == "64" {printf "%s=%s ", $1, $2}')
      echo "$b $side r$r: $line"
    done
  done
done | tee "$raw"
python3 - "$raw" <<'PY'
import sys, collections, statistics
v = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    head, vals = line.split(":", 1)
    b, side, r = head.split()
    for kv in vals.split():
        s, x = kv.split("=")
        v[(b, side, int(s))][r] = float(x)
print("# median over rounds of side's MB/s / plain's (below 1: slower than plain)")
for (b, side, s) in sorted(v):
    if side == "plain": continue
    pl, x = v[(b, "plain", s)], v[(b, side, s)]
    rs = [x[r] / pl[r] for r in x if r in pl and pl[r] > 0]
    if rs: print("%s %s %d B: %.2f" % (b, side, s, statistics.median(rs)))
PY
