/* Request-based notification and remote-completing requests on a UCX window.
 * Rank 0 is the target: it waits with MPI_Waitany on notify requests for every peer's ids
 * mixed with ordinary MPI_Irecv requests; whenever a notify request completes, the data of
 * the put that carried its id must already be in rank 0's memory. One notification arrives
 * before its request exists (the request completes at once). CMPIX_Rrput / Rraccumulate /
 * Rrget_accumulate: once MPI_Wait returns, the target sees the data (checked after a
 * message, with no flush in between). argv[1]: clampi_progress value (default none: the
 * target's progress then comes only from its MPI_Waitany through clampi's request hook). */
#include <string.h>

#include "mpi_util.h"

#define IDS 4
#define SLOT 16

/* With clampi_progress=none a rank progresses its UCX worker only inside clampi (on shared
 * memory UCX emulates small puts to registered memory through the target's progress): a
 * pending notify request does it whenever MPI tests it. */
static MPI_Request sentinel = MPI_REQUEST_NULL;
static void wait_progressing(MPI_Request *req, CMPI_Win w) {
    (void)w;
    int done = 0, unused;
    while (!done) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (!done) MPI_Test(&sentinel, &unused, MPI_STATUS_IGNORE);
    }
}
static void barrier_progressing(CMPI_Win w) {
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    wait_progressing(&r, w);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    MPI_Info_set(info, "clampi_progress", argc > 1 ? argv[1] : "none");
    int *mem;
    CMPI_Win w;
    const int words = n * IDS * SLOT + 8;
    CHECK_EQ_INT(CMPI_Win_allocate(words * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mem, &w), MPI_SUCCESS);
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
    memset(mem, 0, words * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);

    /* bad input */
    MPI_Request req = MPI_REQUEST_NULL;
    int x = 1;
    CHECK_CLASS(CMPIX_Win_notify_request(w, -1, &req), MPI_ERR_ARG);
    CHECK_CLASS(CMPIX_Win_notify_request(w, CMPIX_NOTIFY_MAX, &req), MPI_ERR_ARG);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK_CLASS(CMPIX_Put_notify(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, -3, w), MPI_ERR_ARG);

    CHECK_EQ_INT(CMPIX_Win_notify_request(w, CMPIX_NOTIFY_MAX - 2, &sentinel), MPI_SUCCESS); /* never sent */
    CHECK_EQ_INT(CMPI_Win_lock_all(MPI_MODE_NOCHECK, w), MPI_SUCCESS); /* no lock word: no target CPU needed */
    /* an early notification: sent before rank 0 asks for it */
    if (rank == 1) {
        int v = 4242;
        CHECK_EQ_INT(CMPIX_Put_notify(&v, 1, MPI_INT, 0, words - 1, 1, MPI_INT, CMPIX_NOTIFY_MAX - 1, w), MPI_SUCCESS);
    }
    barrier_progressing(w);
    if (rank == 0 && n > 1) {
        MPI_Request early;
        MPI_Status st;
        CHECK_EQ_INT(CMPIX_Win_notify_request(w, CMPIX_NOTIFY_MAX - 1, &early), MPI_SUCCESS);
        CHECK_EQ_INT(MPI_Wait(&early, &st), MPI_SUCCESS);
        CHECK_EQ_INT(st.MPI_SOURCE, 1);
        CHECK_EQ_INT(mem[words - 1], 4242);
    }

    if (rank == 0) {
        /* notify requests for every (peer, id), plus one Irecv per peer, all in one Waitany */
        const int nn = (n - 1) * IDS, total = nn + (n - 1);
        MPI_Request reqs[total > 0 ? total : 1];
        int tokens[n];
        for (int p = 1; p < n; p++)
            for (int i = 0; i < IDS; i++)
                CHECK_EQ_INT(CMPIX_Win_notify_request(w, p * IDS + i, &reqs[(p - 1) * IDS + i]), MPI_SUCCESS);
        for (int p = 1; p < n; p++) MPI_Irecv(&tokens[p], 1, MPI_INT, p, 7, MPI_COMM_WORLD, &reqs[nn + p - 1]);
        MPI_Barrier(MPI_COMM_WORLD); /* requests are posted: peers may go */
        for (int done = 0; done < total; done++) {
            int idx;
            MPI_Status st;
            CHECK_EQ_INT(MPI_Waitany(total, reqs, &idx, &st), MPI_SUCCESS);
            CHECK(idx != MPI_UNDEFINED);
            if (idx < nn) {
                const int p = idx / IDS + 1, i = idx % IDS;
                CHECK_EQ_INT(st.MPI_SOURCE, p);
                for (int k = 0; k < SLOT; k++) CHECK_EQ_INT(mem[(p * IDS + i) * SLOT + k], p * 1000 + i * 100 + k);
            } else {
                CHECK_EQ_INT(tokens[idx - nn + 1], 99);
            }
        }
        barrier_progressing(w);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        int token = 99;
        MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD); /* mixed in with the notifications */
        for (int i = IDS - 1; i >= 0; i--) {                /* out of id order */
            int data[SLOT];
            for (int k = 0; k < SLOT; k++) data[k] = rank * 1000 + i * 100 + k;
            CHECK_EQ_INT(
                CMPIX_Put_notify(data, SLOT, MPI_INT, 0, (rank * IDS + i) * SLOT, SLOT, MPI_INT, rank * IDS + i, w),
                MPI_SUCCESS);
        }
        barrier_progressing(w);
    }

    /* remote-completing requests: rank r writes to rank (r+1)%n, tells it by message */
    const int to = (rank + 1) % n, from = (rank - 1 + n) % n;
    const int base = n * IDS * SLOT;
    int v = 500 + rank, one = 1, fetched = -1;
    MPI_Request rr[3];
    CHECK_EQ_INT(CMPIX_Rrput(&v, 1, MPI_INT, to, base, 1, MPI_INT, w, &rr[0]), MPI_SUCCESS);
    CHECK_EQ_INT(CMPIX_Rraccumulate(&one, 1, MPI_INT, to, base + 1, 1, MPI_INT, MPI_SUM, w, &rr[1]), MPI_SUCCESS);
    CHECK_EQ_INT(
        CMPIX_Rrget_accumulate(&one, 1, MPI_INT, &fetched, 1, MPI_INT, to, base + 2, 1, MPI_INT, MPI_SUM, w, &rr[2]),
        MPI_SUCCESS);
    /* the target must progress while we wait (clampi_progress=none): it waits on a request too */
    MPI_Request sreq, rreq;
    int token = 1, got = 0;
    MPI_Irecv(&got, 1, MPI_INT, from, 8, MPI_COMM_WORLD, &rreq);
    CHECK_EQ_INT(MPI_Waitall(3, rr, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    MPI_Isend(&token, 1, MPI_INT, to, 8, MPI_COMM_WORLD, &sreq);
    wait_progressing(&rreq, w);
    /* the origin's data is here (no flush, no unlock in between) */
    CHECK_EQ_INT(mem[base], 500 + from);
    CHECK_EQ_INT(mem[base + 1], 1);
    CHECK_EQ_INT(mem[base + 2], 1);
    CHECK_EQ_INT(fetched, 0);
    wait_progressing(&sreq, w);
    barrier_progressing(w);
    CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    /* a peer's unlock_all may still wait for our worker (TCP: put acknowledgements come from
     * the target's progress): a plain MPI_Barrier here would deadlock with progress=none */
    barrier_progressing(w);
    /* the sentinel was never notified: cancel it (completes as cancelled) */
    MPI_Status sst;
    int cancelled = 0;
    CHECK_EQ_INT(MPI_Cancel(&sentinel), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Wait(&sentinel, &sst), MPI_SUCCESS);
    MPI_Test_cancelled(&sst, &cancelled);
    CHECK(cancelled);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);

    /* MPI-backend window: no notifications (MPI_ERR_WIN), but the remote-completing calls
     * succeed (include/clampi/rmax.h): flushed in the call, the request already complete,
     * the data at the target before any unlock. */
    CMPI_Win m;
    int *mm;
    CHECK_EQ_INT(CMPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mm, &m), MPI_SUCCESS);
    MPI_Win_set_errhandler(m.win, MPI_ERRORS_RETURN);
    CHECK_CLASS(CMPIX_Win_notify_request(m, 0, &req), MPI_ERR_WIN);
    CHECK_CLASS(CMPIX_Put_notify(&v, 1, MPI_INT, to, 0, 1, MPI_INT, 0, m), MPI_ERR_WIN);
    mm[0] = mm[1] = mm[2] = 0;
    fetched = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ_INT(CMPI_Win_lock_all(0, m), MPI_SUCCESS);
    CHECK_EQ_INT(CMPIX_Rrput(&v, 1, MPI_INT, to, 0, 1, MPI_INT, m, &rr[0]), MPI_SUCCESS);
    CHECK_EQ_INT(CMPIX_Rraccumulate(&one, 1, MPI_INT, to, 1, 1, MPI_INT, MPI_SUM, m, &rr[1]), MPI_SUCCESS);
    CHECK_EQ_INT(CMPIX_Rrget_accumulate(&one, 1, MPI_INT, &fetched, 1, MPI_INT, to, 2, 1, MPI_INT, MPI_SUM, m, &rr[2]),
                 MPI_SUCCESS);
    for (int i = 0; i < 3; i++) { /* returned complete */
        int done = 0;
        CHECK_EQ_INT(MPI_Test(&rr[i], &done, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(done);
    }
    CHECK_EQ_INT(fetched, 0);
    MPI_Sendrecv(&token, 1, MPI_INT, to, 9, &got, 1, MPI_INT, from, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ_INT(CMPI_Win_sync(m), MPI_SUCCESS);
    CHECK_EQ_INT(mm[0], 500 + from); /* complete at the target: no flush, no unlock yet */
    CHECK_EQ_INT(mm[1], 1);
    CHECK_EQ_INT(mm[2], 1);
    CHECK_EQ_INT(CMPI_Win_unlock_all(m), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ_INT(mm[0], 500 + from);
    CHECK_EQ_INT(CMPI_Win_free(&m), MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Finalize();
    if (rank == 0) printf("test_notify: ok (%d ranks)\n", n);
    return 0;
}
