/* Intel MPI 2021.19, no clampi: a receive posted on a duplicate of MPI_COMM_WORLD that is then
 * freed (MPI_Comm_free marks it for deallocation; the pending receive still completes, MPI-4.1
 * 7.4.3) crashes Intel MPI (SIGSEGV) when the matching synchronous send arrives. This is MPICH's
 * comm/cmfree2 pattern; Open MPI and MPICH complete it.
 *
 * clampi's tests leave this pattern out on Intel MPI (tests/pmpi/plain_comm_idup.c, argument
 * "no_free_pending").
 *
 *   I_MPI_ROOT=VENV gcc -IVENV/include impi2021_irecv_on_freed_comm.c -LVENV/lib -Wl,-rpath,VENV/lib -lmpi -o repro
 *   I_MPI_ROOT=VENV VENV/bin/mpiexec -n 2 ./repro       # rank 1: SIGSEGV; "w=77" with any other MPI */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, v = 77, w = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm dup;
    MPI_Request q;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Ssend(&v, 1, MPI_INT, 1, 0, dup);
        MPI_Comm_free(&dup);
    } else if (rank == 1) {
        MPI_Irecv(&w, 1, MPI_INT, 0, 0, dup, &q);
        MPI_Comm_free(&dup); /* legal: the receive still completes */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        printf("w=%d\n", w);
    } else {
        MPI_Comm_free(&dup);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
