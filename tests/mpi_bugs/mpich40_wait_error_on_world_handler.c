/* MPICH 4.0.2 (Debian 12) and Intel MPI 2021.19, no clampi: the error of MPI_Wait or MPI_Test on a truncated
 * receive goes to MPI_COMM_WORLD's error handler, not to the handler of the receive's
 * communicator (MPI-4.1 §9.3: a request's errors are raised on its communicator). With
 * MPI_COMM_WORLD's default handler the job aborts ("Fatal error in internal_Wait: Message
 * truncated") although the communicator's handler is MPI_ERRORS_RETURN. MPI_Recv raises on
 * the communicator, as it should. Open MPI 4.1.4 and 5.0.11 and MPICH 5.0.2 raise on the
 * communicator. The MPI_Isendrecv of MPICH 4.0.2 and 5.0.2 and Open MPI 5.0.11 reports no
 * truncation at all (MPI_SUCCESS, no handler).
 *
 * clampi: nothing to work around for the program's own receives. On the MPI message carrier
 * the halves of clampi's MPI_Isendrecv are MPI's receives, tested by clampi: there these MPIs
 * run MPI_COMM_WORLD's handler for the half, and clampi the communicator's for the
 * request (tests/pmpi/plain_isendrecv_truncate.c leaves that check out there).
 *
 *   mpicc.mpich mpich40_wait_error_on_world_handler.c -o repro
 *   mpiexec.mpich -n 2 ./repro     # aborts in MPI_Wait (Open MPI: "wait: truncate, right")
 *   mpiexec.mpich -n 2 ./repro 1   # MPI_COMM_WORLD returns errors too: "wait: ... wrong" */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int world_calls;
static void on_world(MPI_Comm *comm, int *code, ...) { world_calls++; }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, buf[4] = {1, 2, 3, 4};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (argc > 1) {
        MPI_Errhandler eh;
        MPI_Comm_create_errhandler(on_world, &eh);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
        MPI_Errhandler_free(&eh);
    }
    int bad = 0;
    if (rank == 0) {
        MPI_Request q;
        MPI_Irecv(buf, 2, MPI_INT, 1, 0, comm, &q);
        int rc = MPI_Wait(&q, MPI_STATUS_IGNORE), cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
        bad = world_calls != 0 || cls != MPI_ERR_TRUNCATE;
        printf("wait: class %s, MPI_COMM_WORLD's handler ran %d times: %s\n",
               cls == MPI_ERR_TRUNCATE ? "truncate" : "other", world_calls, bad ? "wrong" : "right");
    } else if (rank == 1) {
        MPI_Send(buf, 4, MPI_INT, 0, 0, comm);
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return bad;
}
