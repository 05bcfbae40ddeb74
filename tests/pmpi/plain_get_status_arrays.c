/* MPI 4.1's MPI_Request_get_status_all/_any/_some on synchronous sends to self that nobody
 * has received yet: none may say complete; after the receives, all must. Under CLAMPI_MATCH
 * the requests are clampi's, whose handles MPI's own calls would take for inactive
 * persistent requests (complete). On an MPI before 4.1 the calls do not exist. */
#include "plain_check.h"

#define N 4
static int me;

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    int sbuf[N], rbuf[N], flag = -1, index = -2, outcount = -2, indices[N];
    MPI_Request req[N];
    for (int i = 0; i < N; i++) {
        sbuf[i] = 10 * me + i;
        CHECK(MPI_Issend(&sbuf[i], 1, MPI_INT, me, i, MPI_COMM_WORLD, &req[i]));
    }
    int pending_ok = 1;
    CHECK(MPI_Request_get_status_all(N, req, &flag, MPI_STATUSES_IGNORE));
    pending_ok &= flag == 0;
    CHECK(MPI_Request_get_status_any(N, req, &index, &flag, MPI_STATUS_IGNORE));
    pending_ok &= flag == 0;
    CHECK(MPI_Request_get_status_some(N, req, &outcount, indices, MPI_STATUSES_IGNORE));
    pending_ok &= outcount == 0;
    for (int i = N - 1; i >= 0; i--) CHECK(MPI_Recv(&rbuf[i], 1, MPI_INT, me, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    /* a synchronous send completes once matched: poll until every request says so */
    MPI_Status st[N];
    do { CHECK(MPI_Request_get_status_all(N, req, &flag, st)); } while (!flag);
    int done_ok = 1;
    for (int i = 0; i < N; i++) done_ok &= rbuf[i] == 10 * me + i;
    CHECK(MPI_Request_get_status_any(N, req, &index, &flag, MPI_STATUS_IGNORE));
    done_ok &= flag == 1 && index >= 0 && index < N;
    CHECK(MPI_Request_get_status_some(N, req, &outcount, indices, MPI_STATUSES_IGNORE));
    done_ok &= outcount == N;
    CHECK(MPI_Waitall(N, req, MPI_STATUSES_IGNORE));
    printf("result get_status_arrays rank=%d pending_ok=%d done_ok=%d\n", me, pending_ok, done_ok);
#else
    int v = me, w = -1; /* one message, so that the run shows clampi carried something */
    CHECK(MPI_Sendrecv(&v, 1, MPI_INT, me, 0, &w, 1, MPI_INT, me, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    printf("result get_status_arrays rank=%d mpi_before_4_1\n", me);
#endif
    MPI_Finalize();
    return 0;
}
