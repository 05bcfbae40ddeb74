#!/usr/bin/env bash
# Instructions per 1 B message (MPI_Irecv + MPI_Send + MPI_Wait, the rank sending to itself)
# of a plain MPI program (match_pingpong with one rank), plain against preloaded with
# CLAMPI_MATCH, counted with callgrind at N1 and N2 iterations: (Ir(N2) - Ir(N1)) / (N2 - N1)
# is the cost of one message (one send and its receive), start-up and finalize excluded.
# One rank: nothing waits for a peer, so the count is the software's own cost (two ranks
# would add the polling of whichever rank waits). With CLAMPI_MATCH the message goes through
# UCX's loopback transport; plainly through the MPI's self path (Open MPI: btl self; MPICH:
# its self path) -- each the library's own fastest way to deliver it. BLOCKING=1: MPI_Send
# then MPI_Recv instead (no request handle reaches the program; Open MPI only: MPICH's
# MPI_Send to itself waits for the receive, as MPI allows). BLOCKING=3: MPI_Isend,
# MPI_Mprobe + MPI_Mrecv, MPI_Wait; BLOCKING=5: MPI_Isend, MPI_Iprobe + MPI_Recv, MPI_Wait;
# BLOCKING=6: MPI_Sendrecv; BLOCKING=7: persistent receive and send, MPI_Startall + MPI_Waitall;
# BLOCKING=8: MPI_Irecv + MPI_Isend, MPI_Waitall; BLOCKING=9: the same with an MPI_Testall loop;
# BLOCKING=10: osu_bw's window, 64 MPI_Irecv + 64 MPI_Isend + two MPI_Waitall (per 64 messages);
# BLOCKING=11: a persistent halo, 8 receives and 8 sends of 1 KiB, MPI_Startall + MPI_Waitall (per 8).
#   bench/match/count_instructions.sh BUILD_DIR [OUT.txt]   (MATCH=lla+hot by default)
# Also writes the top functions of the preloaded run (inclusive, per message) when TOP=1.
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); out=${2:-}
match=${MATCH:-lla+hot}; n1=${N1:-2000}; n2=${N2:-4000}
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then mpi=openmpi; envf=-x; else mpi=mpich; envf=-genv; fi
prog=$build/bench/match/match_pingpong; pre=${PRELOAD:-$build/src/libclampi_pmpi.so} # PRELOAD: another build's library (a before/after count)
tmp=$(mktemp -d)
ir() { # $1 = iters, $2 = output tag, rest = launcher env settings; prints the Ir total
  local n=$1 tag=$2; shift 2
  timeout ${TIMEOUT:-900} "$mpiexec" -n 1 "$@" valgrind --tool=callgrind --callgrind-out-file=$tmp/cg.$tag $prog $n 0 100 ${BLOCKING:-0} \
    >/dev/null 2>$tmp/err || { cat $tmp/err >&2; exit 1; }
  grep -E '^(summary|totals):' $tmp/cg.$tag | head -1 | awk '{print $2}'
}
p1=$(ir $n1 p1); p2=$(ir $n2 p2)
# MATCH=S/C: structure S on carrier C (CLAMPI_MATCH_CARRIER=C); S alone: the default carrier
setenv() { if [ $mpi = openmpi ]; then cenv+=(-x "$1=$2"); else cenv+=(-genv "$1" "$2"); fi; }
cenv=(); setenv LD_PRELOAD "$pre"; setenv CLAMPI_MATCH "${match%/*}"
[ "$match" != "${match%/*}" ] && setenv CLAMPI_MATCH_CARRIER "${match#*/}"
c1=$(ir $n1 c1 "${cenv[@]}"); c2=$(ir $n2 c2 "${cenv[@]}")
plain=$(( (p2 - p1) / (n2 - n1) )); clampi=$(( (c2 - c1) / (n2 - n1) ))
case ${BLOCKING:-0} in
  0) form="MPI_Irecv+MPI_Send+MPI_Wait" ;; 3) form="MPI_Isend+MPI_Mprobe+MPI_Mrecv+MPI_Wait" ;;
  5) form="MPI_Isend+MPI_Iprobe+MPI_Recv+MPI_Wait" ;; 6) form="MPI_Sendrecv" ;; 7) form="persistent:MPI_Startall+MPI_Waitall" ;;
  8) form="MPI_Irecv+MPI_Isend+MPI_Waitall" ;; 9) form="MPI_Irecv+MPI_Isend+MPI_Testall" ;;
  10) form="window64:MPI_Irecv*64+MPI_Isend*64+MPI_Waitall*2(per-64)" ;;
  11) form="halo8:persistent-1KiB-MPI_Startall(16)+MPI_Waitall(16)(per-8)" ;; *) form="MPI_Send+MPI_Recv" ;;
esac
what="1 B message"; [ "${BLOCKING:-0}" = 11 ] && what="8 x 1 KiB messages"
line=$(printf '%s %s to self (%s) instructions: plain=%d preload(CLAMPI_MATCH=%s)=%d ratio=%.2f' \
  $mpi "$what" $form $plain $match $clampi $(echo "$clampi / $plain" | bc -l))
echo "$line"
if [ -n "$out" ]; then
  { echo "# $(date -u +%FT%TZ) commit $(git -C "$(dirname "$0")" rev-parse --short HEAD) N1=$n1 N2=$n2"
    echo "# command: MATCH=$match BLOCKING=${BLOCKING:-0} bench/match/count_instructions.sh BUILD_DIR"; echo "$line"; } >> "$out"
fi
if [ -n "${TOP:-}" ]; then # where the preloaded message's instructions go: per function, inclusive, (N2 - N1) runs
  for t in c1 c2; do callgrind_annotate --inclusive=yes --threshold=100 $tmp/cg.$t 2>/dev/null | grep -E '^ *[0-9,]+ ' | grep -v '=>' >$tmp/a.$t; done
  python3 - $tmp/a.c1 $tmp/a.c2 $((n2 - n1)) ${TOPN:-45} <<'PY'
import sys, re
def load(f):
    d = {}
    for l in open(f):
        m = re.match(r'\s*([\d,]+)\s+\([^)]*\)\s+(.*)', l)
        if m: d[m.group(2).split(' [')[0]] = int(m.group(1).replace(',', ''))
    return d
a, b, n = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3])
rows = sorted(((b[k] - a.get(k, 0)) / n, k) for k in b)
for v, k in reversed(rows[-int(sys.argv[4]):]): print('%8.0f  %s' % (v, k[-110:]))
PY
fi
[ -n "${KEEP:-}" ] && echo "callgrind files: $tmp" || rm -rf $tmp
