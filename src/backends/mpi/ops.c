/* The MPI backend: every op is the PMPI_ call on the window's MPI window. */
#include "backends/mpi/family.h"
#include "backends/backend.h"

static int mpi_get(clampi_bwin *w, void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt) {
    return PMPI_Get(o, oc, ot, t, d, tc, tt, w->win);
}
static int mpi_rget(clampi_bwin *w, void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
                    MPI_Request *r) {
    return PMPI_Rget(o, oc, ot, t, d, tc, tt, w->win, r);
}
static int mpi_put(clampi_bwin *w, const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt) {
    return PMPI_Put(o, oc, ot, t, d, tc, tt, w->win);
}
static int mpi_rput(clampi_bwin *w, const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
                    MPI_Request *r) {
    return PMPI_Rput(o, oc, ot, t, d, tc, tt, w->win, r);
}
static int mpi_acc(clampi_bwin *w, const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
                   MPI_Op op) {
    return PMPI_Accumulate(o, oc, ot, t, d, tc, tt, op, w->win);
}
static int mpi_get_acc(clampi_bwin *w, const void *o, int oc, MPI_Datatype ot, void *r, int rc, MPI_Datatype rt, int t,
                       MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op) {
    return PMPI_Get_accumulate(o, oc, ot, r, rc, rt, t, d, tc, tt, op, w->win);
}
static int mpi_fop(clampi_bwin *w, const void *o, void *r, MPI_Datatype type, int t, MPI_Aint d, MPI_Op op) {
    return PMPI_Fetch_and_op(o, r, type, t, d, op, w->win);
}
static int mpi_cas(clampi_bwin *w, const void *o, const void *c, void *r, MPI_Datatype type, int t, MPI_Aint d) {
    return PMPI_Compare_and_swap(o, c, r, type, t, d, w->win);
}
static int mpi_flush(clampi_bwin *w, int rank) { return PMPI_Win_flush(rank, w->win); }
static int mpi_flush_all(clampi_bwin *w) { return PMPI_Win_flush_all(w->win); }
static int mpi_flush_local(clampi_bwin *w, int rank) { return PMPI_Win_flush_local(rank, w->win); }
static int mpi_flush_local_all(clampi_bwin *w) { return PMPI_Win_flush_local_all(w->win); }
static int mpi_lock(clampi_bwin *w, int type, int rank, int assert) {
    return PMPI_Win_lock(type, rank, assert, w->win);
}
static int mpi_unlock(clampi_bwin *w, int rank) { return PMPI_Win_unlock(rank, w->win); }
static int mpi_lock_all(clampi_bwin *w, int assert) { return PMPI_Win_lock_all(assert, w->win); }
static int mpi_unlock_all(clampi_bwin *w) { return PMPI_Win_unlock_all(w->win); }
static int mpi_sync(clampi_bwin *w) { return PMPI_Win_sync(w->win); }
static int mpi_fence(clampi_bwin *w, int assert) { return PMPI_Win_fence(assert, w->win); }
static int mpi_start(clampi_bwin *w, MPI_Group g, int assert) { return PMPI_Win_start(g, assert, w->win); }
static int mpi_complete(clampi_bwin *w) { return PMPI_Win_complete(w->win); }
static int mpi_post(clampi_bwin *w, MPI_Group g, int assert) { return PMPI_Win_post(g, assert, w->win); }
static int mpi_wait(clampi_bwin *w) { return PMPI_Win_wait(w->win); }
static int mpi_attach(clampi_bwin *w, void *base, MPI_Aint size) { return PMPI_Win_attach(w->win, base, size); }
static int mpi_detach(clampi_bwin *w, const void *base) { return PMPI_Win_detach(w->win, base); }
static int mpi_free(clampi_bwin *w) {
    MPI_Win shm = w->shm_win, win = w->win;
    int rc = PMPI_Win_free(&win);
    if (rc != MPI_SUCCESS) return rc;
    if (shm != MPI_WIN_NULL && shm != w->win) PMPI_Win_free(&shm);
    if (w->shm_comm != MPI_COMM_NULL) PMPI_Comm_free(&w->shm_comm);
    return MPI_SUCCESS;
}

static int mpi_test(clampi_bwin *w, int *flag) { return PMPI_Win_test(w->win, flag); }

const clampi_backend_ops clampi_backend_mpi = {
    .name = "mpi",
    .get = mpi_get,
    .rget = mpi_rget,
    .put = mpi_put,
    .rput = mpi_rput,
    .accumulate = mpi_acc,
    .get_accumulate = mpi_get_acc,
    .fetch_and_op = mpi_fop,
    .compare_and_swap = mpi_cas,
    .flush = mpi_flush,
    .flush_all = mpi_flush_all,
    .flush_local = mpi_flush_local,
    .flush_local_all = mpi_flush_local_all,
    .lock = mpi_lock,
    .unlock = mpi_unlock,
    .lock_all = mpi_lock_all,
    .unlock_all = mpi_unlock_all,
    .sync = mpi_sync,
    .fence = mpi_fence,
    .start = mpi_start,
    .complete = mpi_complete,
    .post = mpi_post,
    .wait = mpi_wait,
    .attach = mpi_attach,
    .detach = mpi_detach,
    .free = mpi_free,
    .test = mpi_test,
    .family_join = clampi_mpi_family_join,
    .family_empty = clampi_mpi_family_empty,
    .family_free = clampi_mpi_family_free,
};
