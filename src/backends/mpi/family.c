/* The MPI backend's variant for windows with duplicates (family.h). */
#include "backends/mpi/family.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct clampi_mpi_family {
    int *locks; /* per target: locked through some member */
    int lock_all;
} clampi_mpi_family;

static clampi_mpi_family *family_of(clampi_bwin *b) { return (clampi_mpi_family *)b->variant; }

static int fam_lock(clampi_bwin *b, int type, int rank, int assert) {
    clampi_mpi_family *f = family_of(b);
    if (f->lock_all || f->locks[rank]) return clampi_bwin_raise(b, CLAMPI_E_RMA_SYNC);
    int rc = clampi_backend_mpi.lock(b, type, rank, assert);
    if (rc == MPI_SUCCESS) f->locks[rank] = 1;
    return rc;
}
static int fam_unlock(clampi_bwin *b, int rank) {
    clampi_mpi_family *f = family_of(b);
    if (!f->locks[rank]) return clampi_bwin_raise(b, CLAMPI_E_RMA_SYNC);
    int rc = clampi_backend_mpi.unlock(b, rank);
    if (rc == MPI_SUCCESS) f->locks[rank] = 0;
    return rc;
}
static int fam_lock_all(clampi_bwin *b, int assert) {
    clampi_mpi_family *f = family_of(b);
    int any = f->lock_all;
    for (int t = 0; t < b->nranks && !any; t++) any = f->locks[t];
    if (any) return clampi_bwin_raise(b, CLAMPI_E_RMA_SYNC);
    int rc = clampi_backend_mpi.lock_all(b, assert);
    if (rc == MPI_SUCCESS) f->lock_all = 1;
    return rc;
}
static int fam_unlock_all(clampi_bwin *b) {
    clampi_mpi_family *f = family_of(b);
    if (!f->lock_all) return clampi_bwin_raise(b, CLAMPI_E_RMA_SYNC);
    int rc = clampi_backend_mpi.unlock_all(b);
    if (rc == MPI_SUCCESS) f->lock_all = 0;
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

void clampi_mpi_family_join(clampi_bwin *parent, clampi_bwin *child) {
    if (parent->ops != &clampi_backend_mpi && parent->ops != &family_ops) return; /* UCX: its own epoch state */
    pthread_once(&once, build);
    if (!parent->variant) {
        clampi_mpi_family *f = calloc(1, sizeof *f);
        if (f) f->locks = calloc((size_t)parent->nranks, sizeof *f->locks);
        if (!f || !f->locks) { /* untracked, as before any duplicate existed */
            free(f);
            return;
        }
        parent->variant = f;
    }
    parent->ops = &family_ops;
    child->ops = &family_ops;
    child->variant = parent->variant;
}

void clampi_mpi_family_empty(clampi_bwin *parent) {
    if (parent->ops == &family_ops) parent->ops = &clampi_backend_mpi;
}

void clampi_mpi_family_free(clampi_bwin *parent) {
    if (parent->state || !parent->variant) return; /* not an MPI window's lock table */
    clampi_mpi_family *f = parent->variant;
    parent->variant = NULL;
    free(f->locks);
    free(f);
}
