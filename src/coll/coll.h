/* clampi collectives: what the layers above (the preload) call. The rest of the collectives'
 * interface is coll/coll_internal.h, for the src/coll sources only. */
#ifndef CLAMPI_COLL_COLL_H
#define CLAMPI_COLL_COLL_H
#include <clampi/coll.h>
#include <mpi.h>

/* Entry points for CMPI_* and the preload: *handled = 0 means nothing was done and the
 * caller must call the MPI library's collective (all ranks agree on it). */
int clampi_coll_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, CMPIX_Coll_algo algo, int *handled);
int clampi_coll_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, CMPIX_Coll_algo algo, int *handled);

/* One machine-readable line "clampi: coll rank=R direct=.. staged=.. delegated=.. heap_fallbacks=.."
 * (the preload prints it at MPI_Finalize when CLAMPI_STATS is set). */
void clampi_coll_stats_print(void);

/* A check the shared-heap waits make once they have waited long (every 64th yield): an MPI
 * error code ends the wait and the collective returns it through the communicator's
 * handler; 0 waits on. The preload sets one where the MPI has ULFM (a revoked
 * communicator, a failed process: src/pmpi/ulfm.c). NULL: none.
 * revoke: called on the inner communicator of the leaders of a communicator spanning
 * nodes when a wait was abandoned, so that leaders blocked inside the MPI's exchange on it
 * leave too (the MPI does not revoke communicators derived from a revoked one). */
typedef int (*clampi_coll_abandon_fn)(MPI_Comm comm);
typedef void (*clampi_coll_revoke_fn)(MPI_Comm inner);
void clampi_coll_set_abandon_check(clampi_coll_abandon_fn check, clampi_coll_revoke_fn revoke);

#endif
