/* A plain MPI window of 1 B messages, osu_bw's shape: rank 0 posts W MPI_Isend, rank 1 W
 * MPI_Irecv, both MPI_Waitall, then rank 1 acknowledges. For window_instructions.sh.
 *   match_window ITERS [W=64] */
#include <mpi.h>
#include <stdlib.h>

#define MAXW 1024

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, iters = argc > 1 ? atoi(argv[1]) : 1000, w = argc > 2 ? atoi(argv[2]) : 64;
    if (w < 1 || w > MAXW) w = 64;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static char buf[MAXW];
    static MPI_Request q[MAXW];
    static MPI_Status st[MAXW];
    for (int it = 0; it < iters; it++) {
        if (rank == 0) {
            for (int i = 0; i < w; i++) MPI_Isend(buf + i, 1, MPI_CHAR, 1, 100, MPI_COMM_WORLD, q + i);
            MPI_Waitall(w, q, st);
            MPI_Recv(buf, 1, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int i = 0; i < w; i++) MPI_Irecv(buf + i, 1, MPI_CHAR, 0, 100, MPI_COMM_WORLD, q + i);
            MPI_Waitall(w, q, st);
            MPI_Send(buf, 1, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
