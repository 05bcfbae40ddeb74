/* User-level failure mitigation (ULFM: Open MPI's MPIX_Comm_revoke) under the preload.
 *
 * Neither carrier sees a revocation by itself: the UCX carrier's messages never touch the
 * program's communicator, the MPI carrier's travel on its duplicate (the wire), and clampi's
 * own collectives (Morton order on the shared heap, src/coll; the MPI carrier's barrier of
 * messages, match_progress.c) wait on memory or messages of their own. After
 * MPIX_Comm_revoke they would hang or succeed where MPI returns MPIX_ERR_REVOKED. So:
 *  - a communicator this process revokes leaves clampi's matching (clampi_pm_comm gives
 *    NULL): its later calls are MPI's own on the program's communicator, which raise
 *    MPIX_ERR_REVOKED through its handler; its clampi state goes at MPI_Comm_free;
 *  - the MPI carrier's wire is revoked with it, so that the MPI interrupts what waits on
 *    it where the MPI tells the other processes (its errors reach the program's handler,
 *    src/msg/carrier_mpi.c);
 *  - a collective on a revoked communicator (revoked here or, where the MPI says so, by
 *    another process) is MPI's own call (clampi_pm_revoked); a process already waiting in
 *    clampi's shared-heap collective asks the MPI now and then (coll_abandon below) and
 *    leaves it with MPIX_ERR_REVOKED, or MPIX_ERR_PROC_FAILED once a process of the
 *    communicator has failed; on a communicator spanning nodes the leaders' inner
 *    communicator is then revoked, so that leaders inside the MPI's exchange leave too;
 *  - another process's revocation (where the MPI tells this one: Open MPI with its fault
 *    tolerance on) reaches the receives waiting in clampi's queue through clampi's waits,
 *    which ask the MPI (revoked_code below, src/msg/revoke.c).
 * Only Open MPI builds ULFM into its extensions header; MPICH 4 and 5 declare
 * MPIX_Comm_revoke but abort in it on ch4, so there is nothing to follow, and this file is
 * empty elsewhere. */
#include "pmpi/ulfm.h"

#if CLAMPI_HAVE_ULFM
#include "clampi/export.h"
#include "coll/coll.h"
#include "pmpi/match_entry.h"

CLAMPI_API int MPIX_Comm_revoke(MPI_Comm comm) {
    int err = PMPIX_Comm_revoke(comm);
    clampi_mcomm *mc = err == MPI_SUCCESS ? clampi_pm_comm_any(comm) : NULL;
    if (mc) {
        clampi_msg_comm_revoked(mc, MPIX_ERR_REVOKED);
        if (mc->wire != MPI_COMM_NULL) PMPIX_Comm_revoke(mc->wire); /* the wire's own result is clampi's */
    }
    return err;
}

int clampi_pm_revoked(MPI_Comm comm) {
    int flag = 0;
    return comm != MPI_COMM_NULL && PMPIX_Comm_is_revoked(comm, &flag) == MPI_SUCCESS && flag;
}

static int revoked_code(MPI_Comm comm) { return clampi_pm_revoked(comm) ? MPIX_ERR_REVOKED : 0; }

/* The shared-heap collectives' check (coll.h), made after a long wait: nothing else of
 * this process drives the MPI meanwhile, and a revocation or failure notice arrives
 * through its progress, which a probe of MPI_COMM_SELF runs. */
static int coll_abandon(MPI_Comm comm) {
    int flag = 0, failed_n = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    if (clampi_pm_revoked(comm)) return MPIX_ERR_REVOKED;
    MPI_Group failed = MPI_GROUP_NULL;
    if (PMPIX_Comm_get_failed(comm, &failed) == MPI_SUCCESS && failed != MPI_GROUP_NULL) {
        PMPI_Group_size(failed, &failed_n);
        if (failed != MPI_GROUP_EMPTY) PMPI_Group_free(&failed);
    }
    return failed_n > 0 ? MPIX_ERR_PROC_FAILED : MPI_SUCCESS;
}

/* The leaders' communicator of a collective spanning nodes, when a wait was abandoned. */
static void coll_revoke_inner(MPI_Comm inner) { PMPIX_Comm_revoke(inner); }

void clampi_pm_ulfm_init(void) {
    clampi_msg_on_revocation(revoked_code, MPIX_ERR_REVOKED);
    clampi_coll_set_abandon_check(coll_abandon, coll_revoke_inner);
}
#endif
