#!/usr/bin/env bash
# What clampi's ucp_worker_progress (src/services/ucx/mpi_polls.c) costs each poll of the
# MPI's UCX worker while clampi has nothing to do: a 1 B MPI ping-pong (MPI_Send/MPI_Recv,
# 2 ranks, shared memory, N round trips) under the preload, rank 0 under callgrind; prints
# the instructions of clampi's definition itself per call, and UCX's own poll's
# (inclusive) per call beside it. Counts, not times: the number of polls per round trip
# follows the scheduler, the instructions per poll do not.
# Usage: mpi_polls_instructions.sh BUILD [LIB...]   (LIB: preload libraries to compare;
#        default BUILD/src/libclampi_pmpi.so). MPICH builds only (Open MPI calls clampi
#        through opal_progress, not through this symbol).
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd); shift
libs=("$@"); [ ${#libs[@]} -gt 0 ] || libs=("$build/src/libclampi_pmpi.so")
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
mpicc=$(grep '^MPI_C_COMPILER:' "$build/CMakeCache.txt" | cut -d= -f2)
n=${N:-20000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/pp.c" <<'C'
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n = atoi(argv[1]);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char b = 0;
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(&b, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&b, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
C
"$mpicc" -O2 "$tmp/pp.c" -o "$tmp/pp"
cat >"$tmp/rank0.sh" <<'SH'
#!/bin/bash
if [ "${PMI_RANK:-}" = 0 ]; then exec valgrind -q --tool=callgrind --callgrind-out-file="$OUT" "$@"; fi
exec "$@"
SH
chmod +x "$tmp/rank0.sh"
echo "# $n round trips of 1 B, rank 0 under callgrind; $(date -u +%FT%TZ), commit $(git -C "$(dirname "$0")" rev-parse --short HEAD)"
i=0
for lib in "${libs[@]}"; do
  i=$((i + 1)); out="$tmp/cg.$i"
  "$mpiexec" -n 2 -genv LD_PRELOAD "$lib" -genv OUT "$out" "$tmp/rank0.sh" "$tmp/pp" "$n"
  callgrind_annotate --tree=caller "$out" | python3 -c '
import re, sys
lib = sys.argv[1]
text = sys.stdin.read()
num = lambda s: int(s.replace(",", ""))
# the definition in libclampi, with or without debug information
own = re.search(r"^\s*([\d,]+) \([^)]*\)\s+\*\s+\S*:ucp_worker_progress \[\S*libclampi", text, re.M)
ucx = re.search(r"^\s*([\d,]+) \([^)]*\)\s+<\s+\S*:ucp_worker_progress \(([\d,]+)x\) \[\S*libclampi", text, re.M)
total = re.search(r"^\s*([\d,]+) \([^)]*\)\s+PROGRAM TOTALS", text, re.M)
if not (own and ucx):
    print(f"{lib}: clampi definition not called (not MPICH, or not preloaded)"); sys.exit(0)
calls = num(ucx.group(2))
print(f"{lib}: {calls:,} polls; clampi per poll {num(own.group(1)) / calls:.1f} instructions; "
      f"UCX per poll {num(ucx.group(1)) / calls:.1f} (inclusive); rank 0 in all {num(total.group(1)):,}")
' "$lib"
done
