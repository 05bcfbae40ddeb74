#!/usr/bin/env bash
# Blocking collectives plainly against the preload on the MPI carrier (CLAMPI_MATCH=lla+hot
# CLAMPI_MATCH_CARRIER=mpi), TRIALS alternating runs of match_coll_forms, 2 ranks bound to
# cores; prints each collective's minimum per side and the ratio preloaded/plain, and the
# MPI's own nonblocking Ireduce+Wait against its blocking Reduce (plain runs).
#   bench/match/coll_forms.sh BUILD_DIR [OUT.txt]    (TRIALS=3; EXTRA="-x VAR=v ..." more env;
#   DEEP=D: rank 1 keeps D unmatched receives posted throughout, plain and preloaded)
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); out=${2:-/dev/null}
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
prog=$build/bench/match/match_coll_forms; pre=$build/src/libclampi_pmpi.so
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then
  bind=(--bind-to core); carrier=(-x LD_PRELOAD=$pre -x CLAMPI_MATCH=lla+hot -x CLAMPI_MATCH_CARRIER=mpi)
else
  bind=(-bind-to core); carrier=(-genv LD_PRELOAD $pre -genv CLAMPI_MATCH lla+hot -genv CLAMPI_MATCH_CARRIER mpi)
fi
tmp=$(mktemp -d); trap 'rm -rf $tmp' EXIT
for t in $(seq 1 ${TRIALS:-3}); do
  "$mpiexec" -n 2 "${bind[@]}" $prog ${DEEP:-} | sed 's/^/plain /' >>$tmp/all
  "$mpiexec" -n 2 "${bind[@]}" "${carrier[@]}" ${EXTRA:-} $prog ${DEEP:-} | sed 's/^/carrier /' >>$tmp/all
done
{ echo "# $(date -u +%FT%TZ) commit $(git -C "$(dirname "$0")" rev-parse --short HEAD) $(basename $mpiexec) TRIALS=${TRIALS:-3} EXTRA=${EXTRA:-} DEEP=${DEEP:-0}"
  python3 - $tmp/all <<'PY'
import sys, collections
best = collections.defaultdict(lambda: 1e30)
for l in open(sys.argv[1]):
    side, _, name, _, b, _, us = l.split()
    best[(side, name, int(b))] = min(best[(side, name, int(b))], float(us))
print("%-20s %8s %10s %10s %8s" % ("collective", "bytes", "plain_us", "carrier_us", "ratio"))
for (side, name, b) in sorted(k for k in best if k[0] == "plain"):
    p, c = best[("plain", name, b)], best.get(("carrier", name, b), float("nan"))
    print("%-20s %8d %10.3f %10.3f %8.2f" % (name, b, p, c, c / p))
print("MPI's own nonblocking form against its blocking call (plain runs):")
for b in sorted({k[2] for k in best if k[1] == "reduce" and k[0] == "plain"}):
    print("  Ireduce+Wait / Reduce at %7d B: %.2f" % (b, best[("plain", "ireduce+wait(pmpi)", b)] / best[("plain", "reduce", b)]))
PY
} | tee -a "$out"
