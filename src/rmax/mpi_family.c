/* Duplicates of MPI-backend windows share one MPI window, so MPI itself shares their
 * synchronization state, but MPI libraries do not all check a second lock on a target the
 * process already holds (Open MPI 4.1's osc/rdma deadlocks in it). While a window has
 * duplicates, every member of the family runs on this table: the MPI backend's, with
 * lock/unlock/lock_all/unlock_all tracked in the family's root, so that locking through
 * one member when another holds the lock raises MPI_ERR_RMA_SYNC instead. Lock state taken
 * before the first duplicate existed is not known to it (documented). */
#include <pthread.h>
#include <stdlib.h>

#include "backends/backend.h"
#include "rma/errors.h"
#include "rmax/family.h"

static clampi_rmax *root_of(clampi_win *w) {
    return w->rmax->kind == CLAMPI_RMAX_PARENT ? w->rmax : w->rmax->parent->rmax;
}

static int fam_lock(clampi_bwin *bw, int type, int rank, int assert) {
    clampi_win *w = clampi_win_of(bw);
    clampi_rmax *r = root_of(w);
    if (r->lock_all || (r->locks && r->locks[rank])) return clampi_raise_win(w, CLAMPI_E_RMA_SYNC);
    int rc = clampi_backend_mpi.lock(&w->b, type, rank, assert);
    if (rc == MPI_SUCCESS && r->locks) r->locks[rank] = 1;
    return rc;
}
static int fam_unlock(clampi_bwin *bw, int rank) {
    clampi_win *w = clampi_win_of(bw);
    clampi_rmax *r = root_of(w);
    if (r->locks && !r->locks[rank]) return clampi_raise_win(w, CLAMPI_E_RMA_SYNC);
    int rc = clampi_backend_mpi.unlock(&w->b, rank);
    if (rc == MPI_SUCCESS && r->locks) r->locks[rank] = 0;
    return rc;
}
static int fam_lock_all(clampi_bwin *bw, int assert) {
    clampi_win *w = clampi_win_of(bw);
    clampi_rmax *r = root_of(w);
    int any = r->lock_all;
    for (int t = 0; r->locks && t < w->b.nranks && !any; t++) any = r->locks[t];
    if (any) return clampi_raise_win(w, CLAMPI_E_RMA_SYNC);
    int rc = clampi_backend_mpi.lock_all(&w->b, assert);
    if (rc == MPI_SUCCESS) r->lock_all = 1;
    return rc;
}
static int fam_unlock_all(clampi_bwin *bw) {
    clampi_win *w = clampi_win_of(bw);
    clampi_rmax *r = root_of(w);
    if (!r->lock_all) return clampi_raise_win(w, CLAMPI_E_RMA_SYNC);
    int rc = clampi_backend_mpi.unlock_all(&w->b);
    if (rc == MPI_SUCCESS) r->lock_all = 0;
    return rc;
}

static clampi_backend_ops family_ops;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void build(void) {
    family_ops = clampi_backend_mpi;
    family_ops.lock = fam_lock;
    family_ops.unlock = fam_unlock;
    family_ops.lock_all = fam_lock_all;
    family_ops.unlock_all = fam_unlock_all;
}

void clampi_rmax_mpi_family_enter(clampi_win *parent, clampi_win *child) {
    if (parent->b.ops != &clampi_backend_mpi && parent->b.ops != &family_ops) return; /* UCX: its own epoch state */
    pthread_once(&once, build);
    clampi_rmax *r = parent->rmax;
    if (!r->locks) r->locks = calloc((size_t)parent->b.nranks, sizeof *r->locks);
    parent->b.ops = &family_ops;
    child->b.ops = &family_ops;
}

void clampi_rmax_mpi_family_leave(clampi_win *parent) {
    if (parent->b.ops == &family_ops && parent->rmax->nchildren == 0) parent->b.ops = &clampi_backend_mpi;
}
