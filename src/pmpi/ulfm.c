/* User-level failure mitigation (ULFM: Open MPI's MPIX_Comm_revoke) under the preload.
 *
 * clampi's own collectives (Morton order on the shared heap, src/coll) and the MPI carrier's
 * (its barrier of messages, match_progress.c) do not see a revocation, nor do the messages the
 * MPI carrier moves to its duplicate of the program's communicator (the wire): after
 * MPIX_Comm_revoke they would hang or succeed where MPI returns MPIX_ERR_REVOKED. So revoking
 * a communicator revokes its wire too, and a collective on a revoked communicator is MPI's
 * own call, which raises MPIX_ERR_REVOKED through the communicator's handler. Point-to-point
 * calls then fail on the wire, whose errors go to the program's handler
 * (src/msg/carrier_mpi.c).
 * Only Open MPI builds ULFM into its extensions header; MPICH 4 and 5 declare
 * MPIX_Comm_revoke but abort in it on ch4, so there is nothing to follow. */
#include <mpi.h>
#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include "clampi/export.h"
#include "pmpi/match_entry.h"
#include "pmpi/ulfm.h"

#ifdef OMPI_HAVE_MPI_EXT_FTMPI

CLAMPI_API int MPIX_Comm_revoke(MPI_Comm comm) {
    int err = PMPIX_Comm_revoke(comm);
    clampi_mcomm *mc = err == MPI_SUCCESS ? clampi_pm_comm(comm) : NULL;
    if (mc && mc->wire != MPI_COMM_NULL) PMPIX_Comm_revoke(mc->wire); /* the wire's own result is clampi's */
    return err;
}

int clampi_pm_revoked(MPI_Comm comm) {
    int flag = 0;
    return comm != MPI_COMM_NULL && PMPIX_Comm_is_revoked(comm, &flag) == MPI_SUCCESS && flag;
}

#else

int clampi_pm_revoked(MPI_Comm comm) {
    (void)comm;
    return 0;
}

#endif
