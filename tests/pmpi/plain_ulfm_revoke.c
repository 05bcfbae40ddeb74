/* ULFM (Open MPI): after MPIX_Comm_revoke, every call on the communicator fails with
 * MPIX_ERR_REVOKED, raised through its handler: a barrier, collectives with data, a send to
 * and a receive from MPI_PROC_NULL, and a receive, a synchronous send and a probe with a real
 * peer, on a duplicate of MPI_COMM_WORLD, one of MPI_COMM_SELF and an intercommunicator,
 * with MPI_THREAD_MULTIPLE (as mpi4py asks) or, with the argument "single",
 * MPI_THREAD_SINGLE. Under CLAMPI_MATCH the carriers move messages where a revocation does
 * not reach and run barriers of their own, and the preload runs MPI_Alltoall and
 * MPI_Allgather on its shared heap in one thread. An MPI without ULFM says so. */
#include "plain_check.h"
#include "plain_ulfm.h"

#include <string.h>

static int me;

#ifdef OMPI_HAVE_MPI_EXT_FTMPI
static int handled; /* calls of the counting handler */

static void count_errors(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
    handled++;
}

/* Each call on a revoked comm; 1 when every one failed with MPIX_ERR_REVOKED. */
static int all_revoked(MPI_Comm comm, const char *name) {
    int x = me, y = 0, inter = 0, many[64];
    MPI_Comm_test_inter(comm, &inter);
    int barrier = revoked(MPI_Barrier(comm));
    int bcast = revoked(MPI_Bcast(&x, 1, MPI_INT, inter ? MPI_PROC_NULL : 0, comm));
    int allreduce = revoked(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm));
    int send = revoked(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, comm));
    int recv = revoked(MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, comm, MPI_STATUS_IGNORE));
    int alltoall = revoked(MPI_Alltoall(many, 1, MPI_INT, many + 32, 1, MPI_INT, comm));
    /* a real peer: each blocking call would wait for ever if it were not refused */
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int peer = inter ? 0 : (r + 1) % n;
    int recv_peer = revoked(MPI_Recv(&y, 1, MPI_INT, peer, 9, comm, MPI_STATUS_IGNORE));
    int ssend_peer = revoked(MPI_Ssend(&x, 1, MPI_INT, peer, 9, comm));
    int probe_peer = revoked(MPI_Probe(peer, 9, comm, MPI_STATUS_IGNORE));
    int allgather = revoked(MPI_Allgather(&x, 1, MPI_INT, many, 1, MPI_INT, comm));
    printf("result ulfm rank=%d %s barrier=%d bcast=%d allreduce=%d send=%d recv=%d alltoall=%d allgather=%d "
           "recv_peer=%d ssend_peer=%d probe_peer=%d\n",
           me, name, barrier, bcast, allreduce, send, recv, alltoall, allgather, recv_peer, ssend_peer, probe_peer);
    return barrier && bcast && allreduce && send && recv && alltoall && allgather && recv_peer && ssend_peer &&
           probe_peer;
}

/* One message around comm before it is revoked (an intercommunicator: between the two
 * sides' first processes) and one MPI_Alltoall, so that clampi carries them. */
static void ring(MPI_Comm comm) {
    int inter, r, n, x = me, y = -1;
    CHECK(MPI_Comm_test_inter(comm, &inter));
    CHECK(MPI_Comm_rank(comm, &r));
    CHECK(MPI_Comm_size(comm, &n));
    int to = inter ? (r == 0 ? 0 : MPI_PROC_NULL) : (r + 1) % n;
    int from = inter ? to : (r - 1 + n) % n;
    CHECK(MPI_Sendrecv(&x, 1, MPI_INT, to, 3, &y, 1, MPI_INT, from, 3, comm, MPI_STATUS_IGNORE));
    int all[32] = {0}, got[32];
    CHECK(MPI_Alltoall(all, 1, MPI_INT, got, 1, MPI_INT, comm));
}

static int check(MPI_Comm comm, const char *name) {
    ring(comm);
    CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    CHECK(MPIX_Comm_revoke(comm));
    int ok = all_revoked(comm, name);
    CHECK(MPI_Comm_free(&comm));
    return ok;
}
#endif

int main(int argc, char **argv) {
    int provided;
    int single = argc > 1 && strcmp(argv[1], "single") == 0;
    MPI_Init_thread(&argc, &argv, single ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
#ifdef OMPI_HAVE_MPI_EXT_FTMPI
    int size, ok = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm world, self, half, inter, counted;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &world));
    ok &= check(world, "dup_world");
    CHECK(MPI_Comm_dup(MPI_COMM_SELF, &self));
    ok &= check(self, "dup_self");
    int low = me < size / 2;
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, low, me, &half));
    CHECK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 7, &inter));
    ok &= check(inter, "inter");
    CHECK(MPI_Comm_free(&half));
    /* the program's own handler runs once per failed call */
    MPI_Errhandler eh;
    CHECK(MPI_Comm_create_errhandler(count_errors, &eh));
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &counted));
    CHECK(MPI_Comm_set_errhandler(counted, eh));
    CHECK(MPIX_Comm_revoke(counted));
    MPI_Barrier(counted);
    MPI_Send(&me, 1, MPI_INT, MPI_PROC_NULL, 0, counted);
    printf("result ulfm rank=%d handler_calls=%d\n", me, handled);
    ok &= handled == 2;
    CHECK(MPI_Comm_free(&counted));
    CHECK(MPI_Errhandler_free(&eh));
    printf("result ulfm_all rank=%d ok=%d\n", me, ok);
#else
    printf("result ulfm_all rank=%d no_ulfm\n", me);
#endif
    MPI_Finalize();
    return 0;
}
