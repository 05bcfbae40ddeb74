/* A plain MPI program (no clampi) with known matching depths, for CLAMPI_MATCH_PROFILE:
 * rank 1 posts 8 receives (tags 0..7) and waits for them newest first (depths 7..0),
 * makes one blocking MPI_Recv with nothing outstanding (depth 0), then 4 receives
 * completed by MPI_Waitall (depths 0). Expected on rank 1: 13 receives, depth sum 28.
 * "plain_depth reverse": rank 1 posts 8 receives (tags 0..7), a barrier, rank 0 sends tags
 * 7..0, one MPI_Waitall: the completion order says nothing about the depths (the MPI
 * library's posted queue, read through MPI_T where published, holds 0..7 receives). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, v[16] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 1 && rank < 2) { /* reverse */
        MPI_Request r[8];
        if (rank == 1)
            for (int t = 0; t < 8; t++) MPI_Irecv(&v[t], 1, MPI_INT, 0, t, MPI_COMM_WORLD, &r[t]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            for (int t = 7; t >= 0; t--) MPI_Send(&t, 1, MPI_INT, 1, t, MPI_COMM_WORLD);
        else
            MPI_Waitall(8, r, MPI_STATUSES_IGNORE);
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        for (int t = 0; t < 8; t++) MPI_Send(&t, 1, MPI_INT, 1, t, MPI_COMM_WORLD);
        MPI_Send(&rank, 1, MPI_INT, 1, 100, MPI_COMM_WORLD);
        for (int t = 0; t < 4; t++) MPI_Send(&t, 1, MPI_INT, 1, 200 + t, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Request r[8];
        for (int t = 0; t < 8; t++) MPI_Irecv(&v[t], 1, MPI_INT, 0, t, MPI_COMM_WORLD, &r[t]);
        for (int t = 7; t >= 0; t--) MPI_Wait(&r[t], MPI_STATUS_IGNORE);
        MPI_Recv(&v[8], 1, MPI_INT, 0, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int t = 0; t < 4; t++) MPI_Irecv(&v[9 + t], 1, MPI_INT, 0, 200 + t, MPI_COMM_WORLD, &r[t]);
        MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
        for (int t = 0; t < 8; t++)
            if (v[t] != t) printf("wrong value\n");
    }
    MPI_Finalize();
    return 0;
}
