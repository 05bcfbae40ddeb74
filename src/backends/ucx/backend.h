/* The UCX window backend's entry points for the window layer (src/rma/window.c). */
#ifndef CLAMPI_BACKENDS_UCX_BACKEND_H
#define CLAMPI_BACKENDS_UCX_BACKEND_H
#include <mpi.h>

#include "rma/window.h"

/* Collective over comm, after the MPI window and the clampi state exist: sets up UCX for
 * the window (workers, endpoints, registration of [base, base + size) unless dynamic or
 * already registered (memh from clampi_ucx_mem_alloc), the
 * control block, rkey exchange, progress thread) and switches w->be to the UCX table.
 * Returns MPI_SUCCESS or an error code on every rank alike (w unchanged on failure). */
int clampi_ucx_win_setup(clampi_win *w, MPI_Comm comm, void *base, MPI_Aint size, int dynamic, void *memh);
/* Memory for CMPI_Win_allocate on a UCX window, allocated by UCX so that its shared-memory
 * transports reach it one-sidedly; handle goes to clampi_ucx_win_setup (memh) and is freed
 * with clampi_ucx_mem_free after the window. Returns an MPI error code. */
int clampi_ucx_mem_alloc(size_t size, void **base, void **handle);
void clampi_ucx_mem_free(void *handle);
/* Collective: frees the UCX state of w (not w->win); w is an MPI-backend window again. */
void clampi_ucx_win_teardown(clampi_win *w);
/* The calling thread's counters on w (a UCX window). */
void clampi_ucx_thread_stats(clampi_win *w, CMPIX_Win_thread_stats *stats);
#endif
