#!/usr/bin/env bash
# match_pingpong (a plain MPI program) plain, preloaded with another build of the library
# (OLD: a before/after comparison) and preloaded with this build, TRIALS alternating rounds
# in one run, 2 ranks bound to cores, shared memory. For each form, depth and carrier: the
# median round trip per side and the ratios new/plain and new/old.
#   bench/match/pingpong_ab.sh BUILD_DIR OLD_LIB
# Env: FORMS ("0 3": 0 MPI_Send/MPI_Recv, 2 nonblocking + MPI_Wait, 3 MPI_Mprobe + MPI_Mrecv,
# 4 MPI_Ssend/MPI_Recv, 5 MPI_Iprobe loop + MPI_Recv, 6 MPI_Sendrecv exchange, 7 persistent exchange,
# 11 persistent halo of 8 x 1 KiB),
# DEPTHS ("0 1024"), CARRIERS ("ucx mpi"), ITERS (20000), TRIALS (5), MATCH (lla+hot).
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); old=${2:?old library}
prog=$build/bench/match/match_pingpong; new=$build/src/libclampi_pmpi.so
forms=${FORMS:-0 3}; depths=${DEPTHS:-0 1024}; carriers=${CARRIERS:-ucx mpi}
iters=${ITERS:-20000}; trials=${TRIALS:-5}; match=${MATCH:-lla+hot}
mpiexec=$(grep -E '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if "$mpiexec" --version 2>&1 | grep -Eq "Open MPI|OpenRTE"; then
  mpi=openmpi; bind=(--bind-to core); e() { echo -x "$1=$2"; }
else
  mpi=mpich; bind=(-bind-to core); e() { echo -genv "$1" "$2"; }
fi
one() { # form depth env-words... -> us per round trip
  local f=$1 d=$2; shift 2
  timeout 300 "$mpiexec" -n 2 "${bind[@]}" "$@" "$prog" "$iters" "$d" 1000 "$f" | sed -n 's/.*us_per_roundtrip=//p'
}
echo "# $(date -u +%FT%TZ) $mpi commit $(git -C "$(dirname "$0")" rev-parse --short HEAD) old=$old iters=$iters trials=$trials"
for f in $forms; do for d in $depths; do for c in $carriers; do
  ce="$(e CLAMPI_MATCH "$match") $(e CLAMPI_MATCH_CARRIER "$c")"
  P=() O=() N=()
  for t in $(seq "$trials"); do
    P+=("$(one "$f" "$d")")
    O+=("$(one "$f" "$d" $(e LD_PRELOAD "$old") $ce)")
    N+=("$(one "$f" "$d" $(e LD_PRELOAD "$new") $ce)")
  done
  python3 - "$mpi" "$f" "$d" "$c" "${P[*]}" "${O[*]}" "${N[*]}" <<'PY'
import sys, statistics as st
mpi, f, d, c = sys.argv[1:5]
p, o, n = ([float(x) for x in a.split()] for a in sys.argv[5:8])
mp, mo, mn = st.median(p), st.median(o), st.median(n)
print(f"{mpi} form={f} depth={d} carrier={c} us_per_roundtrip plain={mp:.3f} old={mo:.3f} new={mn:.3f} "
      f"new/plain={mn/mp:.2f} new/old={mn/mo:.2f}  rounds plain={p} old={o} new={n}")
PY
done; done; done
