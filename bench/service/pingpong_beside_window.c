/* The cost of MPI's progress engine running clampi's UCX progress pass: a 1-byte MPI
 * ping-pong (MPI_Send/MPI_Recv, MPI_COMM_WORLD) while a UCX window with a progress-service
 * client exists (clampi_progress=thread). On Open MPI every poll of MPI's progress engine
 * then runs the pass (CLAMPI_PROGRESS_FROM_MPI=true); compare with =false.
 * Usage: pingpong_beside_window [ITERS]; prints microseconds per round trip, best of 5. */
#include <clampi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const int iters = argc > 1 ? atoi(argv[1]) : 20000;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    MPI_Info_set(info, "clampi_progress", "thread");
    CMPI_Win w;
    long *base;
    CMPI_Win_allocate(1 << 16, 8, info, MPI_COMM_WORLD, &base, &w);
    MPI_Info_free(&info);
    char b = 0;
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (me == 0) {
                MPI_Send(&b, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(&b, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (me == 1) {
                MPI_Recv(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
            }
        }
        t = (MPI_Wtime() - t) / iters * 1e6;
        if (t < best) best = t;
    }
    if (me == 0) printf("pingpong_beside_window us_per_round_trip=%.3f\n", best);
    CMPI_Win_free(&w);
    MPI_Finalize();
    return 0;
}
