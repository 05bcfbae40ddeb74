/* The MPI's own UCX polls. An MPI built on UCX (MPICH's ch4:ucx) waits, in MPI_Barrier or
 * MPI_Wait, by calling ucp_worker_progress on its own worker in a loop, and has no progress
 * callback clampi could register (Open MPI has one: common/progress_hook.h). So clampi
 * defines ucp_worker_progress itself: the preload, or libclampi, comes before libucp in
 * the program's symbol lookup, so the MPI's calls reach clampi's definition, which runs one
 * callback (the UCX service's pass while its clients have work) and then UCX's progress.
 * clampi's own polls (clampi_ucx_progress) never run the callback.
 *
 * Cost to the MPI while no callback is set: 4 instructions per poll, UCX's own poll
 * 160-266 (bench/results/mpi_polls_instructions.txt). */
#ifndef CLAMPI_SERVICES_UCX_MPI_POLLS_H
#define CLAMPI_SERVICES_UCX_MPI_POLLS_H

#include <ucp/api/ucp.h>

#include "common/progress_hook.h"

/* ucp_worker_progress for clampi's own workers (the callback does not run). */
unsigned clampi_ucx_progress(ucp_worker_h worker);
/* 1 once code other than clampi (the MPI; also a UCX-based library or libfabric provider
 * it uses, or the program itself) has polled a UCX worker through clampi's definition: the
 * callback would run. */
int clampi_ucx_mpi_polls_seen(void);
/* 1 while the calling thread runs the callback from inside the MPI's poll: the MPI may hold
 * its own lock meanwhile, so a client must not call MPI there, nor wait for a lock a thread
 * calling MPI may hold (the message layer's AM handler does both: it skips such passes). */
int clampi_ucx_mpi_polls_running_here(void);
/* Sets the callback the MPI's polls run before each ucp_worker_progress (NULL: none). */
void clampi_ucx_mpi_polls_set(clampi_progress_fn fn);

#endif
