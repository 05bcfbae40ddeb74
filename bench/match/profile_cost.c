/* Cost of the CLAMPI_MATCH_PROFILE wrappers: one rank, N rounds of MPI_Irecv from itself,
 * MPI_Send to itself, MPI_Wait. Counted by profile_cost.sh under callgrind. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, v = 0, w;
    for (int i = 0; i < n; i++) {
        MPI_Request r;
        MPI_Irecv(&w, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &r);
        MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_SELF);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
