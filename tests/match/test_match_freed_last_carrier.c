/* A receive MPI's queue took (MPI carrier, depth 0) on a communicator freed before it
 * completed, while no other communicator is on the MPI carrier: completing it must let the
 * freed communicator go (its context id back, its duplicate, the wire, back to MPI or to
 * the pool), although at depth 0 no call of the loop progresses clampi. Each of
 * ITERS rounds duplicates MPI_COMM_WORLD, enables it on the MPI carrier, posts CMPIX_Irecv,
 * frees the communicator and completes the receive with one of CMPIX_Wait, CMPIX_Waitall,
 * CMPIX_Waitany, a CMPIX_Test loop. Freed communicators that are never let go keep their
 * context ids: enabling fails after 1,024 rounds. */
#define CLAMPI_TEST_USES_MPI
#include <clampi.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

int main(int argc, char **argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 2500;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_match", "lla+hot");
    MPI_Info_set(info, "clampi_match_carrier", "mpi");
    int peer = rank ^ 1, bad = 0, i;
    for (i = 0; i < iters && peer < size; i++) {
        MPI_Comm comm;
        if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) break;
        if (CMPIX_Comm_enable(comm, info) != MPI_SUCCESS) break;
        int in = -1, out = i;
        MPI_Request rq = MPI_REQUEST_NULL;
        CHECK(CMPIX_Irecv(&in, 1, MPI_INT, peer, 3, comm, &rq) == MPI_SUCCESS);
        CHECK(CMPIX_Send(&out, 1, MPI_INT, peer, 3, comm) == MPI_SUCCESS);
        MPI_Comm_free(&comm); /* the receive may still be pending: legal */
        int idx = -1, n = 0;  /* n: CMPIX_Test's flag */
        switch (i % 4) {
        case 0: CHECK(CMPIX_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS); break;
        case 1: CHECK(CMPIX_Waitall(1, &rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS); break;
        case 2: CHECK(CMPIX_Waitany(1, &rq, &idx, MPI_STATUS_IGNORE) == MPI_SUCCESS && idx == 0); break;
        default:
            while (!n) CHECK(CMPIX_Test(&rq, &n, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            break;
        }
        bad += in != i || rq != MPI_REQUEST_NULL;
    }
    MPI_Info_free(&info);
    CHECK(bad == 0);
    if (peer < size && i < iters) fprintf(stderr, "rank %d: round %d of %d failed\n", rank, i, iters);
    CHECK(peer >= size || i == iters);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("freed_last_carrier: %d rounds ok\n", i);
    MPI_Finalize();
    return 0;
}
