/* Windows with duplicates on the MPI backend: a variant of the MPI backend's table.
 *
 * Duplicates of an MPI window share one MPI window, so MPI itself shares their
 * synchronization state, but MPI libraries do not all check a second lock on a target the
 * process already holds (Open MPI 4.1's osc/rdma deadlocks in it). While a window has
 * duplicates, every member runs on this variant: the MPI backend's table, with lock/unlock/
 * lock_all/unlock_all tracked in a table the members share (b->variant), so that locking
 * through one member when another holds the lock raises MPI_ERR_RMA_SYNC instead. Lock
 * state taken before the first duplicate existed is not known to it (documented). */
#ifndef CLAMPI_BACKENDS_MPI_FAMILY_H
#define CLAMPI_BACKENDS_MPI_FAMILY_H
#include "backends/backend.h"

/* child joins parent's family (both switch to the variant); no-op unless parent is an MPI
 * window. */
void clampi_mpi_family_join(clampi_bwin *parent, clampi_bwin *child);
/* parent has no duplicates left: back to the MPI backend's table (the lock table stays). */
void clampi_mpi_family_empty(clampi_bwin *parent);
/* Frees parent's lock table (its window's release). */
void clampi_mpi_family_free(clampi_bwin *parent);
#endif
