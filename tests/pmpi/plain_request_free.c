/* Plain MPI (no clampi calls): MPI_Request_free of active requests (as MPICH's rqfree):
 * sends (standard small and large, synchronous, ready, buffered) freed right after they
 * start, received later by the peer, then a receive freed before its message arrives.
 * Prints "result" lines (what was received) that run_preload.sh requires to be identical
 * plainly and preloaded (CLAMPI_MATCH: clampi's requests are generalized requests, whose
 * handle MPICH frees at once). Usage: plain_request_free (np 2) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LARGE (256 * 1024)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int *large = calloc(LARGE, sizeof(int));
    int small[5] = {0};
    long sum = 0;
    for (int round = 0; round < 3; round++) {
        if (me == 0) {
            MPI_Request r;
            int bsize;
            MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &bsize);
            bsize += MPI_BSEND_OVERHEAD + 1000;
            void *bbuf = malloc((size_t)bsize);
            MPI_Buffer_attach(bbuf, bsize);
            for (int i = 0; i < 5; i++) small[i] = 100 * round + i;
            for (int i = 0; i < LARGE; i++) large[i] = round + i;
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Isend(&small[0], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
            MPI_Request_free(&r);
            MPI_Ibsend(&small[1], 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r);
            MPI_Request_free(&r);
            MPI_Issend(&small[2], 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &r);
            MPI_Request_free(&r);
            MPI_Irsend(&small[3], 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &r);
            MPI_Request_free(&r);
            MPI_Isend(large, LARGE, MPI_INT, 1, 4, MPI_COMM_WORLD, &r);
            MPI_Request_free(&r);
            MPI_Send(&small[4], 1, MPI_INT, 1, 5, MPI_COMM_WORLD); /* after the others (non-overtaking) */
            MPI_Barrier(MPI_COMM_WORLD);                           /* the peer has everything: the buffers may change */
            MPI_Buffer_detach(&bbuf, &bsize);
            free(bbuf);
        } else if (me == 1) {
            MPI_Request r[6];
            int got[5] = {-1, -1, -1, -1, -1};
            for (int i = 0; i < 4; i++) MPI_Irecv(&got[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, &r[i]);
            MPI_Irecv(large, LARGE, MPI_INT, 0, 4, MPI_COMM_WORLD, &r[4]);
            MPI_Barrier(MPI_COMM_WORLD); /* receives posted: the ready send is legal */
            MPI_Status st[6];
            MPI_Waitall(5, r, st);
            MPI_Recv(&got[4], 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
            for (int i = 0; i < 5; i++) sum += got[i];
            for (int i = 0; i < LARGE; i += 4099) sum += large[i];
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    /* a receive freed before its message comes: the message still lands in the buffer */
    int late = -1;
    if (me == 1) {
        MPI_Request r;
        MPI_Irecv(&late, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) MPI_Send(&np, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    if (me == 1) {
        int flag = 0;
        double t0 = MPI_Wtime();
        while (*(volatile int *)&late == -1 && MPI_Wtime() - t0 < 20) /* completes in the background */
            MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        printf("result rank=1 sum=%ld late=%d\n", sum, late);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(large);
    MPI_Finalize();
    return 0;
}
