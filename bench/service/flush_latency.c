/* put+flush latency over a UCX window while the target computes outside MPI (its progress
 * comes only from clampi's progress machinery): median of 5 rounds of 200. */
#include <clampi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static int cmp(const void *a, const void *b) {
    double x = *(double *)a, y = *(double *)b;
    return x < y ? -1 : x > y;
}
int main(int argc, char **argv) {
    int prov;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int order = argc > 1 && atoi(argv[1]);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    if (order) MPI_Info_set(info, "mpi_win_order", "true");
    CMPI_Win w;
    long *base;
    CMPI_Win_allocate(1 << 16, 8, info, MPI_COMM_WORLD, &base, &w);
    CMPI_Win_lock_all(0, w);
    double r[5];
    for (int round = 0; round < 5; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            long v = 1;
            double t = MPI_Wtime();
            for (int i = 0; i < 200; i++) {
                CMPI_Put(&v, 1, MPI_LONG, 1, i, 1, MPI_LONG, w);
                CMPI_Win_flush(1, w);
            }
            r[round] = (MPI_Wtime() - t) / 200 * 1e6;
        } else {
            volatile double x = 0;
            double t = MPI_Wtime();
            while (MPI_Wtime() - t < 0.3) x += 1; /* compute, no MPI */
        }
    }
    if (me == 0) {
        qsort(r, 5, sizeof r[0], cmp);
        printf("put+flush us median=%.1f min=%.1f\n", r[2], r[0]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CMPI_Win_unlock_all(w);
    CMPI_Win_free(&w);
    MPI_Finalize();
    return 0;
}
