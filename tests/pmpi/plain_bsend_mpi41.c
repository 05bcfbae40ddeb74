/* MPI-4.1's buffered-send calls (run plainly and preloaded by run_preload.sh, which compares
 * the "result" lines): MPI_BUFFER_AUTOMATIC, a buffer attached to a communicator
 * (MPI_Comm_attach_buffer: it serves that communicator's buffered sends before the
 * process's), MPI_Buffer_flush / MPI_Comm_flush_buffer and their nonblocking forms, detach
 * giving back what was attached, and MPI_Comm_free of a communicator with a buffer. Under
 * CLAMPI_MATCH clampi holds the buffers of its communicators; a buffered send it let MPI
 * make there would travel outside clampi's copy of the communicator and never match.
 * Each round, in a ring:
 *   automatic  the process's buffer is MPI_BUFFER_AUTOMATIC: 64 buffered sends of 1 KiB with
 *              no receive posted yet, MPI_Buffer_iflush, one more buffered send while the
 *              flush is pending, then the receives
 *   comm       a 4-message buffer on a duplicate (none on the process): MPI_Bsend fills it,
 *              MPI_Comm_iflush_buffer waits for them to leave, then it takes 4 more;
 *              MPI_Comm_detach_buffer gives the same address and size back
 *   freed      a communicator freed with its buffer attached and sends in it
 * (Without MPI-4.1's calls: one MPI_Sendrecv per round, the same on any MPI.)
 * Usage: plain_bsend_mpi41 [ROUNDS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, next, prev;

static void result(const char *what, int round, long a, long b) {
    printf("result rank=%d round=%d %s %ld %ld\n", rank, round, what, a, b);
}

#ifdef MPI_BUFFER_AUTOMATIC
#define N 64
#define LEN 256 /* ints: 1 KiB */
static int data[N][LEN], got[N][LEN];

static long sum_of(int n) {
    long s = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < LEN; i += 17) s += got[k][i];
    return s;
}

static void fill(int round, int n) {
    for (int k = 0; k < n; k++)
        for (int i = 0; i < LEN; i++) data[k][i] = round * 100000 + rank * 1000 + k * 10 + i % 7;
}

static void automatic(int round) {
    MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0);
    fill(round, N);
    for (int k = 0; k < N; k++) MPI_Bsend(data[k], LEN, MPI_INT, next, 100 + k, MPI_COMM_WORLD);
    MPI_Request flush;
    MPI_Buffer_iflush(&flush);
    /* one more buffered send while the flush is pending (its reap meets the flush's watch) */
    int extra = -1;
    MPI_Bsend(&round, 1, MPI_INT, next, 99, MPI_COMM_WORLD);
    MPI_Request r[N], rx;
    for (int k = 0; k < N; k++) MPI_Irecv(got[k], LEN, MPI_INT, prev, 100 + k, MPI_COMM_WORLD, &r[k]);
    MPI_Irecv(&extra, 1, MPI_INT, prev, 99, MPI_COMM_WORLD, &rx);
    MPI_Status st[N];
    MPI_Waitall(N, r, st);
    MPI_Wait(&flush, MPI_STATUS_IGNORE);
    MPI_Wait(&rx, MPI_STATUS_IGNORE);
    void *addr = NULL;
    int n = -1;
    MPI_Buffer_detach(&addr, &n);
    result("automatic", round, sum_of(N) + extra, addr == MPI_BUFFER_AUTOMATIC);
}

static void comm_buffer(int round) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int one = 0;
    MPI_Pack_size(LEN, MPI_INT, dup, &one);
    int bsize = 4 * (one + MPI_BSEND_OVERHEAD);
    void *buf = malloc((size_t)bsize);
    MPI_Comm_attach_buffer(dup, buf, bsize);
    fill(round, 8);
    MPI_Request r[8];
    for (int k = 0; k < 8; k++) MPI_Irecv(got[k], LEN, MPI_INT, prev, 200 + k, dup, &r[k]);
    for (int k = 0; k < 4; k++) MPI_Bsend(data[k], LEN, MPI_INT, next, 200 + k, dup);
    MPI_Request flush;
    MPI_Comm_iflush_buffer(dup, &flush);
    MPI_Wait(&flush, MPI_STATUS_IGNORE); /* the four have left: room for four more */
    for (int k = 4; k < 8; k++) MPI_Bsend(data[k], LEN, MPI_INT, next, 200 + k, dup);
    MPI_Comm_flush_buffer(dup);
    MPI_Status st[8];
    MPI_Waitall(8, r, st);
    void *addr = NULL;
    int n = -1;
    MPI_Comm_detach_buffer(dup, &addr, &n);
    result("comm", round, sum_of(8), addr == buf && n == bsize);
    /* a buffer left attached to a communicator being freed, with sends in it */
    MPI_Comm_attach_buffer(dup, buf, bsize);
    MPI_Request q;
    MPI_Irecv(got[0], LEN, MPI_INT, prev, 300, dup, &q);
    MPI_Bsend(data[1], LEN, MPI_INT, next, 300, dup);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Comm_free(&dup);
    MPI_Buffer_flush(); /* nothing attached to the process: returns */
    result("freed", round, got[0][3], got[0][LEN - 1]);
    free(buf);
}
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int round = 0; round < rounds; round++) {
#ifdef MPI_BUFFER_AUTOMATIC
        automatic(round);
        comm_buffer(round);
#endif
        int back = -1; /* one message each round on any MPI */
        MPI_Sendrecv(&round, 1, MPI_INT, next, 1, &back, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        result("round", round, size, back);
    }
    MPI_Finalize();
    return 0;
}
