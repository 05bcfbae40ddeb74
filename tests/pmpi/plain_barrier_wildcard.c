/* A wildcard receive posted before MPI_Barrier gets the program's message, never one of the
 * barrier's own (run plainly and preloaded by run_preload.sh, which compares the "result"
 * lines). Under the MPI carrier clampi's barrier is empty messages on the program's
 * communicator, where the program's own point-to-point never travels (clampi carries it on
 * a copy): an MPI-4 large-count receive (MPI_Irecv_c) must travel there too, or it would
 * take the barrier's messages. Each
 * round: every rank posts a wildcard receive, two barriers, then sends its value to the next
 * rank (and a carried MPI_Sendrecv after it); a barrier message taken by the receive shows
 * as a wrong source, tag or count (or the barrier, short of that message, never returns).
 * Usage: plain_barrier_wildcard [ROUNDS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 5;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int next = (rank + 1) % size;
    for (int round = 0; round < rounds; round++) {
        int got = -1, value = 100 * round + rank, count = -1;
        MPI_Request r;
        MPI_Status st;
#if MPI_VERSION >= 4
        MPI_Irecv_c(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
#else
        MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
#endif
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
#if MPI_VERSION >= 4
        MPI_Send_c(&value, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
#else
        MPI_Send(&value, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
#endif
        MPI_Wait(&r, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        printf("result rank=%d round=%d got=%d source=%d tag=%d count=%d\n", rank, round, got, st.MPI_SOURCE,
               st.MPI_TAG, count);
        /* and a message the preload carries, after the wildcard receive is complete */
        int back = -1;
        MPI_Sendrecv(&value, 1, MPI_INT, next, 8, &back, 1, MPI_INT, (rank + size - 1) % size, 8, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        printf("result rank=%d round=%d sendrecv=%d\n", rank, round, back);
    }
    MPI_Finalize();
    return 0;
}
