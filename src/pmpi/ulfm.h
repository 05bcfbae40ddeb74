/* User-level failure mitigation under the preload (ulfm.c): Open MPI's ULFM extension, where
 * its extensions header has it (CLAMPI_HAVE_ULFM). */
#ifndef CLAMPI_PMPI_ULFM_H
#define CLAMPI_PMPI_ULFM_H
#include <mpi.h>
#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif
#ifdef OMPI_HAVE_MPI_EXT_FTMPI
#define CLAMPI_HAVE_ULFM 1
#else
#define CLAMPI_HAVE_ULFM 0
#endif

/* comm was revoked (Open MPI's MPIX_Comm_revoke); a constant 0 where the MPI has no ULFM. A
 * collective clampi would run itself goes to the MPI instead, which raises MPIX_ERR_REVOKED. */
/* clampi_pm_ulfm_init, at MPI_Init: clampi's waits watch for other processes'
 * revocations (src/msg/revoke.c), and the shared-heap collectives' waits for revocations
 * and failed processes (ulfm.c); nothing where the MPI has no ULFM. */
#if CLAMPI_HAVE_ULFM
int clampi_pm_revoked(MPI_Comm comm);
void clampi_pm_ulfm_init(void);
#else
static inline int clampi_pm_revoked(MPI_Comm comm) {
    (void)comm;
    return 0;
}
static inline void clampi_pm_ulfm_init(void) {}
#endif
#endif
