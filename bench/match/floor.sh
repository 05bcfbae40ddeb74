#!/usr/bin/env bash
# The transport floor under clampi's matched messages (bench/match/ucx_floor.c): 1 B one-way
# latency of bare UCX active messages against the MPI library's MPI_Send/MPI_Recv, trials
# alternating in one run, 2 ranks bound to cores, shared memory (TRANSPORT=tcp: both over TCP).
#   bench/match/floor.sh OPENMPI_BUILD MPICH_BUILD      (either may be "-": skipped)
# Env: ITERS (20000), TRIALS (7), SIZES ("1 64 1024").
# Writes bench/match/results/ucx_floor-<mpi>[-tcp].txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
iters=${ITERS:-20000}; trials=${TRIALS:-7}; sizes=${SIZES:-1 64 1024}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sfx=; [ "${TRANSPORT:-shm}" = tcp ] && sfx=-tcp
run_one() { # mpi build
  local mpi=$1 build; build=$(cd "$2" && pwd)
  local prog=$build/bench/match/match_ucx_floor out=$here/results/ucx_floor-$mpi$sfx.txt
  { echo "# bench/match/floor.sh: $mpi, 2 ranks bound to cores, ${TRANSPORT:-shm}, $iters iterations x $trials alternating trials, $(date -u +%FT%TZ)"
    echo "# one-way latency (half a round trip) in us: MPI_Send/MPI_Recv of the MPI library vs bare UCX active messages (ucp_am_send_nbx)"
    for s in $sizes; do
      if [ $mpi = openmpi ]; then
        net=(); [ -n "$sfx" ] && net=(--mca btl tcp,self --mca pml ob1 -x UCX_TLS=tcp,self)
        timeout 600 mpirun.openmpi -n 2 --bind-to core "${net[@]}" $prog $iters $trials $s </dev/null
      else
        net=(); [ -n "$sfx" ] && net=(-genv UCX_TLS tcp,self)
        timeout 600 mpiexec.mpich -n 2 -bind-to core "${net[@]}" $prog $iters $trials $s </dev/null
      fi
    done; } | tee "$out"
}
[ "${1:--}" != - ] && run_one openmpi "$1"
[ "${2:--}" != - ] && run_one mpich "$2"
exit 0
