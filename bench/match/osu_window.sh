#!/usr/bin/env bash
# Windowed bandwidth (and latency) of an unmodified program under the matching preload:
# OSU's osu_bw and osu_bibw (64 receives per window) and osu_latency (built outside the
# repository), plain against CLAMPI_MATCH=lla+hot on the MPI carrier and on the UCX carrier
# (carrier "default": no CLAMPI_MATCH_CARRIER), ROUNDS alternating rounds in one run, 2
# ranks bound to cores. Prints MB/s (latency: us) per size and, per size, the median over
# rounds of clampi's speed / plain's (1 = plain's bandwidth or latency; below 1: slower).
#   bench/match/osu_window.sh BUILD OSU_PT2PT_DIR [LIB_LABEL=LIB ...]
# BUILD: build/openmpi or build/mpich (its libclampi_pmpi.so is "now"); extra LABEL=LIB
# pairs add other libraries (e.g. before=/tmp/old/libclampi_pmpi.so). ROUNDS (default 3),
# SIZES (default "1 64 4096 65536 1048576 4194304"), CARRIERS (default "mpi ucx"), BENCHES
# (default "osu_bw osu_bibw"; osu_latency too, and osu_barrier from OSU's collective
# directory, printed as size 0).
set -euo pipefail
build=$1 osu=$2; shift 2
rounds=${ROUNDS:-3}
sizes=${SIZES:-"1 64 4096 65536 1048576 4194304"}
carriers=${CARRIERS:-"mpi ucx"}
benches=${BENCHES:-"osu_bw osu_bibw"}
libs=("now=$build/src/libclampi_pmpi.so" "$@")
if grep -q openmpi <<<"$build"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launch=(mpirun.openmpi -np 2 --bind-to core)
  env_flag() { echo "-x $1=$2"; }
else
  launch=(mpiexec.mpich -n 2 -bind-to core)
  env_flag() { echo "-genv $1 $2"; }
fi
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
echo "# $(date -u +%FT%TZ) commit $(git -C "$(dirname "$0")" log -1 --format=%h) build $build, OSU $osu, $rounds rounds"
echo "# each line: bench side round: size=MB/s ..."
for r in $(seq 1 "$rounds"); do
  for b in $benches; do
    sides=("plain=")
    for l in "${libs[@]}"; do for c in $carriers; do sides+=("${l%%=*}-$c=${l#*=}:$c"); done; done
    for s in "${sides[@]}"; do
      name=${s%%=*} spec=${s#*=} extra=()
      if [ -n "$spec" ]; then
        lib=${spec%:*} carrier=${spec##*:}
        read -ra extra <<<"$(env_flag LD_PRELOAD "$lib") $(env_flag CLAMPI_MATCH lla+hot)"
        [ "$carrier" = default ] || read -ra extra <<<"${extra[*]} $(env_flag CLAMPI_MATCH_CARRIER "$carrier")"
      fi
      line=$(timeout 300 "${launch[@]}" "${extra[@]}" "$osu/$b" 2>/dev/null |
        awk -v S=" $sizes " -v B="$b" 'B == "osu_barrier" && NF == 1 && $1 ~ /^[0-9.]+$/ {printf "0=%s ", $1}
                                        index(S, " " $1 " ") {printf "%s=%s ", $1, $2}')
      echo "$b $name r$r: $line"
    done
  done
done >"$raw"
cat "$raw"
python3 - "$raw" <<'PY'
import sys, collections, statistics
v = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    if line.startswith("#") or ":" not in line: continue
    head, vals = line.split(":", 1)
    b, side, r = head.split()
    for kv in vals.split():
        s, x = kv.split("=")
        v[(b, side, int(s))][r] = float(x)
lat = ("osu_latency", "osu_barrier")
print("# median over rounds of side's speed / plain's, per size (latency: plain / side)")
for (b, side, s) in sorted(v, key=lambda k: (k[0], k[1], k[2])):
    if side == "plain": continue
    pl = v[(b, "plain", s)]
    x = v[(b, side, s)]
    rs = [(pl[r] / x[r] if b in lat else x[r] / pl[r]) for r in x if r in pl and pl[r] > 0 and x[r] > 0]
    if rs: print("%s %s %d: %.2f" % (b, side, s, statistics.median(rs)))
PY
