/* CMPIX_ point-to-point behaving as MPI's, one case per run (np 2; argv[1] picks it):
 *   truncate  a truncated receive: every completion call (MPI_ and CMPIX_) returns
 *             MPI_ERR_TRUNCATE / MPI_ERR_IN_STATUS through the receive communicator's
 *             handler (MPI_COMM_WORLD's stays fatal), with MPI_ERROR in the statuses
 *   cancel    CMPIX_Cancel of a receive that already matched: MPI_SUCCESS, no effect
 *   bottom    MPI_BOTTOM with absolute-address datatypes; NULL buffer with count 0
 *   progress  CMPIX_Isend then a plain MPI_Barrier while the peer receives (MPICH's
 *             scancel2): the send must progress inside MPI's barrier
 *   partial   fewer elements than one instance of a non-contiguous receive type */
#define CLAMPI_TEST_USES_MPI
#include <clampi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, peer, raised, last_code;
static MPI_Comm comm;

static void count_errors(MPI_Comm *c, int *code, ...) {
    raised++;
    last_code = *code;
}

static int cls(int err) {
    int c;
    MPI_Error_class(err, &c);
    return c;
}

/* One more error raised through comm's handler, of class c; returns nothing else. */
static void expect_raised(int before, int err, int c) {
    if (cls(err) != c || raised != before + 1 || cls(last_code) != c)
        fprintf(stderr, "rank %d: err class %d raised %d (want class %d, one raise)\n", rank, cls(err), raised - before,
                c);
    CHECK(cls(err) == c && raised == before + 1 && cls(last_code) == c);
}

/* ---- truncate -------------------------------------------------------------------- */
enum { N_SINGLE = 6, N_MULTI = 6 };

static void truncate_case(void) {
    int big[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    if (rank == 0) {
        for (int t = 0; t < N_SINGLE + N_MULTI; t++) CHECK(CMPIX_Send(big, 8, MPI_INT, peer, t, comm) == MPI_SUCCESS);
        for (int t = 0; t < N_MULTI; t++) CHECK(CMPIX_Send(big, 2, MPI_INT, peer, 100 + t, comm) == MPI_SUCCESS);
        return;
    }
    int small[4];
    MPI_Status st;
    MPI_Request r;
    /* single completion: MPI_Wait, MPI_Test, CMPIX_Wait, CMPIX_Test, MPI_Waitany, MPI_Testany */
    for (int t = 0; t < N_SINGLE; t++) {
        CHECK(CMPIX_Irecv(small, 4, MPI_INT, peer, t, comm, &r) == MPI_SUCCESS);
        int before = raised, err, flag = 0, idx = -1;
        memset(&st, 0, sizeof st);
        switch (t) {
        case 0: err = MPI_Wait(&r, &st); break;
        case 1:
            while ((err = MPI_Test(&r, &flag, &st)) == MPI_SUCCESS && !flag) {}
            break;
        case 2: err = CMPIX_Wait(&r, &st); break;
        case 3:
            while ((err = CMPIX_Test(&r, &flag, &st)) == MPI_SUCCESS && !flag) {}
            break;
        case 4:
            err = MPI_Waitany(1, &r, &idx, &st);
            CHECK(idx == 0);
            break;
        default:
            while ((err = MPI_Testany(1, &r, &idx, &flag, &st)) == MPI_SUCCESS && !flag) {}
            CHECK(idx == 0);
            break;
        }
        if (cls(err) != MPI_ERR_TRUNCATE) fprintf(stderr, "single case %d\n", t);
        expect_raised(before, err, MPI_ERR_TRUNCATE);
        CHECK(cls(st.MPI_ERROR) == MPI_ERR_TRUNCATE && st.MPI_SOURCE == peer && st.MPI_TAG == t);
        CHECK(r == MPI_REQUEST_NULL && small[0] == 1 && small[3] == 4);
    }
    /* multiple completion: a truncated and a fine receive; MPI_ERR_IN_STATUS */
    for (int t = 0; t < N_MULTI; t++) {
        int fine[4] = {0};
        MPI_Request q[2];
        MPI_Status sts[2];
        CHECK(CMPIX_Irecv(small, 4, MPI_INT, peer, N_SINGLE + t, comm, &q[0]) == MPI_SUCCESS);
        CHECK(CMPIX_Irecv(fine, 4, MPI_INT, peer, 100 + t, comm, &q[1]) == MPI_SUCCESS);
        int before = raised, err, flag = 0, out = 0, idx[2];
        for (int i = 0; i < 2; i++) sts[i].MPI_ERROR = -12345;
        switch (t) {
        case 0: err = MPI_Waitall(2, q, sts); break;
        case 1:
            while ((err = MPI_Testall(2, q, &flag, sts)) == MPI_SUCCESS && !flag) {}
            break;
        case 2: err = CMPIX_Waitall(2, q, sts); break;
        case 3:
            while ((err = CMPIX_Testall(2, q, &flag, sts)) == MPI_SUCCESS && !flag) {}
            break;
        case 4: /* until both are in: the truncated one counts */
            CHECK(CMPIX_Wait(&q[1], &sts[1]) == MPI_SUCCESS);
            err = MPI_Waitsome(2, q, &out, idx, sts);
            CHECK(out == 1 && idx[0] == 0);
            break;
        default:
            CHECK(CMPIX_Wait(&q[1], &sts[1]) == MPI_SUCCESS);
            while ((err = MPI_Testsome(2, q, &out, idx, sts)) == MPI_SUCCESS && out == 0) {}
            CHECK(out == 1 && idx[0] == 0);
            break;
        }
        if (cls(err) != MPI_ERR_IN_STATUS) fprintf(stderr, "multi case %d\n", t);
        expect_raised(before, err, MPI_ERR_IN_STATUS);
        CHECK(cls(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE);
        if (t < 4) CHECK(sts[1].MPI_ERROR == MPI_SUCCESS && fine[1] == 2);
        CHECK(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL);
    }
}

/* ---- cancel ---------------------------------------------------------------------- */
static void cancel_case(void) {
    int v = 42 + rank, got = -1, flag = 0, none, canc = 1;
    MPI_Request r;
    MPI_Status st;
    CHECK(CMPIX_Irecv(&got, 1, MPI_INT, peer, 98, comm, &r) == MPI_SUCCESS);
    CHECK(CMPIX_Send(&v, 1, MPI_INT, peer, 98, comm) == MPI_SUCCESS);
    while (!flag) { /* until our receive has matched (CMPIX_Iprobe progresses) */
        CHECK(CMPIX_Iprobe(peer, 97, comm, &none, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
    }
    int before = raised;
    CHECK(CMPIX_Cancel(&r) == MPI_SUCCESS && raised == before && r != MPI_REQUEST_NULL);
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS);
    MPI_Test_cancelled(&st, &canc);
    CHECK(!canc && got == 42 + peer && st.MPI_SOURCE == peer && st.MPI_TAG == 98);
    /* a matched receive completed by MPI_Test is cancelled the same way */
    got = -1;
    CHECK(CMPIX_Irecv(&got, 1, MPI_INT, peer, 99, comm, &r) == MPI_SUCCESS);
    CHECK(CMPIX_Send(&v, 1, MPI_INT, peer, 99, comm) == MPI_SUCCESS);
    for (flag = 0; !flag;) {
        CHECK(CMPIX_Iprobe(peer, 97, comm, &none, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
    }
    CHECK(MPI_Cancel(&r) == MPI_SUCCESS && CMPIX_Cancel(&r) == MPI_SUCCESS && raised == before);
    CHECK(CMPIX_Wait(&r, &st) == MPI_SUCCESS);
    MPI_Test_cancelled(&st, &canc);
    CHECK(!canc && got == 42 + peer);
}

/* ---- bottom ---------------------------------------------------------------------- */
static MPI_Datatype absolute(int *a, int *b) { /* a and b by absolute address */
    MPI_Aint addr[2];
    int len[2] = {1, 1};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT}, t;
    MPI_Get_address(a, &addr[0]);
    MPI_Get_address(b, &addr[1]);
    MPI_Type_create_struct(b ? 2 : 1, len, addr, types, &t);
    MPI_Type_commit(&t);
    return t;
}

static void bottom_case(void) {
    int x[5] = {0}, st_int = -1;
    MPI_Status st;
    MPI_Datatype one = absolute(&st_int, NULL), two = absolute(&x[0], &x[4]);
    if (rank == 0) {
        st_int = 7, x[0] = 8, x[4] = 9;
        CHECK(CMPIX_Send(MPI_BOTTOM, 1, one, peer, 1, comm) == MPI_SUCCESS);
        CHECK(CMPIX_Send(MPI_BOTTOM, 1, two, peer, 2, comm) == MPI_SUCCESS);
        CHECK(CMPIX_Send(NULL, 0, MPI_INT, peer, 3, comm) == MPI_SUCCESS);
    } else {
        CHECK(CMPIX_Recv(MPI_BOTTOM, 1, one, peer, 1, comm, &st) == MPI_SUCCESS && st_int == 7);
        CHECK(CMPIX_Recv(MPI_BOTTOM, 1, two, peer, 2, comm, &st) == MPI_SUCCESS);
        CHECK(x[0] == 8 && x[4] == 9 && x[1] == 0);
        int n = -1;
        CHECK(CMPIX_Recv(NULL, 0, MPI_INT, peer, 3, comm, &st) == MPI_SUCCESS);
        MPI_Get_count(&st, MPI_INT, &n);
        CHECK(n == 0);
    }
    MPI_Type_free(&one);
    MPI_Type_free(&two);
}

/* ---- progress -------------------------------------------------------------------- */
static void progress_case(void) {
    static const int sizes[] = {100, 10000, 1000000};
    for (int i = 0; i < 3; i++) {
        int n = sizes[i];
        char *buf = calloc((size_t)n, 1);
        if (rank == 0) {
            MPI_Request r;
            buf[n - 1] = 5;
            CHECK(CMPIX_Isend(buf, n, MPI_CHAR, peer, i, comm, &r) == MPI_SUCCESS);
            MPI_Barrier(MPI_COMM_WORLD); /* the peer's receive needs this send to move */
            CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        } else {
            CHECK(CMPIX_Recv(buf, n, MPI_CHAR, peer, i, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            CHECK(buf[n - 1] == 5);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        free(buf);
    }
}

/* ---- partial --------------------------------------------------------------------- */
static void partial_one(MPI_Datatype t, int count, int sent, int len, const int *want) {
    int *s = malloc(sizeof(int) * (size_t)sent), *d = malloc(sizeof(int) * (size_t)len);
    for (int i = 0; i < sent; i++) s[i] = 1000 + i;
    for (int i = 0; i < len; i++) d[i] = -1;
    MPI_Status st;
    if (rank == 0) {
        CHECK(CMPIX_Send(s, sent, MPI_INT, peer, sent, comm) == MPI_SUCCESS);
    } else {
        CHECK(CMPIX_Recv(d, count, t, peer, sent, comm, &st) == MPI_SUCCESS);
        int elems = -1, k = 0;
        MPI_Get_elements(&st, t, &elems);
        CHECK(elems == sent);
        for (int i = 0; i < len; i++) {
            int w = want[i] < 0 ? -1 : 1000 + want[i];
            if (d[i] != w) fprintf(stderr, "partial (%d sent): d[%d] = %d, want %d\n", sent, i, d[i], w);
            k += d[i] != w;
        }
        CHECK(k == 0);
    }
    free(s);
    free(d);
}

static void partial_case(void) {
    MPI_Datatype v;
    MPI_Type_vector(4, 1, 2, MPI_INT, &v); /* extent 7 ints */
    MPI_Type_commit(&v);
    int w3[8] = {0, -1, 1, -1, 2, -1, -1, -1};
    partial_one(v, 1, 3, 8, w3);
    int w6[16] = {0, -1, 1, -1, 2, -1, 3, 4, -1, 5, -1, -1, -1, -1, -1, -1};
    partial_one(v, 2, 6, 16, w6);
    MPI_Type_free(&v);
    /* rendezvous size: 3000 ints into one vector of 4000 */
    MPI_Type_vector(4000, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    int *w = malloc(sizeof(int) * 8000);
    for (int i = 0; i < 8000; i++) w[i] = (i % 2 == 0 && i / 2 < 3000) ? i / 2 : -1;
    partial_one(v, 1, 3000, 8000, w);
    free(w);
    MPI_Type_free(&v);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = rank ^ 1;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_errors, &eh);
    MPI_Comm_set_errhandler(comm, eh); /* MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL */
    CHECK(CMPIX_Comm_enable(comm, MPI_INFO_NULL) == MPI_SUCCESS);
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "truncate"))
        truncate_case();
    else if (!strcmp(c, "cancel"))
        cancel_case();
    else if (!strcmp(c, "bottom"))
        bottom_case();
    else if (!strcmp(c, "progress"))
        progress_case();
    else if (!strcmp(c, "partial"))
        partial_case();
    else
        CHECK(!"unknown case");
    int want = rank == 1 && !strcmp(c, "truncate") ? N_SINGLE + N_MULTI : 0;
    if (raised != want)
        fprintf(stderr, "rank %d: %d errors raised (last class %d), want %d\n", rank, raised, cls(last_code), want);
    CHECK(raised == want);
    CHECK(CMPIX_Comm_disable(comm) == MPI_SUCCESS);
    MPI_Comm_free(&comm);
    MPI_Errhandler_free(&eh);
    if (rank == 0) printf("match %s: ok\n", c);
    MPI_Finalize();
    return 0;
}
