/* A barrier on MPI_COMM_WORLD at the start of MPI_Finalize, on the MPIs that need one:
 * MPICH before 4.2 on UCX, whose finalize can hang when the ranks reach it apart
 * (finalize_barrier.c says why). */
#ifndef CLAMPI_SERVICES_FINALIZE_BARRIER_H
#define CLAMPI_SERVICES_FINALIZE_BARRIER_H

/* Arms it (once per process; a no-op on other MPIs). Call after MPI is initialised and
 * before setting MPI_COMM_SELF attributes whose delete callbacks must run before it. */
void clampi_finalize_barrier_arm(void);

#endif
