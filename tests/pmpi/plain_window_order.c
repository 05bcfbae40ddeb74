/* The MPI carrier's native depth follows the order receives match in (preloaded with
 * CLAMPI_MATCH_CARRIER=mpi and tests/support/count_progress.c after clampi; see
 * src/msg/carrier_mpi.c, "The native depth"). Rank 0 sends, rank 1 receives, in phases:
 *
 *  A. WINDOWS windows of N in-order receives (osu_bw's shape). clampi's receives match at the
 *     head of its queue, so the native depth grows until a whole window stays in MPI's own
 *     queue: the last windows make no PMPI_Improbe call at all.
 *  B. DEEP receives with tags 0..DEEP-1, more than the grown depth, the messages sent in
 *     reverse tag order: clampi's receives match deep in its queue.
 *  C. One window as in A: the depth fell back, so this window's receives beyond the base
 *     depth wait in clampi's queue and are taken with PMPI_Improbe.
 *  D. Windows as in A again: the depth grows back.
 *  E. N receives with tags 0..N-1, all in MPI's queue now, the messages sent in reverse
 *     order and each receive waited for (MPI_Wait, MPI_Test) in that order: MPI's receives complete out of
 *     posting order, so the depth falls back, and one more window takes messages through
 *     clampi.
 *  F. A receive that stays posted (a control message's, MPI_ANY_SOURCE) ahead of windows of
 *     N - 1 (with it, the whole grown depth): MPI's later receives complete before it, which
 *     costs one fall-back, not one per receive: the depth grows again and the last windows
 *     make no PMPI_Improbe call.
 *
 * Every payload is checked. Prints "window_order ok" with the counts, or FAIL. Without the
 * counting library (a plain run) only the data are checked. */
#include "../support/count_progress.h"
#include <stdio.h>
#include <string.h>

#define N 64
#define WINDOWS 12
#define DEEP 200

static int bad;

static void check(const int *buf, int want, const char *what, int i) {
    if (*buf != want && bad++ < 5) fprintf(stderr, "FAIL: %s message %d: %d, want %d\n", what, i, *buf, want);
}

/* Receives with tags 0..n-1 from rank 0, sent in reverse order (phases B and E); waited for
 * all at once, or one by one in the order the messages come. */
static void reversed(int rank, int n, int one_by_one) {
    static int in[DEEP], out[DEEP];
    static MPI_Request q[DEEP];
    static MPI_Status st[DEEP];
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted first */
        for (int t = n - 1; t >= 0; t--) {
            out[t] = 500000 + t;
            MPI_Send(out + t, 1, MPI_INT, 1, t, MPI_COMM_WORLD);
        }
        /* the next window's messages must not arrive while rank 1 still waits here: its
         * waits would take them into clampi's unexpected queue */
        MPI_Recv(out, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return;
    }
    for (int t = 0; t < n; t++) {
        in[t] = -1;
        MPI_Irecv(in + t, 1, MPI_INT, 0, t, MPI_COMM_WORLD, q + t);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (one_by_one) /* alternately MPI_Wait and an MPI_Test loop: both forget a completed receive */
        for (int t = n - 1; t >= 0; t--) {
            int done = 0;
            if (t % 2)
                MPI_Wait(q + t, st + t);
            else
                while (!done) MPI_Test(q + t, &done, st + t);
        }
    else
        MPI_Waitall(n, q, st);
    for (int t = 0; t < n; t++) check(in + t, 500000 + t, "reversed", t);
    MPI_Send(in, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
}

/* One window of n receives from rank 0, tag 7, in order; returns the PMPI_Improbe calls
 * this thread made meanwhile (0 without the counting library). */
static unsigned long window(int rank, int w, int n, clampi_progress_counts_fn counts) {
    static int in[N], out[N];
    MPI_Request q[N];
    static MPI_Status st[N];
    unsigned long p0 = 0, p1 = 0, unused;
    int ack = 0;
    if (rank == 0) {
        for (int i = 0; i < n; i++) {
            out[i] = w * 1000 + i;
            MPI_Isend(out + i, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, q + i);
        }
        MPI_Waitall(n, q, st);
        MPI_Recv(&ack, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return 0;
    }
    if (counts) counts(&p0, &unused);
    for (int i = 0; i < n; i++) {
        in[i] = -1;
        MPI_Irecv(in + i, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, q + i);
    }
    MPI_Waitall(n, q, st);
    if (counts) counts(&p1, &unused);
    for (int i = 0; i < n; i++) check(in + i, w * 1000 + i, "window", i);
    MPI_Send(&ack, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    return p1 - p0;
}

int main(int argc, char **argv) {
    int rank = clampi_init_two_ranks(&argc, &argv);
    clampi_progress_counts_fn counts = clampi_find_progress_counts();
    unsigned long a_first = 0, a_last = 0, c = 0, d_last = 0;
    for (int w = 0; w < WINDOWS; w++) { /* A */
        unsigned long n = window(rank, w, N, counts);
        if (w == 0) a_first = n;
        if (w >= WINDOWS - 3) a_last += n;
    }
    reversed(rank, DEEP, 0);                          /* B */
    c = window(rank, WINDOWS, N, counts);             /* C */
    for (int w = WINDOWS + 1; w < 2 * WINDOWS; w++) { /* D */
        unsigned long n = window(rank, w, N, counts);
        if (w >= 2 * WINDOWS - 3) d_last += n;
    }
    reversed(rank, N, 1); /* E */
    unsigned long e = window(rank, 2 * WINDOWS, N, counts);
    unsigned long f_last = 0; /* F */
    int control = -1;
    MPI_Request cq = MPI_REQUEST_NULL;
    if (rank == 1) MPI_Irecv(&control, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &cq);
    for (int w = 0; w < WINDOWS; w++) {
        unsigned long n = window(rank, 3 * WINDOWS + w, N - 1, counts);
        if (w >= WINDOWS - 3) f_last += n;
    }
    if (rank == 0) {
        int v = 4242;
        MPI_Send(&v, 1, MPI_INT, 1, 99, MPI_COMM_WORLD);
    } else {
        MPI_Wait(&cq, MPI_STATUS_IGNORE);
        check(&control, 4242, "control", 0);
    }
    if (rank == 1 && counts) {
        if (a_first == 0) bad++, fprintf(stderr, "FAIL: the first window took no message through clampi\n");
        if (a_last != 0) bad++, fprintf(stderr, "FAIL: the last windows of A made %lu PMPI_Improbe calls\n", a_last);
        if (c == 0) bad++, fprintf(stderr, "FAIL: after out-of-order matches the window stayed in MPI's queue\n");
        if (d_last != 0) bad++, fprintf(stderr, "FAIL: the last windows of D made %lu PMPI_Improbe calls\n", d_last);
        if (f_last != 0)
            bad++, fprintf(stderr,
                           "FAIL: behind a receive that stays posted the last windows made %lu PMPI_Improbe calls\n",
                           f_last);
        if (e == 0)
            bad++, fprintf(stderr, "FAIL: after MPI's receives completed out of order the window stayed there\n");
    }
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 1 && !all)
        printf("window_order ok: improbes first=%lu last_A=%lu after_deep=%lu last_D=%lu after_reversed=%lu "
               "last_F=%lu%s\n",
               a_first, a_last, c, d_last, e, f_last, counts ? ", counted" : "");
    MPI_Finalize();
    return all != 0;
}
