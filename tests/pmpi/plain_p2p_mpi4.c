/* MPI-4's point-to-point calls beside the int-count ones on one communicator (run plainly
 * and preloaded by run_preload.sh, which compares the "result" lines). Under CLAMPI_MATCH the
 * preload carries the int calls on its own copy of the communicator; a large-count call
 * (MPI_Irecv_c, ...) or MPI_Isendrecv that it did not carry would use the program's
 * communicator and never match the other kind: a receive would get nothing (a hang) or the
 * wrong message. Each part mixes the two kinds in both directions, in a ring:
 *   mixed     8 receives per rank, alternating MPI_Irecv and MPI_Irecv_c with distinct tags,
 *             the previous rank sends in reverse tag order with MPI_Send_c and MPI_Isend
 *   modes     MPI_Ssend_c, MPI_Issend_c, MPI_Rsend_c (after a barrier), MPI_Sendrecv_c,
 *             MPI_Sendrecv_replace_c, MPI_Bsend_c into MPI_Buffer_attach_c's buffer
 *   persist   MPI_Send_init_c / MPI_Recv_init_c started three times
 *   mprobe    MPI_Mprobe + MPI_Mrecv_c, MPI_Improbe + MPI_Imrecv_c
 *   isendrecv MPI_Isendrecv, MPI_Isendrecv_replace (and their _c forms): completed by
 *             MPI_Wait, an MPI_Test loop and MPI_Waitall beside another request
 *   big       counts above INT_MAX: a receive of INT_MAX + 5 bytes gets a 40-byte message;
 *             a send of INT_MAX + 5 elements of a zero-size type matches an empty receive
 * Usage: plain_p2p_mpi4 [ROUNDS] */
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, next, prev;

static void result(const char *what, int round, long a, long b) {
    printf("result rank=%d round=%d %s %ld %ld\n", rank, round, what, a, b);
}

static inline int count_of(MPI_Status *st) {
    int n = -1;
    MPI_Get_count(st, MPI_INT, &n);
    return n;
}

#ifdef CLAMPI_MPI_HAS_ISENDRECV
/* An MPI_Isendrecv's status is its receive's. MPICH's and Intel MPI's own call does not set
 * it (tests/mpi_bugs/mpich_isendrecv_status.c), so it is not part of the compared results:
 * checked here only with clampi loaded. */
static void isendrecv_status(const char *what, MPI_Status *st, int source, int tag, int count) {
    if (!dlsym(RTLD_DEFAULT, "CMPIX_Irecv")) return;
    if (st->MPI_SOURCE == source && st->MPI_TAG == tag && count_of(st) == count) return;
    fprintf(stderr, "rank %d: %s status source=%d tag=%d count=%d, expected %d %d %d\n", rank, what, st->MPI_SOURCE,
            st->MPI_TAG, count_of(st), source, tag, count);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#endif

#define TAGS 8
static void mixed(MPI_Comm comm, int round) {
    int got[TAGS];
    MPI_Request r[TAGS];
    for (int t = 0; t < TAGS; t++) {
        got[t] = -1;
#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_P2P
        if (t % 2) {
            MPI_Irecv_c(&got[t], 1, MPI_INT, t == TAGS - 1 ? MPI_ANY_SOURCE : prev, 10 + t, comm, &r[t]);
            continue;
        }
#endif
        MPI_Irecv(&got[t], 1, MPI_INT, prev, 10 + t, comm, &r[t]);
    }
    MPI_Request s[TAGS];
    int val[TAGS];
    for (int t = TAGS - 1; t >= 0; t--) {
        val[t] = 1000 * round + 10 * rank + t;
#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_P2P
        if (t % 3 == 0) {
            MPI_Isend_c(&val[t], 1, MPI_INT, next, 10 + t, comm, &s[t]);
            continue;
        }
#endif
        MPI_Isend(&val[t], 1, MPI_INT, next, 10 + t, comm, &s[t]);
    }
    MPI_Status st[TAGS];
    MPI_Waitall(TAGS, r, st);
    MPI_Status sst[TAGS];
    MPI_Waitall(TAGS, s, sst);
    for (int t = 0; t < TAGS; t++) result("mixed", round, got[t], 100 * st[t].MPI_TAG + st[t].MPI_SOURCE);
}

static void modes(MPI_Comm comm, int round) {
#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_P2P
    int v = 7 * round + rank, got = -1;
    MPI_Status st;
    MPI_Request q;
    /* synchronous: blocking and nonblocking large-count sends to int receives */
    MPI_Irecv(&got, 1, MPI_INT, prev, 30, comm, &q);
    MPI_Ssend_c(&v, 1, MPI_INT, next, 30, comm);
    MPI_Wait(&q, &st);
    result("ssend_c", round, got, count_of(&st));
    MPI_Irecv_c(&got, 1, MPI_INT, prev, 31, comm, &q);
    MPI_Request sq;
    MPI_Issend(&v, 1, MPI_INT, next, 31, comm, &sq);
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    MPI_Wait(&q, &st);
    result("issend", round, got, count_of(&st));
    /* ready mode: the receive is posted before the barrier */
    MPI_Irecv(&got, 1, MPI_INT, prev, 32, comm, &q);
    MPI_Barrier(comm);
    MPI_Rsend_c(&v, 1, MPI_INT, next, 32, comm);
    MPI_Wait(&q, &st);
    result("rsend_c", round, got, count_of(&st));
    /* sendrecv, both forms against each other */
    int back = -1;
    MPI_Sendrecv_c(&v, 1, MPI_INT, next, 33, &back, 1, MPI_INT, prev, 33, comm, &st);
    int back2 = -1;
    MPI_Sendrecv(&v, 1, MPI_INT, prev, 34, &back2, 1, MPI_INT, next, 34, comm, MPI_STATUS_IGNORE);
    result("sendrecv_c", round, back, back2);
    int inplace[2] = {v, -v};
    MPI_Sendrecv_replace_c(inplace, 2, MPI_INT, next, 35, prev, 35, comm, &st);
    result("sendrecv_replace_c", round, inplace[0] + inplace[1] * 1000, count_of(&st));
    /* buffered: a large-count buffer, a large-count buffered send to an int receive */
    int bsize = 0;
    MPI_Pack_size(1, MPI_INT, comm, &bsize);
    MPI_Count blen = bsize + MPI_BSEND_OVERHEAD;
    void *bbuf = malloc((size_t)blen);
    MPI_Buffer_attach_c(bbuf, blen);
    MPI_Irecv(&got, 1, MPI_INT, prev, 36, comm, &q);
    MPI_Bsend_c(&v, 1, MPI_INT, next, 36, comm);
    MPI_Wait(&q, &st);
    void *out;
    MPI_Count outlen = -1;
    MPI_Buffer_detach_c(&out, &outlen);
    result("bsend_c", round, got, out == bbuf && outlen == blen);
    free(bbuf);
#else
    (void)comm, (void)round;
#endif
}

static void persist(MPI_Comm comm, int round) {
#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_P2P
    int v = -1, got = -1;
    MPI_Request q[2];
    MPI_Recv_init_c(&got, 1, MPI_INT, prev, 40, comm, &q[0]);
    MPI_Send_init_c(&v, 1, MPI_INT, next, 40, comm, &q[1]);
    for (int k = 0; k < 3; k++) {
        v = 50 * round + 5 * rank + k;
        MPI_Startall(2, q);
        MPI_Status sts[2];
        MPI_Waitall(2, q, sts);
        result("persist_c", round, got, k);
    }
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
#else
    (void)comm, (void)round;
#endif
}

static void mprobe(MPI_Comm comm, int round) {
#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_P2P
    int v[3] = {round, rank, 9}, got[3] = {-1, -1, -1};
    MPI_Request s;
    MPI_Isend_c(v, 3, MPI_INT, next, 50, comm, &s);
    MPI_Message m;
    MPI_Status st;
    MPI_Mprobe(prev, 50, comm, &m, &st);
    MPI_Mrecv_c(got, 3, MPI_INT, &m, &st);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    result("mrecv_c", round, got[0] * 100 + got[1] * 10 + got[2], count_of(&st));
    MPI_Isend(v, 2, MPI_INT, next, 51, comm, &s);
    int flag = 0;
    while (!flag) MPI_Improbe(MPI_ANY_SOURCE, 51, comm, &flag, &m, &st);
    MPI_Request q;
    MPI_Imrecv_c(got, 3, MPI_INT, &m, &q);
    MPI_Wait(&q, &st);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    result("imrecv_c", round, got[0] * 100 + got[1] * 10, count_of(&st));
#else
    (void)comm, (void)round;
#endif
}

static void isendrecv(MPI_Comm comm, int round) {
#ifdef CLAMPI_MPI_HAS_ISENDRECV
    int v = 300 * round + rank, got = -1;
    MPI_Request q;
    MPI_Status st;
    /* against int sends and receives on the other side */
    MPI_Isendrecv(&v, 1, MPI_INT, next, 60, &got, 1, MPI_INT, MPI_ANY_SOURCE, 61, comm, &q);
    int g2 = -1;
    MPI_Request p[2];
    MPI_Irecv(&g2, 1, MPI_INT, prev, 60, comm, &p[0]);
    MPI_Isend(&v, 1, MPI_INT, prev, 61, comm, &p[1]);
    MPI_Wait(&q, &st);
    MPI_Status pst[2];
    MPI_Waitall(2, p, pst);
    isendrecv_status("isendrecv", &st, next, 61, 1);
    result("isendrecv", round, got, g2);
    /* replace, completed by a test loop */
    int buf[2] = {v, v + 1};
    MPI_Isendrecv_replace(buf, 2, MPI_INT, next, 62, prev, 62, comm, &q);
    int flag = 0;
    while (!flag) MPI_Test(&q, &flag, &st);
    isendrecv_status("isendrecv_replace", &st, prev, 62, 2);
    result("isendrecv_replace", round, buf[0], buf[1]);
#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_P2P
    /* the large-count forms, completed by MPI_Waitall beside an int receive */
    int a = -1, c = -1;
    MPI_Request w[2];
    MPI_Isendrecv_c(&v, 1, MPI_INT, next, 63, &a, 1, MPI_INT, prev, 63, comm, &w[0]);
    MPI_Irecv(&c, 1, MPI_INT, next, 64, comm, &w[1]);
    MPI_Send_c(&v, 1, MPI_INT, prev, 64, comm);
    MPI_Status sts[2];
    MPI_Waitall(2, w, sts);
    isendrecv_status("isendrecv_c", &sts[0], prev, 63, 1);
    result("isendrecv_c", round, a, c);
    int rb[3] = {v, 2 * v, 3 * v};
    MPI_Isendrecv_replace_c(rb, 3, MPI_INT, prev, 65, next, 65, comm, &q);
    MPI_Wait(&q, &st);
    isendrecv_status("isendrecv_replace_c", &st, next, 65, 3);
    result("isendrecv_replace_c", round, rb[0] + rb[1], rb[2]);
#endif
#else
    (void)comm, (void)round;
#endif
}

static void big(MPI_Comm comm, int round) {
#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_P2P
    const MPI_Count huge = (MPI_Count)INT_MAX + 5;
    /* a receive of more than INT_MAX bytes: only the message's 40 are written */
    char *buf = calloc(64, 1);
    MPI_Request q;
    MPI_Status st;
    MPI_Irecv_c(buf, huge, MPI_BYTE, prev, 70, comm, &q);
    char msg[40];
    for (int i = 0; i < 40; i++) msg[i] = (char)(rank + i + round);
    MPI_Send(msg, 40, MPI_BYTE, next, 70, comm);
    MPI_Wait(&q, &st);
    MPI_Count n = -1;
    MPI_Get_count_c(&st, MPI_BYTE, &n);
    long sum = 0;
    for (int i = 0; i < 64; i++) sum += buf[i];
    result("big_recv", round, (long)n, sum);
    free(buf);
    /* a send of more than INT_MAX elements of an empty type */
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    int got = -1;
    MPI_Irecv(&got, 0, MPI_INT, prev, 71, comm, &q);
    MPI_Send_c(&got, huge, empty, next, 71, comm);
    MPI_Wait(&q, &st);
    MPI_Type_free(&empty);
    result("big_send", round, count_of(&st), 100 * st.MPI_TAG + st.MPI_SOURCE);
#else
    (void)comm, (void)round;
#endif
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int round = 0; round < rounds; round++) {
        MPI_Comm comm = round % 2 ? dup : MPI_COMM_WORLD;
        mixed(comm, round);
        modes(comm, round);
        persist(comm, round);
        mprobe(comm, round);
        isendrecv(comm, round);
        big(comm, round);
    }
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
