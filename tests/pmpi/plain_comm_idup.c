/* Neither MPI_Comm_idup nor MPI_Comm_free may wait for the other members.
 * 1. MPICH's comm/comm_idup pattern: rank 0 calls MPI_Comm_idup only after a synchronous
 *    send from every other rank, which each makes after its own MPI_Comm_idup; then the
 *    duplicate carries an allreduce and a ring exchange.
 * 2. MPICH's comm/cmfree2 pattern: rank 1 posts a receive on a duplicate and frees it
 *    before a barrier on MPI_COMM_WORLD; rank 0 makes the matching synchronous send and
 *    frees the duplicate only after that barrier.
 * Under the preload with CLAMPI_MATCH either call blocking until all called it hangs.
 * Argument "no_free_pending" leaves pattern 2 out (Intel MPI 2021 crashes on it without
 * clampi: tests/mpi_bugs/impi2021_irecv_on_freed_comm.c). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, buf[2] = {0, 0};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup;
    MPI_Request q;
    if (rank == 0) {
        for (int i = 1; i < size; i++) MPI_Recv(buf, 2, MPI_INT, i, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_idup(MPI_COMM_WORLD, &dup, &q);
    } else {
        MPI_Comm_idup(MPI_COMM_WORLD, &dup, &q);
        buf[0] = rank;
        MPI_Ssend(buf, 2, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    int sum = 0, got = -1, mine = rank * 10;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup);
    MPI_Sendrecv(&mine, 1, MPI_INT, (rank + 1) % size, 5, &got, 1, MPI_INT, (rank + size - 1) % size, 5, dup,
                 MPI_STATUS_IGNORE);
    printf("result comm_idup rank=%d sum=%d got=%d\n", rank, sum, got);
    MPI_Comm_free(&dup);
    if (argc > 1 && strcmp(argv[1], "no_free_pending") == 0) {
        MPI_Finalize();
        return 0;
    }

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int v = 77, w = 0;
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Ssend(&v, 1, MPI_INT, 1, 0, dup);
        MPI_Comm_free(&dup);
    } else if (rank == 1) {
        MPI_Irecv(&w, 1, MPI_INT, 0, 0, dup, &q);
        MPI_Comm_free(&dup);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        printf("result comm_free_after_irecv w=%d\n", w);
    } else {
        MPI_Comm_free(&dup);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
