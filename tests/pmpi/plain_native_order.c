/* Probes and MPI_Sendrecv keep MPI's matching order (a plain MPI program, 2 ranks; rank 0
 * sends, rank 1 receives the later messages with a probe (round 0) or MPI_Sendrecv (round 1)):
 *   posted: a receive posted before a message was sent gets it, not a later probe or
 *           exchange (X to the receive, Y to the probe or exchange);
 *   taken:  messages that arrived before a later one are received first, wherever they wait
 *           (A, B while a receive of another tag was pending, then D: A, B, D in that order);
 *   null:   MPI_Mprobe(MPI_PROC_NULL) gives MPI_MESSAGE_NO_PROC, whose receive is empty;
 *   depth 0: ping-pongs of 100 messages, each received with MPI_Mprobe + MPI_Mrecv, then 100
 *           exchanges with MPI_Sendrecv; the program also defines PMPI_Mprobe, PMPI_Improbe
 *           and PMPI_Sendrecv, so that the preload's calls to them are counted here
 *           ("native rank=1 probes=100 pmpi_mprobe=M pmpi_improbe=I exchanges=100 pmpi_sendrecv=S");
 *           then a persistent send started 100 times; PMPI_Send_init to a rank is counted
 *           ("persistent rank=0 starts=100 pmpi_send_init_to_a_rank=N": 1 where it is MPI's own).
 * Prints what rank 1 received; exits non-zero on a wrong order. Under the preload on the
 * MPI carrier a probe or exchange is MPI's own only while clampi holds nothing of the
 * communicator; with CLAMPI_MATCH_NATIVE_DEPTH=0 every nonblocking receive is clampi's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

static long pmpi_mprobes, pmpi_improbes, pmpi_sendrecvs;

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    static int (*next)(int, int, MPI_Comm, MPI_Message *, MPI_Status *);
    if (!next) next = (int (*)(int, int, MPI_Comm, MPI_Message *, MPI_Status *))dlsym(RTLD_NEXT, "PMPI_Mprobe");
    pmpi_mprobes++;
    return next(source, tag, comm, message, status);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) {
    static int (*next)(int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *);
    if (!next) next = (int (*)(int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *))dlsym(RTLD_NEXT, "PMPI_Improbe");
    pmpi_improbes++;
    return next(source, tag, comm, flag, message, status);
}

static long pmpi_send_inits; /* to a rank (clampi's own persistent handles are for MPI_PROC_NULL) */

int PMPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    static int (*next)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    if (!next)
        next = (int (*)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))dlsym(RTLD_NEXT,
                                                                                                  "PMPI_Send_init");
    if (dest != MPI_PROC_NULL) pmpi_send_inits++;
    return next(buf, count, type, dest, tag, comm, request);
}

typedef int sendrecv_fn(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype, int, int, MPI_Comm,
                        MPI_Status *);
int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                  MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status) {
    static sendrecv_fn *next;
    if (!next) next = (sendrecv_fn *)dlsym(RTLD_NEXT, "PMPI_Sendrecv");
    pmpi_sendrecvs++;
    return next(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}

enum { TAG_READY = 100, TAG_GO = 101, TAG_SR = 102 };

static int bad;

static void expect(const char *what, int got, int want) {
    printf("result %s %d\n", what, got);
    if (got != want) {
        fprintf(stderr, "FAIL: %s %d, want %d\n", what, got, want);
        bad++;
    }
}

/* The next message of tag from rank 0: how 0 MPI_Improbe loop, 1 MPI_Mprobe (then
 * MPI_Mrecv), 2 MPI_Sendrecv (sending an empty message of TAG_SR to rank 0) */
static int got(int tag, int how) {
    MPI_Message m;
    MPI_Status st;
    int v = -1, flag = 0;
    if (how == 2) {
        MPI_Sendrecv(NULL, 0, MPI_INT, 0, TAG_SR, &v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &st);
    } else {
        if (how == 1)
            MPI_Mprobe(0, tag, MPI_COMM_WORLD, &m, &st);
        else
            while (!flag) MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &m, &st);
        MPI_Mrecv(&v, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
    }
    if (st.MPI_SOURCE != 0 || st.MPI_TAG != tag)
        bad++, fprintf(stderr, "FAIL: status %d %d\n", st.MPI_SOURCE, st.MPI_TAG);
    return v;
}

static void sender(int round) {
    int v[] = {111, 222, 1, 2, 3, 4};
    MPI_Recv(NULL, 0, MPI_INT, 1, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v[0], 1, MPI_INT, 1, 1, MPI_COMM_WORLD); /* X */
    MPI_Send(&v[1], 1, MPI_INT, 1, 1, MPI_COMM_WORLD); /* Y */
    MPI_Recv(NULL, 0, MPI_INT, 1, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v[2], 1, MPI_INT, 1, 2, MPI_COMM_WORLD);  /* A */
    MPI_Send(&v[3], 1, MPI_INT, 1, 2, MPI_COMM_WORLD);  /* B */
    MPI_Send(&v[4], 1, MPI_INT, 1, 50, MPI_COMM_WORLD); /* C, for the pending receive */
    MPI_Recv(NULL, 0, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v[5], 1, MPI_INT, 1, 2, MPI_COMM_WORLD); /* D */
    for (int i = 0; round == 1 && i < 4; i++)          /* the exchanges' empty messages */
        MPI_Recv(NULL, 0, MPI_INT, 1, TAG_SR, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void receiver(int round) {
    const char *form = round ? "sendrecv" : "probe";
    char what[64];
    int x = -1, c = -1;
    MPI_Request r;
    MPI_Irecv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r);
    MPI_Send(NULL, 0, MPI_INT, 0, TAG_READY, MPI_COMM_WORLD);
    snprintf(what, sizeof what, "%s posted: later", form);
    expect(what, got(1, round ? 2 : 0), 222);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    snprintf(what, sizeof what, "%s posted: received", form);
    expect(what, x, 111);

    MPI_Irecv(&c, 1, MPI_INT, 0, 50, MPI_COMM_WORLD, &r);
    MPI_Send(NULL, 0, MPI_INT, 0, TAG_READY, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE); /* A and B arrived before C */
    expect("taken: received", c, 3);
    MPI_Send(NULL, 0, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD);
    int want[] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        snprintf(what, sizeof what, "%s taken: %d", form, i);
        expect(what, got(2, round ? 2 : i % 2 == 0), want[i]);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, one = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int round = 0; round < 2; round++) {
        if (rank == 0)
            sender(round);
        else
            receiver(round);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 1) {
        MPI_Message m;
        MPI_Status st;
        MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &st);
        expect("null: no proc", m == MPI_MESSAGE_NO_PROC, 1);
        MPI_Mrecv(&one, 1, MPI_INT, &m, &st);
        int n = -1;
        MPI_Get_count(&st, MPI_INT, &n);
        expect("null: source", st.MPI_SOURCE == MPI_PROC_NULL && n == 0 && one == 1, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long m0 = pmpi_mprobes, i0 = pmpi_improbes, s0 = pmpi_sendrecvs, sum = 0;
    for (int i = 0; i < 100; i++) {
        int v = i;
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Message m;
            MPI_Mprobe(0, 7, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
            MPI_Mrecv(&v, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
            sum += v;
            MPI_Send(NULL, 0, MPI_INT, 0, 8, MPI_COMM_WORLD);
        }
    }
    for (int i = 0; i < 100; i++) {
        int v = rank * 1000 + i, w = -1;
        MPI_Sendrecv(&v, 1, MPI_INT, 1 - rank, 9, &w, 1, MPI_INT, 1 - rank, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum += rank ? w : 0;
    }
    MPI_Request ps; /* a persistent send, started 100 times */
    int pv = 0, got_sum = 0;
    if (rank == 0) MPI_Send_init(&pv, 1, MPI_INT, 1, 11, MPI_COMM_WORLD, &ps);
    for (int i = 0; i < 100; i++) {
        if (rank == 0) {
            pv = i;
            MPI_Start(&ps);
            MPI_Wait(&ps, MPI_STATUS_IGNORE);
        } else {
            int w = -1;
            MPI_Recv(&w, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            got_sum += w;
        }
    }
    if (rank == 0) {
        MPI_Request_free(&ps);
        printf("persistent rank=0 starts=100 pmpi_send_init_to_a_rank=%ld\n", pmpi_send_inits);
    }
    if (rank == 1) {
        expect("persistent: sum", got_sum, 4950);
        expect("depth 0: sum", (int)sum, 4950 + 4950);
        printf("native rank=1 probes=100 pmpi_mprobe=%ld pmpi_improbe=%ld exchanges=100 pmpi_sendrecv=%ld\n",
               pmpi_mprobes - m0, pmpi_improbes - i0, pmpi_sendrecvs - s0);
    }
    MPI_Finalize();
    return bad != 0;
}
