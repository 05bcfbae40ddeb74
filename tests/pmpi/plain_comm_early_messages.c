/* Messages sent on a communicator the moment MPI_Comm_dup returns, before the peer has
 * returned from its own: 2,000 duplicates of MPI_COMM_WORLD, on each of which rank 0 sends
 * at once three messages (4 B, 1 KiB, 64 KiB: eager and rendezvous) and rank 1 takes them
 * with MPI_ANY_TAG (in sending order) and answers with one; every fifth time rank 0 enters
 * the duplicate late, so either rank may finish enabling first. Under the preload with
 * CLAMPI_MATCH every duplicate is clampi's: enabling must leave nothing a peer's early
 * message can miss (the UCX carrier routes by a context id agreed inside the dup; the MPI
 * carrier's messages wait on its own duplicate). Usage: plain_comm_early_messages [N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BIG (16 * 1024) /* ints: 64 KiB */

static void busy(int rounds) {
    volatile double x = 1;
    for (int i = 0; i < rounds; i++) x = x * 1.0000001 + 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0, n = argc > 1 ? atoi(argv[1]) : 2000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static int buf[3][BIG];
    const int len[3] = {1, 256, BIG};
    for (int i = 0; i < n && !bad; i++) {
        MPI_Comm d;
        if (rank == 0 && i % 5 == 0) busy(200000);
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        if (rank == 0) {
            MPI_Request r[3];
            for (int m = 0; m < 3; m++) {
                for (int k = 0; k < len[m]; k++) buf[m][k] = i * 7 + m * 3 + k;
                MPI_Isend(buf[m], len[m], MPI_INT, 1, m, d, &r[m]);
            }
            int reply = -1;
            MPI_Recv(&reply, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, MPI_STATUS_IGNORE);
            MPI_Status sts[3]; /* not MPI_STATUSES_IGNORE: MPICH's (void *)1 warns at -O2 */
            MPI_Waitall(3, r, sts);
            if (reply != i) bad = 1;
        } else {
            for (int m = 0; m < 3; m++) {
                MPI_Status st;
                int count = 0;
                MPI_Recv(buf[m], BIG, MPI_INT, 0, MPI_ANY_TAG, d, &st);
                MPI_Get_count(&st, MPI_INT, &count);
                if (st.MPI_TAG != m || count != len[m]) bad = 1;
                for (int k = 0; k < count && !bad; k++)
                    if (buf[m][k] != i * 7 + m * 3 + k) bad = 1;
            }
            MPI_Send(&i, 1, MPI_INT, 0, 9, d);
        }
        if (bad) printf("FAIL rank %d: duplicate %d: wrong message\n", rank, i);
        MPI_Comm_free(&d);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf(bad ? "result comm_early_messages FAIL\n" : "result comm_early_messages: %d duplicates ok\n", n);
    MPI_Finalize();
    return bad;
}
