/* User-level failure mitigation under the preload (ulfm.c). */
#ifndef CLAMPI_PMPI_ULFM_H
#define CLAMPI_PMPI_ULFM_H
#include <mpi.h>

/* comm was revoked (Open MPI's MPIX_Comm_revoke); 0 where the MPI has no ULFM. A collective
 * clampi would run itself goes to the MPI instead, which raises MPIX_ERR_REVOKED. */
int clampi_pm_revoked(MPI_Comm comm);
#endif
