/* How many MPI objects the preload makes for the handles of nonblocking clampi requests.
 * A plain MPI program that also defines PMPI_Recv_init and PMPI_Grequest_start (MPICH:
 * MPIX_Grequest_start): the
 * executable's definitions come first in symbol lookup, so the preload's calls to them
 * (request.c) land here, are counted, and go on to the MPI library (RTLD_NEXT).
 *
 * Rank 0 and 1 exchange N 1-int messages with MPI_Irecv + MPI_Isend + MPI_Waitall, then
 * each rank prints the sum of what it received ("result", compared with plain MPI's by
 * run_preload.sh) and "handles rank=R messages=N recv_init=A grequest=B sum=S".
 *   plain_handles N */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long recv_inits, grequests;

int PMPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req) {
    static int (*next)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    if (!next)
        next =
            (int (*)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))dlsym(RTLD_NEXT, "PMPI_Recv_init");
    recv_inits++;
    return next(buf, count, type, source, tag, comm, req);
}

int PMPI_Grequest_start(MPI_Grequest_query_function *q, MPI_Grequest_free_function *f, MPI_Grequest_cancel_function *c,
                        void *extra, MPI_Request *req) {
    static int (*next)(MPI_Grequest_query_function *, MPI_Grequest_free_function *, MPI_Grequest_cancel_function *,
                       void *, MPI_Request *);
    if (!next)
        next = (int (*)(MPI_Grequest_query_function *, MPI_Grequest_free_function *, MPI_Grequest_cancel_function *,
                        void *, MPI_Request *))dlsym(RTLD_NEXT, "PMPI_Grequest_start");
    grequests++;
    return next(q, f, c, extra, req);
}

#ifdef MPICH_VERSION /* MPICH's generalized requests with a poll function (what clampi uses there) */
int MPIX_Grequest_start(MPI_Grequest_query_function *q, MPI_Grequest_free_function *f, MPI_Grequest_cancel_function *c,
                        MPIX_Grequest_poll_function *p, MPIX_Grequest_wait_function *w, void *extra, MPI_Request *req) {
    static int (*next)(MPI_Grequest_query_function *, MPI_Grequest_free_function *, MPI_Grequest_cancel_function *,
                       MPIX_Grequest_poll_function *, MPIX_Grequest_wait_function *, void *, MPI_Request *);
    if (!next)
        next = (int (*)(MPI_Grequest_query_function *, MPI_Grequest_free_function *, MPI_Grequest_cancel_function *,
                        MPIX_Grequest_poll_function *, MPIX_Grequest_wait_function *, void *,
                        MPI_Request *))dlsym(RTLD_NEXT, "MPIX_Grequest_start");
    grequests++;
    return next(q, f, c, p, w, extra, req);
}
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 2000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long sum = 0;
    if (rank < 2 && size >= 2) {
        int peer = 1 - rank;
        for (int i = 0; i < n; i++) {
            int out = i * 2 + rank, in = -1;
            MPI_Request q[2];
            MPI_Status st[2];
            MPI_Irecv(&in, 1, MPI_INT, peer, i % 7, MPI_COMM_WORLD, &q[0]);
            MPI_Isend(&out, 1, MPI_INT, peer, i % 7, MPI_COMM_WORLD, &q[1]);
            MPI_Waitall(2, q, st);
            sum += in;
        }
    }
    long made0 = recv_inits, greq0 = grequests;    /* before MPI_Finalize's own */
    printf("result rank=%d sum=%ld\n", rank, sum); /* the same plainly and preloaded */
    printf("handles rank=%d messages=%d recv_init=%ld grequest=%ld sum=%ld\n", rank, rank < 2 ? n : 0, made0, greq0,
           sum);
    MPI_Finalize();
    return 0;
}
