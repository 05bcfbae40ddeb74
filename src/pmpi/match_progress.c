/* The MPI carrier (CLAMPI_MATCH_CARRIER=mpi) inside the commonest blocking collectives.
 *
 * While clampi holds receives in its own queue, a peer's large message to one of them
 * (rendezvous) completes only when this process takes it out of MPI (src/msg/carrier.c).
 * A peer may block in that send before it joins a collective this process is already in:
 * plain MPI progresses the transfer inside the collective, so the program is correct MPI.
 * These wrappers keep that true: the collective runs as its nonblocking form, tested while
 * clampi takes messages. A blocking and a nonblocking collective never match each other, so
 * every process must choose the same form: the nonblocking one whenever the job's
 * environment says CLAMPI_MATCH_CARRIER=mpi (the same on every rank), whether or not this
 * process holds receives now; MPI's own call otherwise. Other blocking calls (MPI_Gather,
 * RMA synchronisation, I/O) are not wrapped: see docs/matching.md, "The MPI carrier". */
#include <mpi.h>

#include "msg/msg.h"

#define PROGRESS_API __attribute__((visibility("default")))

PROGRESS_API int MPI_Barrier(MPI_Comm comm) {
    if (!clampi_carrier_job()) return PMPI_Barrier(comm);
    MPI_Request r;
    int err = PMPI_Ibarrier(comm, &r);
    return err != MPI_SUCCESS ? err : clampi_carrier_spin(&r, MPI_STATUS_IGNORE);
}

PROGRESS_API int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    if (!clampi_carrier_job()) return PMPI_Bcast(buf, count, type, root, comm);
    MPI_Request r;
    int err = PMPI_Ibcast(buf, count, type, root, comm, &r);
    return err != MPI_SUCCESS ? err : clampi_carrier_spin(&r, MPI_STATUS_IGNORE);
}

PROGRESS_API int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                            MPI_Comm comm) {
    if (!clampi_carrier_job()) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    MPI_Request r;
    int err = PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, &r);
    return err != MPI_SUCCESS ? err : clampi_carrier_spin(&r, MPI_STATUS_IGNORE);
}

PROGRESS_API int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm) {
    if (!clampi_carrier_job()) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    MPI_Request r;
    int err = PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &r);
    return err != MPI_SUCCESS ? err : clampi_carrier_spin(&r, MPI_STATUS_IGNORE);
}
