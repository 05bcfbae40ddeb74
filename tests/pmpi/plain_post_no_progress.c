/* Posting a nonblocking receive or send does not drive clampi's progress (preloaded, with
 * CLAMPI_MATCH and either carrier). The reason is bandwidth, not semantics: a window of
 * large messages (osu_bibw: 64 receives, then 64 sends, then a wait) whose receives took
 * messages while they were posted copied the peer's data before this rank's own sends went
 * out, and the two ranks' copies ran one after the other instead of at once: half of plain
 * MPI's bidirectional bandwidth (docs/matching.md, "Windows of large messages").
 *
 * Rank 1 sends N messages to rank 0 before rank 0 posts any receive; rank 0 then posts N
 * receives (all but the native depth in clampi's queue on the MPI carrier) and N sends, and
 * counts, through tests/support/count_progress.c preloaded after clampi, the calls clampi
 * made meanwhile, in the posting thread, to take messages (PMPI_Improbe) or to drive UCX
 * (ucp_worker_progress): both must be 0, and the waits of the three rounds must make some
 * (the counting works). The data are checked after MPI_Waitall. Without the counting
 * library (a plain run) only the data are checked; with clampi but without it the test
 * fails. */
#include "../support/count_progress.h"
#include <stdio.h>
#include <string.h>

#define N 64
#define LEN 256

int main(int argc, char **argv) {
    int rank = clampi_init_two_ranks(&argc, &argv), bad = 0;
    clampi_progress_counts_fn counts = clampi_find_progress_counts();
    int preloaded = dlsym(RTLD_DEFAULT, "CMPIX_Irecv") != NULL;
    static int in[N][LEN], out[N][LEN];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < LEN; j++) out[i][j] = rank * 1000000 + i * 1000 + j;
    MPI_Request rq[N], sq[N];
    unsigned long waited = 0; /* counted calls the waits made */
    static MPI_Status st[N];  /* not MPI_STATUSES_IGNORE: MPICH's (void *)1 warns at -O2 */
    for (int round = 0; round < 3; round++) {
        if (rank == 1) { /* its messages reach rank 0 before rank 0 posts its receives */
            for (int i = 0; i < N; i++) MPI_Isend(out[i], LEN, MPI_INT, 0, i, MPI_COMM_WORLD, sq + i);
            MPI_Waitall(N, sq, st);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            for (int i = 0; i < N; i++) MPI_Irecv(in[i], LEN, MPI_INT, 0, i, MPI_COMM_WORLD, rq + i);
            MPI_Waitall(N, rq, st);
        } else {
            unsigned long p0 = 0, w0 = 0, p1 = 0, w1 = 0;
            memset(in, 0, sizeof in);
            if (counts) counts(&p0, &w0);
            for (int i = 0; i < N; i++) MPI_Irecv(in[i], LEN, MPI_INT, 1, i, MPI_COMM_WORLD, rq + i);
            for (int i = 0; i < N; i++) MPI_Isend(out[i], LEN, MPI_INT, 1, i, MPI_COMM_WORLD, sq + i);
            if (counts) counts(&p1, &w1);
            MPI_Waitall(N, rq, st);
            MPI_Waitall(N, sq, st);
            unsigned long p2 = 0, w2 = 0;
            if (counts) counts(&p2, &w2);
            waited += (p2 - p1) + (w2 - w1);
            if (counts && (p1 != p0 || w1 != w0)) {
                printf("FAIL round %d: posting %d receives and %d sends made %lu PMPI_Improbe and %lu "
                       "ucp_worker_progress calls\n",
                       round, N, N, p1 - p0, w1 - w0);
                bad = 1;
            }
            for (int i = 0; i < N; i++)
                for (int j = 0; j < LEN; j++)
                    if (in[i][j] != 1000000 + i * 1000 + j) bad = 1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0 && counts && waited == 0) { /* the waits take the messages: the counting works */
        printf("FAIL: the waits made no counted call\n");
        bad = 1;
    }
    if (rank == 0 && preloaded && !counts) {
        printf("FAIL: clampi is preloaded but the counting library is not\n");
        bad = 1;
    }
    if (rank == 0)
        printf("%s: %d rounds, %s\n", bad ? "FAIL" : "post_no_progress ok", 3,
               counts ? "counted" : "not counted (plain)");
    MPI_Finalize();
    return bad;
}
