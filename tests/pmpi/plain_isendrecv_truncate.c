/* Truncated receives under a user error handler: the handler runs exactly once per failed
 * call, with MPI_ERR_TRUNCATE, and the call returns that class. Rank 1 sends 4 ints to
 * rank 0, whose receive has room for 2. The handler is set on the duplicate the program
 * talks on and on MPI_COMM_WORLD (MPICH 4.0 raises errors of MPI_Wait and MPI_Test on
 * MPI_COMM_WORLD's handler: the count stays one).
 *  - "result rank=0 what=irecv_wait|recv calls=N handler=C": MPI_Irecv + MPI_Wait and
 *    MPI_Recv, the same plainly and preloaded (run_preload.sh; the class the call returns
 *    is left out: MPICH 5 returns MPI_SUCCESS after a user handler ran, clampi the code);
 *  - "isendrecv rank=0 what=wait|replace_test calls=N handler=C class=C": MPI_Isendrecv
 *    completed by MPI_Wait, MPI_Isendrecv_replace by MPI_Test, checked by the test's regexes
 *    (MPICH's and Intel MPI's own MPI_Isendrecv report no truncation at all, so plain runs
 *    are no reference there).
 * C: truncate, success or other. Needs 2 ranks. */
#include <mpi.h>
#include <stdio.h>

static int calls, handler_class;

static void count_errors(MPI_Comm *comm, int *code, ...) {
    calls++;
    MPI_Error_class(*code, &handler_class);
}

static const char *name(int cls) {
    return cls == MPI_SUCCESS ? "success" : cls == MPI_ERR_TRUNCATE ? "truncate" : "other";
}

static void report(const char *kind, const char *what, int rc) {
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (kind[0] == 'r') /* result */
        printf("%s rank=0 what=%s calls=%d handler=%s\n", kind, what, calls, name(handler_class));
    else
        printf("%s rank=0 what=%s calls=%d handler=%s class=%s\n", kind, what, calls, name(handler_class), name(cls));
    fflush(stdout);
    calls = 0;
    handler_class = MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_errors, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    int out[4] = {1, 2, 3, 4}, in[4] = {0};
    MPI_Request q;
    if (rank == 0) {
        MPI_Irecv(in, 2, MPI_INT, 1, 4, comm, &q);
        report("result", "irecv_wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
        report("result", "recv", MPI_Recv(in, 2, MPI_INT, 1, 4, comm, MPI_STATUS_IGNORE));
    } else if (rank == 1) {
        MPI_Send(out, 4, MPI_INT, 0, 4, comm);
        MPI_Send(out, 4, MPI_INT, 0, 4, comm);
    }
#ifdef HAVE_MPI_ISENDRECV /* not in Open MPI 4.1; Open MPI 5 has it but says MPI 3.1 */
    if (rank < 2) {
        int peer = 1 - rank, n = rank == 0 ? 2 : 4; /* rank 0 sends 2 ints, receives into 2 */
        MPI_Isendrecv(out, n, MPI_INT, peer, 5, in, n, MPI_INT, peer, 5, comm, &q);
        int rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        if (rank == 0) report("isendrecv", "wait", rc);
        int buf[4] = {1, 2, 3, 4}, flag = 0;
        MPI_Isendrecv_replace(buf, n, MPI_INT, peer, 6, peer, 6, comm, &q);
        rc = MPI_SUCCESS;
        while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
        if (rank == 0) report("isendrecv", "replace_test", rc);
    }
#endif
    MPI_Barrier(comm);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
