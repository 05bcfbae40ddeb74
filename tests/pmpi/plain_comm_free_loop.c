/* A plain MPI program that creates and frees more communicators than clampi has context ids
 * (1,024), each carrying a ring exchange; every other one is freed before its requests
 * complete, some with a 64 KiB (rendezvous) message still on the way. Under the preload with
 * CLAMPI_MATCH every duplicate is clampi's, so freed communicators must give their ids back
 * once their operations are over, and the data must arrive as plainly.
 * Usage: plain_comm_free_loop [ITERATIONS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BIG (16 * 1024) /* ints: 64 KiB */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 1200;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *out = malloc(sizeof(int) * BIG), *in = malloc(sizeof(int) * BIG);
    long sum = 0;
    for (int i = 0; i < n; i++) {
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        int count = i % 7 == 0 ? BIG : 1;
        for (int k = 0; k < count; k++) out[k] = i * 31 + rank + k;
        MPI_Request r[2];
        MPI_Irecv(in, count, MPI_INT, (rank + size - 1) % size, i % 5, d, &r[0]);
        MPI_Isend(out, count, MPI_INT, (rank + 1) % size, i % 5, d, &r[1]);
        if (i % 2) {
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            MPI_Comm_free(&d);
        } else {
            MPI_Comm_free(&d);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        }
        for (int k = 0; k < count; k++) sum += in[k];
    }
    printf("result comm_free_loop rank=%d iterations=%d sum=%ld\n", rank, n, sum);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(200000); /* the result lines out before the preload's stats lines at MPI_Finalize */
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
