/* Blocking collectives as a plain MPI program calls them (MPI_Reduce, MPI_Allreduce,
 * MPI_Bcast: through the preload's wrappers when preloaded) beside the MPI's own
 * nonblocking form (PMPI_Ireduce + PMPI_Wait, never wrapped), at sizes 4 B .. 256 KiB.
 * coll_forms.sh runs it plainly and on the MPI carrier, alternating, and prints the ratios:
 * what a carrier job's collectives cost (docs/matching.md, "The MPI carrier").
 * MPI_Barrier is printed once, as bytes 0. With an argument D, rank 1 keeps D receives that
 * nothing matches posted throughout (on the MPI carrier, deeper than MPI's own queue keeps:
 * they sit in clampi's, and every wait must keep taking messages).
 * Prints per size: "coll NAME bytes B us T" (best of REPS). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define REPS 5

static double best_of(int which, int n, float *a, float *b, int iters) {
    double best = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Request r;
            switch (which) {
            case 0: MPI_Reduce(a, b, n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); break;
            case 1: MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
            case 2: MPI_Bcast(a, n, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
            case 3:
                PMPI_Ireduce(a, b, n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD, &r);
                PMPI_Wait(&r, MPI_STATUS_IGNORE);
                break;
            case 4: MPI_Barrier(MPI_COMM_WORLD); break;
            }
        }
        double t = (MPI_Wtime() - t0) / iters;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (t < best) best = t;
    }
    return best * 1e6;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, deep = argc > 1 ? atoi(argv[1]) : 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static int sink;
    MPI_Request *decoys = malloc(sizeof(MPI_Request) * (size_t)(deep > 0 ? deep : 1));
    if (rank == 1)
        for (int d = 0; d < deep; d++) MPI_Irecv(&sink, 1, MPI_INT, 0, 30000, MPI_COMM_WORLD, &decoys[d]);
    double bar = best_of(4, 0, NULL, NULL, 20000);
    if (rank == 0) printf("coll barrier bytes 0 us %.3f\n", bar);
    const int bytes[] = {4, 1024, 16384, 65536, 262144};
    float *a = calloc(65536, sizeof(float)), *b = calloc(65536, sizeof(float));
    const char *names[] = {"reduce", "allreduce", "bcast", "ireduce+wait(pmpi)"};
    for (int s = 0; s < 5; s++) {
        int n = bytes[s] / (int)sizeof(float), iters = bytes[s] >= 65536 ? 200 : 2000;
        for (int w = 0; w < 4; w++) {
            double us = best_of(w, n, a, b, iters);
            if (rank == 0) printf("coll %s bytes %d us %.3f\n", names[w], bytes[s], us);
        }
    }
    if (rank == 1 && deep > 0) {
        for (int d = 0; d < deep; d++) MPI_Cancel(&decoys[d]);
        for (int d = 0; d < deep; d++) MPI_Wait(&decoys[d], MPI_STATUS_IGNORE);
    }
    free(decoys);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
