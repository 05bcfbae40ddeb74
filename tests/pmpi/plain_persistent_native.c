/* Persistent receives at depth 0 and behind deep queues. A plain MPI program that also
 * defines PMPI_Irecv and PMPI_Start: the executable's definitions come first in symbol
 * lookup, so the preload's calls to them land here, are counted, and go on to the MPI
 * library (RTLD_NEXT).
 *
 * 1. Rank 1 starts one persistent receive N times, rank 0 one persistent send; rank 1
 *    completes each start with another call (Wait, a Test loop, Waitall beside a null
 *    handle, Waitany, Waitsome, Testall). Under CLAMPI_MATCH on the MPI carrier each start
 *    is MPI's own start of a persistent receive on the duplicate: no MPI_Irecv per start.
 * 2. Rank 1 posts 300 receives of one tag, then starts a persistent receive of the same
 *    tag: clampi's queue holds the deep ones, so that start is clampi's receive, and it
 *    must get the 301st message (posting order), the 300 before it the first 300.
 * 3. Depth 0 again: the persistent receive still gets its messages, cancelled once.
 * 4. A persistent receive and send on a duplicate the program then freed, started three
 *    times while a new duplicate (which may get the freed one's handle value) exchanges
 *    messages of the same tag: each side gets its own (with the argument "freed"; on the
 *    UCX carrier a persistent request started after its communicator was freed fails).
 *
 * Prints "result ..." (compared with plain MPI's) and, on rank 1,
 * "persistent rank=1 starts=N irecv=A start=B order=ok|bad".
 *   plain_persistent_native N [freed] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long irecvs, starts;

int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req) {
    static int (*next)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    if (!next)
        next = (int (*)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))dlsym(RTLD_NEXT, "PMPI_Irecv");
    irecvs++;
    return next(buf, count, type, source, tag, comm, req);
}

int PMPI_Start(MPI_Request *req) {
    static int (*next)(MPI_Request *);
    if (!next) next = (int (*)(MPI_Request *))dlsym(RTLD_NEXT, "PMPI_Start");
    starts++;
    return next(req);
}

#define DEEP 300

static void complete(MPI_Request *q, int k) { /* the persistent receive's start k finished, one call of six */
    MPI_Request pair[2] = {MPI_REQUEST_NULL, *q};
    int idx, flag = 0, out, ind[2];
    switch (k % 6) {
    case 0: MPI_Wait(q, MPI_STATUS_IGNORE); break;
    case 1:
        while (!flag) MPI_Test(q, &flag, MPI_STATUS_IGNORE);
        break;
    case 2: MPI_Waitall(2, pair, MPI_STATUSES_IGNORE); break;
    case 3: MPI_Waitany(2, pair, &idx, MPI_STATUS_IGNORE); break;
    case 4: MPI_Waitsome(2, pair, &out, ind, MPI_STATUSES_IGNORE); break;
    default:
        while (!flag) MPI_Testall(2, pair, &flag, MPI_STATUSES_IGNORE);
        break;
    }
    if (k % 6 >= 2) *q = pair[1];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 600, freed = argc > 2 && strcmp(argv[2], "freed") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) MPI_Abort(MPI_COMM_WORLD, 1);
    long long sum = 0;
    int val = 0, order_ok = 1;
    MPI_Request q = MPI_REQUEST_NULL;
    if (rank == 0) MPI_Send_init(&val, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q);
    if (rank == 1) MPI_Recv_init(&val, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &q);
    long irecv0 = irecvs, start0 = starts;
    for (int k = 0; k < n; k++) { /* 1 */
        if (rank == 0) val = k;
        if (rank < 2) MPI_Start(&q);
        if (rank == 0) MPI_Wait(&q, MPI_STATUS_IGNORE);
        if (rank == 1) {
            complete(&q, k);
            sum += val;
            order_ok &= val == k;
        }
    }
    long irecv1 = irecvs - irecv0, start1 = starts - start0;
    MPI_Barrier(MPI_COMM_WORLD);
    int deep[DEEP + 1]; /* 2 */
    if (rank == 0) {
        for (int i = 0; i <= DEEP; i++) {
            deep[i] = i;
            MPI_Send(&deep[i], 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
        }
    } else if (rank == 1) {
        MPI_Request r[DEEP];
        for (int i = 0; i < DEEP; i++) MPI_Irecv(&deep[i], 1, MPI_INT, 0, 8, MPI_COMM_WORLD, &r[i]);
        MPI_Request p;
        MPI_Recv_init(&deep[DEEP], 1, MPI_INT, 0, 8, MPI_COMM_WORLD, &p);
        MPI_Start(&p);
        MPI_Waitall(DEEP, r, MPI_STATUSES_IGNORE);
        MPI_Wait(&p, MPI_STATUS_IGNORE);
        for (int i = 0; i <= DEEP; i++) order_ok &= deep[i] == i, sum += deep[i];
        MPI_Request_free(&p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 10; k++) { /* 3 */
        if (rank == 0) val = 1000 + k;
        if (rank < 2) MPI_Start(&q);
        if (rank == 0) MPI_Wait(&q, MPI_STATUS_IGNORE);
        if (rank == 1) {
            complete(&q, k);
            order_ok &= val == 1000 + k;
            sum += val;
        }
    }
    if (rank == 1) { /* a start cancelled: nothing was sent for it */
        MPI_Status st;
        int cancelled = 0;
        MPI_Start(&q);
        MPI_Cancel(&q);
        MPI_Wait(&q, &st);
        MPI_Test_cancelled(&st, &cancelled);
        sum += cancelled;
    }
    if (rank < 2) MPI_Request_free(&q);
    MPI_Comm gone, next; /* 4 */
    MPI_Comm_dup(MPI_COMM_WORLD, &gone);
    int pv = 0, x = 0, y = 0;
    if (rank == 0) MPI_Send_init(&pv, 1, MPI_INT, 1, 9, gone, &q);
    if (rank == 1) MPI_Recv_init(&pv, 1, MPI_INT, 0, 9, gone, &q);
    MPI_Comm_free(&gone);
    MPI_Comm_dup(MPI_COMM_WORLD, &next);
    for (int k = 0; k < (freed ? 3 : 0) && rank < 2; k++) {
        if (rank == 0) pv = 2000 + k, x = 3000 + k;
        MPI_Start(&q);
        if (rank == 0) MPI_Send(&x, 1, MPI_INT, 1, 9, next);
        if (rank == 1) MPI_Recv(&y, 1, MPI_INT, 0, 9, next, MPI_STATUS_IGNORE);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        if (rank == 1) order_ok &= pv == 2000 + k && y == 3000 + k, sum += pv + y;
    }
    if (rank < 2) MPI_Request_free(&q);
    MPI_Comm_free(&next);
    printf("result rank=%d sum=%lld order=%s\n", rank, sum, order_ok ? "ok" : "bad");
    if (rank == 1)
        printf("persistent rank=1 starts=%d irecv=%ld start=%ld order=%s\n", n, irecv1, start1,
               order_ok ? "ok" : "bad");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
