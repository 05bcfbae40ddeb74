#!/usr/bin/env bash
# Does a survivor's MPI_Finalize return after a process of the job died? Open MPI 5 with
# its fault tolerance on (`mpirun --with-ft ulfm`), 2 ranks: rank 1 kills itself while
# rank 0 waits in MPI_Alltoall (which fails with MPIX_ERR_PROC_FAILED), then rank 0 calls
# MPI_Finalize (tests/pmpi/plain_ulfm_coll_inside.c, mode kill_finalize). Counts the runs
# whose finalize did not return within 20 s, plainly and with clampi preloaded, in
# alternating rounds: a count, not a time.
#   bench/ulfm_finalize_after_death.sh BUILD_DIR [ROUNDS] [RUNS_PER_ROUND]   (an Open MPI 5 build)
set -uo pipefail
build=$(cd "${1:?build dir of an Open MPI 5 build}" && pwd)
rounds=${2:-3} runs=${3:-8}
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
prog=$build/tests/pmpi/plain_ulfm_coll_inside
lib=$build/src/libclampi_pmpi.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=^ofi
echo "# $("$mpiexec" --version 2>&1 | head -1); commit $(git -C "$(dirname "$0")" rev-parse --short HEAD); $(date -u +%FT%TZ)"
echo "# round mode runs finalize_hangs finalized (rank 0 printed 'finalized') alltoall_proc_failed"
tot_p=0 tot_c=0
for r in $(seq "$rounds"); do
  for mode in plain clampi; do
    pre=(); [ $mode = clampi ] && pre=(-x LD_PRELOAD="$lib")
    hangs=0 fin=0 pf=0
    for i in $(seq "$runs"); do
      out=$(timeout -s KILL 20 "$mpiexec" --with-ft ulfm -n 2 "${pre[@]}" "$prog" kill_finalize 2>/dev/null)
      [ $? -eq 137 ] && hangs=$((hangs + 1))
      grep -q '^finalized rank=0' <<<"$out" && fin=$((fin + 1))
      grep -q '^coll_outcome rank=0 proc_failed' <<<"$out" && pf=$((pf + 1))
    done
    pkill -9 -f plain_ulfm_coll_inside 2>/dev/null
    echo "$r $mode $runs $hangs $fin $pf"
    if [ $mode = plain ]; then tot_p=$((tot_p + hangs)); else tot_c=$((tot_c + hangs)); fi
  done
done
echo "# finalize hangs: plain $tot_p of $((rounds * runs)), clampi $tot_c of $((rounds * runs))"
