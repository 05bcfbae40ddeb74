/* A receive left posted on a freed communicator must never take a message of a later one.
 * Rank 0 posts a receive on a duplicate and frees the duplicate with the receive still
 * pending (case "pending"), or frees the request first (case "freed": MPI_Request_free of
 * an active receive); then duplicates are made and freed, and rank 1 sends two messages (1,
 * then 2) on a new duplicate. Rank 0 must receive 1 first: under the preload with the MPI
 * carrier, a later duplicate may reuse a freed one's private communicator, and a receive
 * still posted there would take the 1. The pending receive is cancelled at the end. (MPICH
 * 4.0 alone fails this: it reuses the freed communicator's context id at once, and the
 * pending receive takes the 1; Open MPI passes, and must under the preload too.)
 * Usage: plain_comm_dup_reuse pending|freed */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int stray = -1; /* the left receive's buffer: it may be written at any time */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int freed = argc > 1 && !strcmp(argv[1], "freed");
    MPI_Comm c, d, e;
    MPI_Request left = MPI_REQUEST_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    if (rank == 0) MPI_Irecv(&stray, 1, MPI_INT, 1, 0, c, &left);
    if (rank == 0 && freed) MPI_Request_free(&left);
    MPI_Comm_free(&c);
    for (int i = 0; i < 3; i++) { /* a freed duplicate's leftovers, then new ones */
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Barrier(d);
        MPI_Comm_free(&d);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &e);
    if (rank == 1) {
        for (int v = 1; v <= 2; v++) MPI_Send(&v, 1, MPI_INT, 0, 0, e);
    } else if (rank == 0) {
        int v = 0;
        MPI_Recv(&v, 1, MPI_INT, 1, 0, e, MPI_STATUS_IGNORE);
        if (v != 1) {
            printf("FAIL: the first message on the new duplicate was %d, expected 1 (the freed duplicate's receive "
                   "took it: left buffer %d)\n",
                   v, stray);
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Recv(&v, 1, MPI_INT, 1, 0, e, MPI_STATUS_IGNORE);
        if (v != 2) {
            printf("FAIL: second message %d, expected 2\n", v);
            bad = 1;
        }
        if (stray != -1) {
            printf("FAIL: the freed duplicate's receive was written (%d)\n", stray);
            bad = 1;
        }
        printf("result rank=0 messages=1,%d left_buffer=%d\n", v, stray);
        if (left != MPI_REQUEST_NULL) {
            MPI_Cancel(&left);
            MPI_Wait(&left, MPI_STATUS_IGNORE);
        }
    }
    MPI_Comm_free(&e);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf(bad ? "comm_dup_reuse: FAIL\n" : "comm_dup_reuse: ok\n");
    MPI_Finalize();
    return bad;
}
