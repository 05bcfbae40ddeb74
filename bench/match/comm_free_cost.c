/* The cost of a communicator's life under the preload, two workloads:
 *  - comm_free_cost: MPI_Comm_dup, a 1 B ring exchange, MPI_Comm_free (every other one
 *    before its requests complete), N times; the time per iteration.
 *  - comm_done_free_cost: MPI_Comm_dup, a 1 B ring exchange (MPI_Sendrecv, complete),
 *    MPI_Comm_free, N times; the time per iteration.
 *  - comm_burst_cost: N/10 rounds of 10 duplicates made, then freed, no messages (the
 *    pattern of MPICH's comm/ctxalloc test); the time per duplicate and free.
 *  - comm_split_cost: MPI_Comm_split of MPI_COMM_WORLD (one color, ranks reversed), a 1 B
 *    ring exchange, MPI_Comm_free, N times; the time per iteration.
 * Run plainly and preloaded with CLAMPI_MATCH (comm_free_cost.sh).
 * Usage: match_comm_free_cost [N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 3000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        int v = i + rank, w = -1;
        MPI_Request r[2];
        MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: MPICH's (void *)1 warns at -O2 */
        MPI_Irecv(&w, 1, MPI_INT, (rank + size - 1) % size, 0, d, &r[0]);
        MPI_Isend(&v, 1, MPI_INT, (rank + 1) % size, 0, d, &r[1]);
        if (i % 2) {
            MPI_Waitall(2, r, st);
            MPI_Comm_free(&d);
        } else {
            MPI_Comm_free(&d);
            MPI_Waitall(2, r, st);
        }
        sum += w;
    }
    double us = (MPI_Wtime() - t0) / n * 1e6;
    if (rank == 0) printf("comm_free_cost iterations=%d sum=%ld us_per_iteration=%.1f\n", n, sum, us);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    sum = 0;
    for (int i = 0; i < n; i++) {
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        int v = i + rank, w = -1;
        MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 0, &w, 1, MPI_INT, (rank + size - 1) % size, 0, d,
                     MPI_STATUS_IGNORE);
        MPI_Comm_free(&d);
        sum += w;
    }
    us = (MPI_Wtime() - t0) / n * 1e6;
    if (rank == 0) printf("comm_done_free_cost iterations=%d sum=%ld us_per_iteration=%.1f\n", n, sum, us);
    MPI_Comm c[10];
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < n / 10; i++) {
        for (int k = 0; k < 10; k++) MPI_Comm_dup(MPI_COMM_WORLD, &c[k]);
        for (int k = 0; k < 10; k++) MPI_Comm_free(&c[k]);
    }
    us = (MPI_Wtime() - t0) / (n / 10 * 10) * 1e6;
    if (rank == 0) printf("comm_burst_cost rounds=%d us_per_dup_free=%.1f\n", n / 10, us);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    sum = 0;
    for (int i = 0; i < n; i++) {
        MPI_Comm s;
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &s);
        int me, v, w = -1;
        MPI_Comm_rank(s, &me);
        v = i + me;
        MPI_Sendrecv(&v, 1, MPI_INT, (me + 1) % size, 0, &w, 1, MPI_INT, (me + size - 1) % size, 0, s,
                     MPI_STATUS_IGNORE);
        MPI_Comm_free(&s);
        sum += w;
    }
    us = (MPI_Wtime() - t0) / n * 1e6;
    if (rank == 0) printf("comm_split_cost iterations=%d sum=%ld us_per_iteration=%.1f\n", n, sum, us);
    MPI_Finalize();
    return 0;
}
