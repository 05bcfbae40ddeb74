/* A plain MPI program (MPI only, no clampi) exercising every point-to-point call of MPI 3.1
 * on MPI_COMM_WORLD and on derived communicators: all send modes, blocking and not,
 * receives with MPI_ANY_SOURCE / MPI_ANY_TAG, random sizes and tags, derived datatypes,
 * probes and matched probes, cancel, persistent requests, MPI_Sendrecv(_replace),
 * buffered sends, MPI_PROC_NULL, every wait/test over mixes of requests, MPI_Get_count /
 * MPI_Get_elements / MPI_Test_cancelled. Every "result" line is independent of timing and
 * of the order in which wildcard receives match (sums over sets, per-sender order checks),
 * so run_preload.sh can require identical lines plainly and with CLAMPI_MATCH preloaded.
 * Usage: plain_p2p [ROUNDS] [info]
 *   info: the MPI_Comm_dup_with_info communicator gets the info key clampi_match=bins
 *   (meaningless to MPI; with the preload it puts that one communicator on clampi), and
 *   "note" lines (not results) say what MPI_Comm_get_info reports for clampi_match. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int wrank, wsize;
static unsigned long long rng = 12345;
static unsigned rnd(unsigned n) { /* the same sequence on every rank */
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(rng >> 33) % n;
}

static void result(const char *comm, const char *what, long long v) {
    printf("result rank=%d comm=%s %s=%lld\n", wrank, comm, what, v);
}

static void fill(int *b, int n, int seed) {
    for (int i = 0; i < n; i++) b[i] = seed * 1000003 + i * 7;
}

static long long sum(const int *b, int n) {
    long long s = 0;
    for (int i = 0; i < n; i++) s += (long long)b[i] * (i % 13 + 1);
    return s;
}

#define CHECK(call)                                                                          \
    do {                                                                                     \
        int rc_ = (call);                                                                    \
        if (rc_ != MPI_SUCCESS) {                                                            \
            printf("result rank=%d FAILED %s rc=%d line %d\n", wrank, #call, rc_, __LINE__); \
            fflush(stdout);                                                                  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                    \
        }                                                                                    \
    } while (0)

/* 1. A ring with every send mode and random sizes / tags, specific sources. */
static void ring(MPI_Comm comm, const char *name, int rounds) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int to = (r + 1) % n, from = (r + n - 1) % n;
    long long acc = 0;
    for (int k = 0; k < rounds; k++) {
        int cnt = (int)rnd(5000) + (k % 3 == 0 ? 4000 : 0); /* eager and rendezvous */
        int tag = (int)rnd(1000);
        int mode = (int)rnd(8);
        int *s = malloc(sizeof(int) * (size_t)cnt + 4), *d = calloc((size_t)cnt + 1, sizeof(int));
        fill(s, cnt, r * 100 + k);
        MPI_Request rq, sq;
        MPI_Status st;
        CHECK(MPI_Irecv(d, cnt, MPI_INT, from, tag, comm, &rq));
        MPI_Barrier(comm); /* every receive posted: ready mode is legal */
        switch (mode) {
        case 0: CHECK(MPI_Send(s, cnt, MPI_INT, to, tag, comm)); break;
        case 1: CHECK(MPI_Ssend(s, cnt, MPI_INT, to, tag, comm)); break;
        case 2: CHECK(MPI_Rsend(s, cnt, MPI_INT, to, tag, comm)); break;
        case 3:
            CHECK(MPI_Isend(s, cnt, MPI_INT, to, tag, comm, &sq));
            CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
            break;
        case 4:
            CHECK(MPI_Issend(s, cnt, MPI_INT, to, tag, comm, &sq));
            CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
            break;
        case 5:
            CHECK(MPI_Irsend(s, cnt, MPI_INT, to, tag, comm, &sq));
            CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
            break;
        case 6: CHECK(MPI_Bsend(s, cnt, MPI_INT, to, tag, comm)); break;
        default:
            CHECK(MPI_Ibsend(s, cnt, MPI_INT, to, tag, comm, &sq));
            CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
            break;
        }
        CHECK(MPI_Wait(&rq, &st));
        int got;
        MPI_Get_count(&st, MPI_INT, &got);
        acc += sum(d, cnt) + got * 3 + st.MPI_SOURCE * 5 + st.MPI_TAG;
        free(s);
        free(d);
    }
    result(name, "ring", acc);
}

/* 2. Many senders to rank 0 with wildcards: the set received, per-sender order. */
static void gather_any(MPI_Comm comm, const char *name, int rounds) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int per = rounds * 4;
    MPI_Barrier(comm); /* no other phase's message may meet the wildcard receives */
    if (r != 0) {
        MPI_Request *q = malloc(sizeof(MPI_Request) * (size_t)per);
        int **bufs = malloc(sizeof(int *) * (size_t)per);
        for (int k = 0; k < per; k++) {
            int cnt = (int)rnd(3000), tag = k; /* tags increase: order check */
            bufs[k] = malloc(sizeof(int) * (size_t)cnt + 4);
            fill(bufs[k], cnt, r * 7 + k);
            CHECK(MPI_Isend(bufs[k], cnt, MPI_INT, 0, tag, comm, &q[k]));
        }
        if (per > 0) CHECK(MPI_Waitall(per, q, MPI_STATUSES_IGNORE));
        for (int k = 0; k < per; k++) free(bufs[k]);
        free(bufs);
        free(q);
        result(name, "any_sent", per);
        MPI_Barrier(comm);
        return;
    }
    for (int k = 0; k < per; k++) (void)rnd(3000); /* keep rng in step with the senders */
    int total = per * (n - 1), done = 0, order_ok = 1;
    int *last = malloc(sizeof(int) * (size_t)n);
    int *bysrc = malloc(sizeof(int) * (size_t)total), *bytag = malloc(sizeof(int) * (size_t)total);
    for (int i = 0; i < n; i++) last[i] = -1;
    long long acc = 0;
    int *buf = malloc(sizeof(int) * 3000 * 4);
    /* a window of 4 wildcard receives, completed with Waitsome / Waitany / Testsome / Recv */
    MPI_Request q[4];
    int *b[4], seq[4]; /* receives match in posting order: check the order by seq, not slot */
    for (int i = 0; i < 4; i++) b[i] = buf + i * 3000, q[i] = MPI_REQUEST_NULL;
    int posted = 0;
    while (done < total) {
        for (int i = 0; i < 4 && posted < total; i++)
            if (q[i] == MPI_REQUEST_NULL) {
                CHECK(MPI_Irecv(b[i], 3000, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &q[i]));
                seq[i] = posted++;
            }
        int idx[4], outc = 0;
        MPI_Status st[4];
        switch (done % 3) {
        case 0: CHECK(MPI_Waitsome(4, q, &outc, idx, st)); break;
        case 1:
            CHECK(MPI_Waitany(4, q, &idx[0], &st[0]));
            outc = idx[0] == MPI_UNDEFINED ? 0 : 1;
            break;
        default: do { CHECK(MPI_Testsome(4, q, &outc, idx, st));
            } while (outc == 0);
            break;
        }
        for (int x = 0; x < outc; x++) /* by posting order */
            for (int y = x + 1; y < outc; y++)
                if (seq[idx[y]] < seq[idx[x]]) {
                    int t = idx[x];
                    idx[x] = idx[y], idx[y] = t;
                    MPI_Status ts = st[x];
                    st[x] = st[y], st[y] = ts;
                }
        for (int j = 0; j < outc; j++) {
            int got;
            MPI_Get_count(&st[j], MPI_INT, &got);
            int src = st[j].MPI_SOURCE;
            bysrc[seq[idx[j]]] = src, bytag[seq[idx[j]]] = st[j].MPI_TAG;
            acc += sum(b[idx[j]], got) + src * 11 + st[j].MPI_TAG * 3 + got;
            done++;
        }
    }
    for (int k = 0; k < total; k++) { /* in posting (= matching) order, per sender */
        if (bytag[k] <= last[bysrc[k]]) order_ok = 0;
        last[bysrc[k]] = bytag[k];
    }
    free(bysrc);
    free(bytag);
    free(buf);
    free(last);
    result(name, "any_sum", acc);
    result(name, "any_order_ok", order_ok);
    MPI_Barrier(comm);
}

/* 3. Probes and matched probes, with sizes learnt from the status; derived types. */
static void probes(MPI_Comm comm, const char *name) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int to = (r + 1) % n, from = (r + n - 1) % n;
    long long acc = 0;
    /* a vector type: every other int */
    MPI_Datatype vec;
    MPI_Type_vector(50, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int s[200], d[400];
    for (int i = 0; i < 200; i++) s[i] = r * 1000 + i;
    MPI_Request sq[4];
    CHECK(MPI_Isend(s, 1, vec, to, 21, comm, &sq[0]));
    CHECK(MPI_Isend(s, 37, MPI_INT, to, 22, comm, &sq[1]));
    CHECK(MPI_Isend(s, 2, vec, to, 23, comm, &sq[2]));
    CHECK(MPI_Isend(s, 11, MPI_INT, to, 24, comm, &sq[3]));
    MPI_Status st;
    int cnt, flag = 0;
    CHECK(MPI_Probe(from, 21, comm, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    memset(d, 0, sizeof d);
    CHECK(MPI_Recv(d, cnt, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, comm, &st));
    acc += sum(d, 100) + cnt;
    do { CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 22, comm, &flag, &st)); } while (!flag);
    MPI_Get_count(&st, MPI_INT, &cnt);
    memset(d, 0, sizeof d);
    CHECK(MPI_Recv(d, cnt, MPI_INT, st.MPI_SOURCE, 22, comm, MPI_STATUS_IGNORE));
    acc += sum(d, 100) + cnt * 2;
    MPI_Message m;
    CHECK(MPI_Mprobe(from, 23, comm, &m, &st));
    MPI_Get_count(&st, vec, &cnt);
    memset(d, 0, sizeof d);
    CHECK(MPI_Mrecv(d, cnt, vec, &m, &st));
    acc += sum(d, 400) + cnt * 3 + (m == MPI_MESSAGE_NULL);
    flag = 0;
    do { CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &m, &st)); } while (!flag);
    MPI_Get_count(&st, MPI_INT, &cnt);
    MPI_Request rq;
    memset(d, 0, sizeof d);
    CHECK(MPI_Imrecv(d, cnt, MPI_INT, &m, &rq));
    CHECK(MPI_Wait(&rq, &st));
    acc += sum(d, 100) + cnt * 5 + st.MPI_TAG;
    CHECK(MPI_Waitall(4, sq, MPI_STATUSES_IGNORE));
    /* MPI_PROC_NULL: probes, matched probes, receives */
    CHECK(MPI_Probe(MPI_PROC_NULL, 5, comm, &st));
    acc += (st.MPI_SOURCE == MPI_PROC_NULL) + (st.MPI_TAG == MPI_ANY_TAG) * 2;
    CHECK(MPI_Mprobe(MPI_PROC_NULL, 5, comm, &m, &st));
    acc += (m == MPI_MESSAGE_NO_PROC) * 4;
    CHECK(MPI_Mrecv(d, 10, MPI_INT, &m, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    acc += cnt * 100 + (st.MPI_SOURCE == MPI_PROC_NULL) * 8;
    CHECK(MPI_Recv(d, 10, MPI_INT, MPI_PROC_NULL, 1, comm, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    acc += cnt * 1000 + (st.MPI_SOURCE == MPI_PROC_NULL) * 16;
    CHECK(MPI_Send(d, 10, MPI_INT, MPI_PROC_NULL, 1, comm));
    MPI_Type_free(&vec);
    result(name, "probes", acc);
}

/* 4. Get_count / Get_elements with a partial element; cancel; Request_get_status. */
static void status_cancel(MPI_Comm comm, const char *name) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int to = (r + 1) % n, from = (r + n - 1) % n;
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int s[5] = {1, 2, 3, 4, 5}, d[10] = {0};
    MPI_Request rq, sq;
    MPI_Status st;
    CHECK(MPI_Irecv(d, 5, pair, from, 31, comm, &rq));
    CHECK(MPI_Isend(s, 5, MPI_INT, to, 31, comm, &sq));
    int flag = 0;
    do { CHECK(MPI_Request_get_status(rq, &flag, &st)); } while (!flag);
    CHECK(MPI_Wait(&rq, &st));
    CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    int count, elems;
    MPI_Get_count(&st, pair, &count);
    MPI_Get_elements(&st, pair, &elems);
    result(name, "partial_count", count);
    result(name, "partial_elements", elems);
    result(name, "partial_data", sum(d, 10));
    /* a receive that never matches, cancelled */
    CHECK(MPI_Irecv(d, 1, MPI_INT, from, 999, comm, &rq));
    CHECK(MPI_Cancel(&rq));
    CHECK(MPI_Wait(&rq, &st));
    int c = 0;
    MPI_Test_cancelled(&st, &c);
    result(name, "cancelled", c);
    /* a receive that matched before the cancel: completes normally */
    CHECK(MPI_Irecv(d, 5, MPI_INT, from, 32, comm, &rq));
    CHECK(MPI_Send(s, 5, MPI_INT, to, 32, comm));
    MPI_Barrier(comm);
    do { CHECK(MPI_Request_get_status(rq, &flag, &st)); } while (!flag);
    CHECK(MPI_Cancel(&rq));
    CHECK(MPI_Wait(&rq, &st));
    MPI_Test_cancelled(&st, &c);
    MPI_Get_count(&st, MPI_INT, &count);
    result(name, "cancel_after_match", c * 100 + count);
    MPI_Type_free(&pair);
}

/* 5. Persistent requests: every init call, MPI_Start / MPI_Startall, reuse, free. */
static void persistent(MPI_Comm comm, const char *name, int rounds) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int to = (r + 1) % n, from = (r + n - 1) % n;
    int s[4][256], d[4][256];
    MPI_Request q[8];
    CHECK(MPI_Recv_init(d[0], 256, MPI_INT, from, 41, comm, &q[0]));
    CHECK(MPI_Recv_init(d[1], 256, MPI_INT, MPI_ANY_SOURCE, 42, comm, &q[1]));
    CHECK(MPI_Recv_init(d[2], 256, MPI_INT, from, MPI_ANY_TAG, comm, &q[2]));
    CHECK(MPI_Recv_init(d[3], 256, MPI_INT, from, 44, comm, &q[3]));
    CHECK(MPI_Send_init(s[0], 256, MPI_INT, to, 41, comm, &q[4]));
    CHECK(MPI_Ssend_init(s[1], 256, MPI_INT, to, 42, comm, &q[5]));
    CHECK(MPI_Bsend_init(s[2], 256, MPI_INT, to, 43, comm, &q[6]));
    CHECK(MPI_Rsend_init(s[3], 256, MPI_INT, to, 44, comm, &q[7]));
    long long acc = 0;
    for (int k = 0; k < rounds; k++) {
        for (int i = 0; i < 4; i++) fill(s[i], 256, r * 10 + i + k);
        memset(d, 0, sizeof d);
        CHECK(MPI_Startall(4, q));
        MPI_Barrier(comm); /* receives posted: ready mode legal */
        if (k % 2) {
            CHECK(MPI_Startall(4, q + 4));
        } else {
            for (int i = 4; i < 8; i++) CHECK(MPI_Start(&q[i]));
        }
        MPI_Status st[8];
        if (k % 3 == 0) {
            CHECK(MPI_Waitall(8, q, st));
        } else if (k % 3 == 1) {
            int flag = 0;
            do { CHECK(MPI_Testall(8, q, &flag, st)); } while (!flag);
        } else {
            for (int left = 8; left > 0; left--) {
                int idx;
                MPI_Status one;
                CHECK(MPI_Waitany(8, q, &idx, &one));
                st[idx] = one;
            }
            int idx, flag;
            MPI_Status ignored; /* (MPICH leaves it alone for inactive persistent requests) */
            CHECK(MPI_Testany(8, q, &idx, &flag, &ignored)); /* all inactive: flag, MPI_UNDEFINED */
            acc += flag * 7 + (idx == MPI_UNDEFINED);
        }
        for (int i = 0; i < 4; i++) {
            int c;
            MPI_Get_count(&st[i], MPI_INT, &c);
            acc += sum(d[i], 256) + c + st[i].MPI_TAG + st[i].MPI_SOURCE;
        }
        for (int i = 0; i < 8; i++) acc += q[i] != MPI_REQUEST_NULL;
    }
    /* an inactive persistent request: waits return at once with an empty status */
    MPI_Status st;
    CHECK(MPI_Wait(&q[0], &st));
    acc += st.MPI_SOURCE == MPI_ANY_SOURCE;
    /* a started receive cancelled, then freed; the rest freed inactive */
    CHECK(MPI_Start(&q[3]));
    CHECK(MPI_Cancel(&q[3]));
    CHECK(MPI_Wait(&q[3], &st));
    int c;
    MPI_Test_cancelled(&st, &c);
    acc += c * 1000;
    for (int i = 0; i < 8; i++) CHECK(MPI_Request_free(&q[i]));
    result(name, "persistent", acc);
}

/* 6. Sendrecv, Sendrecv_replace (derived type), and MPI_PROC_NULL on either side. */
static void sendrecvs(MPI_Comm comm, const char *name) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int to = (r + 1) % n, from = (r + n - 1) % n;
    int s[300], d[300];
    fill(s, 300, r);
    memset(d, 0, sizeof d);
    MPI_Status st;
    CHECK(MPI_Sendrecv(s, 300, MPI_INT, to, 51, d, 300, MPI_INT, from, MPI_ANY_TAG, comm, &st));
    long long acc = sum(d, 300) + st.MPI_TAG + st.MPI_SOURCE;
    MPI_Datatype idx;
    int bl[3] = {2, 5, 1}, disp[3] = {0, 10, 40};
    MPI_Type_indexed(3, bl, disp, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    fill(s, 300, r + 50);
    CHECK(MPI_Sendrecv_replace(s, 4, idx, to, 52, from, 52, comm, &st));
    acc += sum(s, 300);
    CHECK(MPI_Sendrecv(s, 10, MPI_INT, MPI_PROC_NULL, 53, d, 10, MPI_INT, MPI_PROC_NULL, 53, comm, &st));
    int c;
    MPI_Get_count(&st, MPI_INT, &c);
    acc += c + (st.MPI_SOURCE == MPI_PROC_NULL) * 10;
    MPI_Type_free(&idx);
    result(name, "sendrecv", acc);
}

/* 7. Synchronous mode: an MPI_Issend is not complete before its receive is posted. */
static void ssend_sync(MPI_Comm comm, const char *name) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int v = 77, w = 0, go = 1;
    if (r == 0) {
        MPI_Request q;
        int flag = 0;
        CHECK(MPI_Issend(&v, 1, MPI_INT, 1, 61, comm, &q));
        for (int i = 0; i < 200; i++) { /* 20 ms: rank 1 is not receiving yet */
            CHECK(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
            if (flag) break;
            usleep(100);
        }
        result(name, "ssend_complete_before_receive", flag);
        CHECK(MPI_Send(&go, 1, MPI_INT, 1, 62, comm));
        if (!flag) CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else if (r == 1) {
        CHECK(MPI_Recv(&go, 1, MPI_INT, 0, 62, comm, MPI_STATUS_IGNORE));
        CHECK(MPI_Recv(&w, 1, MPI_INT, 0, 61, comm, MPI_STATUS_IGNORE));
        result(name, "ssend_value", w);
    }
}

/* 8. Completion over a mix: requests on MPI_COMM_SELF (always MPI's) with these. */
static void mixed(MPI_Comm comm, const char *name) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int to = (r + 1) % n, from = (r + n - 1) % n;
    int a = r + 1, b = 0, c = r + 100, d = 0;
    MPI_Request q[4];
    CHECK(MPI_Irecv(&b, 1, MPI_INT, from, 71, comm, &q[0]));
    CHECK(MPI_Irecv(&d, 1, MPI_INT, 0, 72, MPI_COMM_SELF, &q[1]));
    CHECK(MPI_Isend(&a, 1, MPI_INT, to, 71, comm, &q[2]));
    CHECK(MPI_Isend(&c, 1, MPI_INT, 0, 72, MPI_COMM_SELF, &q[3]));
    MPI_Status st[4];
    int outc, idx[4], done = 0;
    while (done < 4) {
        CHECK(MPI_Testsome(4, q, &outc, idx, st));
        if (outc != MPI_UNDEFINED) done += outc;
    }
    result(name, "mixed", b * 1000 + d);
}

/* 9. A derived type that covers its extent exactly but out of order (halves swapped, and
 * a count of two): size == extent == true extent, yet its data is not the memory's bytes
 * in order. Sent as the type, received as ints, and the reverse; the sums weigh positions. */
static void permuted(MPI_Comm comm, const char *name) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int to = (r + 1) % n, from = (r + n - 1) % n;
    MPI_Datatype swap;
    int bl[2] = {4, 4}, disp[2] = {4, 0};
    MPI_Type_indexed(2, bl, disp, MPI_INT, &swap);
    MPI_Type_commit(&swap);
    int s[16], d[16];
    long long acc = 0;
    MPI_Status st;
    for (int way = 0; way < 2; way++) {
        for (int i = 0; i < 16; i++) s[i] = 100 * r + i, d[i] = -1;
        MPI_Request q;
        CHECK(MPI_Irecv(d, way ? 2 : 16, way ? swap : MPI_INT, from, 91 + way, comm, &q));
        CHECK(MPI_Send(s, way ? 16 : 2, way ? MPI_INT : swap, to, 91 + way, comm));
        st.MPI_ERROR = MPI_ERR_TOPOLOGY; /* a single completion leaves MPI_ERROR alone (MPICH's mprobe) */
        CHECK(MPI_Wait(&q, &st));
        for (int i = 0; i < 16; i++) acc += (long long)(i + 1) * d[i];
        if (st.MPI_ERROR != MPI_ERR_TOPOLOGY) acc += 1000000000LL;
    }
    MPI_Type_free(&swap);
    result(name, "permuted", acc);
}

static void suite(MPI_Comm comm, const char *name, int rounds) {
    int n;
    MPI_Comm_size(comm, &n);
    /* barriers between the phases: a wildcard receive or probe of one phase must not
     * take a message of the next */
    ring(comm, name, rounds);
    MPI_Barrier(comm);
    gather_any(comm, name, rounds);
    MPI_Barrier(comm);
    probes(comm, name);
    MPI_Barrier(comm);
    status_cancel(comm, name);
    MPI_Barrier(comm);
    persistent(comm, name, rounds);
    MPI_Barrier(comm);
    sendrecvs(comm, name);
    MPI_Barrier(comm);
    if (n >= 2) ssend_sync(comm, name);
    MPI_Barrier(comm);
    mixed(comm, name);
    MPI_Barrier(comm);
    permuted(comm, name);
    MPI_Barrier(comm);
}

/* A buffer sized exactly by the standard's rule (pack sizes + MPI_BSEND_OVERHEAD each) holds
 * three odd-sized buffered sends to self that stay in flight until received (MPICH's
 * bsend1; the preload's first placement padded each send and refused the third). */
static void tight_bsend_to_self(void) {
    char m1[7] = "012345", m3[17] = "0123401234012341", r1[64] = "", r3[64] = "";
    double m2[2] = {1.23, 3.21}, r2[64] = {0};
    int s1, s2, s3;
    MPI_Pack_size(7, MPI_CHAR, MPI_COMM_WORLD, &s1);
    MPI_Pack_size(2, MPI_DOUBLE, MPI_COMM_WORLD, &s2);
    MPI_Pack_size(17, MPI_CHAR, MPI_COMM_WORLD, &s3);
    int bsize = 3 * MPI_BSEND_OVERHEAD + s1 + s2 + s3, size;
    char *buf = malloc((size_t)bsize), *back;
    MPI_Buffer_attach(buf, bsize);
    int rc = MPI_Bsend(m1, 7, MPI_CHAR, wrank, 1, MPI_COMM_WORLD);
    rc |= MPI_Bsend(m2, 2, MPI_DOUBLE, wrank, 1, MPI_COMM_WORLD);
    rc |= MPI_Bsend(m3, 17, MPI_CHAR, wrank, 1, MPI_COMM_WORLD);
    MPI_Recv(r1, 7, MPI_CHAR, wrank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(r2, 10, MPI_DOUBLE, wrank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(r3, 17, MPI_CHAR, wrank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Buffer_detach(&back, &size);
    int ok = rc == MPI_SUCCESS && !strcmp(r1, m1) && r2[0] == m2[0] && r2[1] == m2[1] && !strcmp(r3, m3) &&
             back == buf && size == bsize;
    printf("tight_bsend rank=%d ok=%d\n", wrank, ok);
    free(buf);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* a hung run still shows how far it got */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    int bsize = 1 << 22;
    void *bbuf = malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);

    suite(MPI_COMM_WORLD, "world", rounds);
    MPI_Comm dup, split, stype, grp, winfo;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    suite(dup, "dup", rounds);
    MPI_Comm idup; /* nonblocking duplicate: named, so the stats line can say it is clampi's */
    MPI_Request ireq;
    MPI_Comm_idup(dup, &idup, &ireq);
    MPI_Wait(&ireq, MPI_STATUS_IGNORE);
    MPI_Comm_set_name(idup, "idup");
    suite(idup, "idup", 2);
    MPI_Comm_free(&idup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &split); /* reversed ranks */
    suite(split, "split", rounds);
    MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &stype);
    suite(stype, "split_type", rounds);
    MPI_Group g;
    MPI_Comm_group(split, &g);
    MPI_Comm_create_group(split, g, 5, &grp);
    MPI_Group_free(&g);
    suite(grp, "create_group", 2);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "some_key", "1");
    int info_mode = argc > 2 && strcmp(argv[2], "info") == 0;
    if (info_mode) MPI_Info_set(info, "clampi_match", "bins");
    MPI_Comm_dup_with_info(grp, info, &winfo);
    MPI_Info_free(&info);
    suite(winfo, "dup_with_info", 2);
    if (info_mode) {
        MPI_Comm cs[2] = {MPI_COMM_WORLD, winfo};
        const char *names[2] = {"world", "dup_with_info"};
        for (int i = 0; i < 2; i++) {
            MPI_Info used;
            char v[64] = "none";
            int flag = 0;
            MPI_Comm_get_info(cs[i], &used);
            MPI_Info_get(used, "clampi_match", 63, v, &flag);
            MPI_Info_free(&used);
            printf("note rank=%d comm=%s clampi_match=%s\n", wrank, names[i], flag ? v : "none");
        }
    }
    MPI_Comm_free(&winfo);
    MPI_Comm_free(&grp);
    MPI_Comm_free(&stype);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    for (int i = 0; i < 3; i++) { /* MPI_Comm_disconnect frees as MPI_Comm_free does; handles get reused */
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        suite(d, "disconnect", 1);
        MPI_Comm_disconnect(&d);
    }

    int size;
    MPI_Buffer_detach(&bbuf, &size);
    free(bbuf);
    tight_bsend_to_self();
    MPI_Finalize();
    return 0;
}
