/* MPI_Comm_idup must not wait for the other members (MPICH's comm/comm_idup pattern): rank
 * 0 calls it only after a synchronous send from every other rank, which each makes after
 * its own MPI_Comm_idup; then the duplicate carries an allreduce and a ring exchange.
 * Under the preload with CLAMPI_MATCH an MPI_Comm_idup that blocked until all called it
 * would hang here. */
#include <mpi.h>
#include <stdio.h>

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
    MPI_Finalize();
    return 0;
}
