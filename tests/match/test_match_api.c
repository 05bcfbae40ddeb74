/* CMPIX_ point-to-point semantics on an enabled communicator, np >= 2: wildcards, probe,
 * cancel, truncation, derived datatypes, eager and rendezvous sizes, MPI_PROC_NULL, plain
 * MPI_Wait / MPI_Test_cancelled / MPI_Get_count on clampi's requests, mixed completion
 * with ordinary MPI requests, and bad input (error classes, queues intact). */
#define CLAMPI_TEST_USES_MPI
#include <clampi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size;

static void check_class(int err, int cls) {
    int c;
    MPI_Error_class(err, &c);
    if (c != cls) fprintf(stderr, "rank %d: error class %d, expected %d\n", rank, c, cls);
    CHECK(c == cls);
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* not enabled yet */
    int x = 0;
    check_class(CMPIX_Send(&x, 1, MPI_INT, 0, 0, comm), MPI_ERR_COMM);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_match", argc > 1 ? argv[1] : "lla+hot");
    MPI_Info_set(info, "clampi_match_width", "8");
    CHECK(CMPIX_Comm_enable(comm, info) == MPI_SUCCESS);
    int peer = rank ^ 1;
    if (peer < size) {
        /* 1. order and wildcards: 3 messages tags 5,6,5; receive ANY_TAG, then tag 5 */
        if (rank % 2 == 0) {
            int v[3] = {1, 2, 3}, tags[3] = {5, 6, 5};
            for (int i = 0; i < 3; i++) CHECK(CMPIX_Send(&v[i], 1, MPI_INT, peer, tags[i], comm) == MPI_SUCCESS);
        } else {
            int a = 0, b = 0, c = 0;
            MPI_Status st;
            int flag = 0;
            CHECK(CMPIX_Probe(peer, 6, comm, &st) == MPI_SUCCESS); /* the second message */
            CHECK(st.MPI_TAG == 6 && st.MPI_SOURCE == peer);
            CHECK(CMPIX_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st) == MPI_SUCCESS && flag);
            CHECK(st.MPI_TAG == 5); /* probe finds the oldest */
            CHECK(CMPIX_Recv(&a, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st) == MPI_SUCCESS);
            CHECK(a == 1 && st.MPI_TAG == 5 && st.MPI_SOURCE == peer);
            CHECK(CMPIX_Recv(&b, 1, MPI_INT, peer, 5, comm, &st) == MPI_SUCCESS);
            CHECK(b == 3); /* tag 5 skips the tag-6 message */
            int cnt;
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK(cnt == 1);
            CHECK(CMPIX_Recv(&c, 1, MPI_INT, peer, MPI_ANY_TAG, comm, &st) == MPI_SUCCESS && c == 2);
        }
        /* 2. cancel an unmatched receive; plain MPI_Wait + MPI_Test_cancelled */
        MPI_Request r;
        int buf[4];
        CHECK(CMPIX_Irecv(buf, 4, MPI_INT, peer, 99, comm, &r) == MPI_SUCCESS);
        CHECK(CMPIX_Cancel(&r) == MPI_SUCCESS);
        MPI_Status st;
        CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
        int canc = 0;
        MPI_Test_cancelled(&st, &canc);
        CHECK(canc);
        /* 2b. cancel of a matched receive: MPI_SUCCESS and no effect, the message arrives
         *     intact, and the queues are unchanged (the next message matches as usual) */
        {
            int v[2] = {rank * 10 + 1, rank * 10 + 2}, got[2] = {-1, -1};
            MPI_Request rr[2];
            CHECK(CMPIX_Irecv(&got[0], 1, MPI_INT, peer, 98, comm, &rr[0]) == MPI_SUCCESS);
            CHECK(CMPIX_Send(&v[0], 1, MPI_INT, peer, 98, comm) == MPI_SUCCESS);
            /* until our receive has its message (CMPIX_Iprobe drives clampi's progress) */
            int flag = 0, none;
            while (!flag) {
                CHECK(CMPIX_Iprobe(peer, 97, comm, &none, MPI_STATUS_IGNORE) == MPI_SUCCESS);
                MPI_Request_get_status(rr[0], &flag, MPI_STATUS_IGNORE);
            }
            CHECK(CMPIX_Cancel(&rr[0]) == MPI_SUCCESS);
            CHECK(rr[0] != MPI_REQUEST_NULL);
            CHECK(CMPIX_Wait(&rr[0], &st) == MPI_SUCCESS);
            int c2 = 1;
            MPI_Test_cancelled(&st, &c2);
            CHECK(!c2 && got[0] == peer * 10 + 1 && st.MPI_SOURCE == peer && st.MPI_TAG == 98);
            CHECK(CMPIX_Irecv(&got[1], 1, MPI_INT, MPI_ANY_SOURCE, 98, comm, &rr[1]) == MPI_SUCCESS);
            CHECK(CMPIX_Send(&v[1], 1, MPI_INT, peer, 98, comm) == MPI_SUCCESS);
            CHECK(CMPIX_Wait(&rr[1], &st) == MPI_SUCCESS && got[1] == peer * 10 + 2);
            /* a send is not cancelled: success, completes normally */
            MPI_Request sq;
            CHECK(CMPIX_Isend(&v[0], 1, MPI_INT, peer, 96, comm, &sq) == MPI_SUCCESS);
            CHECK(CMPIX_Cancel(&sq) == MPI_SUCCESS);
            CHECK(CMPIX_Recv(&got[0], 1, MPI_INT, peer, 96, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            CHECK(CMPIX_Wait(&sq, &st) == MPI_SUCCESS);
            MPI_Test_cancelled(&st, &c2);
            CHECK(!c2 && got[0] == peer * 10 + 1);
        }
        /* 3. sizes (eager, rendezvous) with a derived datatype on the receive side and
         *    plain MPI_Wait on the send, mixed with an ordinary MPI request in Waitall */
        for (int n = 1; n <= (1 << 18); n *= 8) {
            double *s = malloc(sizeof(double) * 2 * n), *d = malloc(sizeof(double) * 2 * n);
            for (int i = 0; i < 2 * n; i++) s[i] = rank * 1e6 + i, d[i] = -1;
            MPI_Datatype vec;
            MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &vec); /* every other double */
            MPI_Type_commit(&vec);
            MPI_Request rq[3];
            int token = rank, other = -1;
            CHECK(CMPIX_Irecv(d, 1, vec, peer, 7, comm, &rq[0]) == MPI_SUCCESS);
            CHECK(CMPIX_Isend(s, n, MPI_DOUBLE, peer, 7, comm, &rq[1]) == MPI_SUCCESS);
            MPI_Irecv(&other, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &rq[2]);
            MPI_Send(&token, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
            MPI_Status sts[3];
            CHECK(CMPIX_Waitall(3, rq, sts) == MPI_SUCCESS);
            CHECK(other == peer);
            for (int i = 0; i < n; i++) CHECK(d[2 * i] == peer * 1e6 + i && d[2 * i + 1] == -1);
            int cnt;
            MPI_Get_count(&sts[0], vec, &cnt);
            CHECK(cnt == 1);
            MPI_Get_count(&sts[0], MPI_DOUBLE, &cnt);
            CHECK(cnt == n);
            MPI_Type_free(&vec);
            free(s);
            free(d);
        }
        /* 4. truncation: 8 ints into 4 -> MPI_ERR_TRUNCATE, the next message still fine */
        int big[8] = {1, 2, 3, 4, 5, 6, 7, 8}, small[4] = {0};
        MPI_Request sr;
        CHECK(CMPIX_Isend(big, 8, MPI_INT, peer, 3, comm, &sr) == MPI_SUCCESS);
        MPI_Request sr2;
        CHECK(CMPIX_Isend(big, 2, MPI_INT, peer, 3, comm, &sr2) == MPI_SUCCESS);
        int err = CMPIX_Recv(small, 4, MPI_INT, peer, 3, comm, &st);
        check_class(err, MPI_ERR_TRUNCATE);
        CHECK(small[0] == 1 && small[3] == 4);
        CHECK(CMPIX_Recv(small, 4, MPI_INT, peer, 3, comm, &st) == MPI_SUCCESS);
        MPI_Get_count(&st, MPI_INT, &x);
        CHECK(x == 2);
        CHECK(CMPIX_Wait(&sr, MPI_STATUS_IGNORE) == MPI_SUCCESS && CMPIX_Wait(&sr2, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    /* 5. MPI_PROC_NULL */
    MPI_Status st;
    CHECK(CMPIX_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, comm, &st) == MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
    CHECK(CMPIX_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, comm) == MPI_SUCCESS);
    /* 6. bad input: classes; nothing queued */
    MPI_Request r;
    check_class(CMPIX_Isend(&x, 1, MPI_INT, size, 0, comm, &r), MPI_ERR_RANK);
    check_class(CMPIX_Isend(&x, 1, MPI_INT, 0, -3, comm, &r), MPI_ERR_TAG);
    check_class(CMPIX_Irecv(&x, 1, MPI_INT, 0, -3, comm, &r), MPI_ERR_TAG);
    check_class(CMPIX_Isend(&x, -1, MPI_INT, 0, 0, comm, &r), MPI_ERR_COUNT);
    check_class(CMPIX_Isend(&x, 1, MPI_DATATYPE_NULL, 0, 0, comm, &r), MPI_ERR_TYPE);
    check_class(CMPIX_Irecv(NULL, 4, MPI_INT, 0, 0, comm, &r), MPI_ERR_BUFFER);
    check_class(CMPIX_Iprobe(-7, 0, comm, &x, &st), MPI_ERR_RANK);
    check_class(CMPIX_Comm_enable(comm, MPI_INFO_NULL), MPI_ERR_OTHER); /* twice */
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "clampi_match", "tree");
    MPI_Comm c2;
    MPI_Comm_dup(comm, &c2);
    check_class(CMPIX_Comm_enable(c2, bad), MPI_ERR_INFO_VALUE);
    check_class(CMPIX_Send(&x, 1, MPI_INT, 0, 0, c2), MPI_ERR_COMM);
    /* a second enabled communicator does not match the first's messages */
    CHECK(CMPIX_Comm_enable(c2, MPI_INFO_NULL) == MPI_SUCCESS);
    if (peer < size) {
        int a = rank, b = -1, c = -1;
        MPI_Request q[2];
        CHECK(CMPIX_Irecv(&b, 1, MPI_INT, peer, 1, comm, &q[0]) == MPI_SUCCESS);
        CHECK(CMPIX_Irecv(&c, 1, MPI_INT, peer, 1, c2, &q[1]) == MPI_SUCCESS);
        CHECK(CMPIX_Send(&a, 1, MPI_INT, peer, 1, c2) == MPI_SUCCESS);
        int idx;
        int werr = CMPIX_Waitany(2, q, &idx, &st);
        if (!(werr == MPI_SUCCESS && idx == 1 && c == peer && b == -1))
            fprintf(stderr, "rank %d: err %d idx %d b %d c %d\n", rank, werr, idx, b, c);
        CHECK(werr == MPI_SUCCESS && idx == 1 && c == peer && b == -1);
        MPI_Sendrecv_replace(&idx, 1, MPI_INT, peer, 9, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* both saw it */
        a += 100;
        CHECK(CMPIX_Send(&a, 1, MPI_INT, peer, 1, comm) == MPI_SUCCESS);
        CHECK(CMPIX_Wait(&q[0], &st) == MPI_SUCCESS && b == peer + 100);
    }
    CHECK(CMPIX_Comm_disable(c2) == MPI_SUCCESS);
    CHECK(CMPIX_Comm_disable(comm) == MPI_SUCCESS);
    check_class(CMPIX_Comm_disable(comm), MPI_ERR_COMM);
    MPI_Comm_free(&c2);
    MPI_Comm_free(&comm);
    MPI_Info_free(&bad);
    MPI_Info_free(&info);
    if (rank == 0) printf("match api (%s): ok\n", argc > 1 ? argv[1] : "lla+hot");
    MPI_Finalize();
    return 0;
}
