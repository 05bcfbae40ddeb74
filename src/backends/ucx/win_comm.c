/* The communicator a UCX window talks on: its fence and free barriers, its setup's
 * exchanges, its PSCW notices.
 *
 * The windows of one communicator share one duplicate of it, each with a slot of its own
 * that sets its PSCW tags. A duplicate per window costs the MPI one more communicator per
 * window, and some MPIs give every communicator memory of their own: Intel MPI's on-node
 * collectives run out of shared memory with a thousand windows alive (MPICH's test
 * rma/window_creation), where the MPI's own windows do not.
 *
 * Sharing is safe because clampi's collectives on the duplicate happen inside
 * window-collective calls (create, fence, free), which every process makes in the same
 * order, one thread at a time. Each window keeps a duplicate of its own:
 *   - under MPI_THREAD_MULTIPLE, where two threads may fence two windows at once;
 *   - when every slot is taken;
 *   - when the processes disagree (a program that created and freed windows of one
 *     communicator in different orders): every process sees the same agreement.
 *
 * The shared duplicate's record hangs on the parent communicator as an attribute, attached
 * at its first window (under MPI_THREAD_MULTIPLE none is). The last window frees the
 * duplicate (the record stays, empty, for the parent's next window); freeing the parent
 * takes an empty record with it, or leaves one in use to its windows, the last of which
 * frees it. */
#include <pthread.h>
#include <stdlib.h>

#include "backends/ucx/ucx_win.h"

enum { MOST_SLOTS = 4096 };

struct clampi_ucx_wcomm {
    MPI_Comm comm;   /* the duplicate */
    MPI_Comm parent; /* MPI_COMM_NULL once the program freed it */
    int refs;        /* windows on the duplicate */
    int nslots;
    unsigned char *used;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int keyval = MPI_KEYVAL_INVALID;

/* The parent's attributes are being deleted (it is freed): an empty record goes with it;
 * one in use stays with its windows, the last of which frees it. */
static int parent_freed(MPI_Comm parent, int key, void *value, void *extra) {
    (void)parent, (void)key, (void)extra;
    clampi_ucx_wcomm *rec = value;
    pthread_mutex_lock(&lock);
    const int unused = rec->refs == 0;
    rec->parent = MPI_COMM_NULL;
    pthread_mutex_unlock(&lock);
    if (unused) {
        free(rec->used);
        free(rec);
    }
    return MPI_SUCCESS;
}

static int slots_for_tags(void) {
    int *ub = NULL, flag = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    long most = flag && ub ? ((long)*ub - 2) / 2 : 32765 / 2; /* the standard's least MPI_TAG_UB */
    return most < MOST_SLOTS ? (int)most : MOST_SLOTS;
}

/* The record on parent, attached now (empty) if it had none; NULL if that failed. *slot:
 * the lowest free slot in it (0 in an empty record; -1: none free). */
static clampi_ucx_wcomm *record_on(MPI_Comm parent, int *slot) {
    *slot = 0;
    pthread_mutex_lock(&lock);
    if (keyval == MPI_KEYVAL_INVALID) PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, parent_freed, &keyval, NULL);
    const int key = keyval;
    pthread_mutex_unlock(&lock);
    if (key == MPI_KEYVAL_INVALID) return NULL;
    clampi_ucx_wcomm *rec = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(parent, key, &rec, &flag) != MPI_SUCCESS) return NULL;
    if (flag) {
        if (rec->refs > 0) *slot = -1;
        for (int i = 0; rec->refs > 0 && i < rec->nslots && *slot < 0; i++)
            if (!rec->used[i]) *slot = i;
        return rec;
    }
    rec = calloc(1, sizeof *rec);
    const int n = slots_for_tags();
    unsigned char *used = rec ? calloc((size_t)n, 1) : NULL;
    if (!used || PMPI_Comm_set_attr(parent, key, rec) != MPI_SUCCESS) {
        free(used);
        free(rec);
        return NULL;
    }
    rec->comm = MPI_COMM_NULL;
    rec->parent = parent;
    rec->nslots = n;
    rec->used = used;
    return rec;
}

int clampi_ucx_win_comm_open(clampi_ucx_win *u, MPI_Comm parent) {
    u->wcomm = NULL;
    u->slot = 0;
    u->comm = MPI_COMM_NULL;
    int slot = 0;
    clampi_ucx_wcomm *rec = u->mt ? NULL : record_on(parent, &slot);
    const int want = rec != NULL && slot >= 0, has = rec != NULL && rec->refs > 0;
    /* everyone's answers: whether all want to share, all have a duplicate, all chose one slot */
    int mine[5] = {!want, has, -has, slot, -slot}, all[5];
    int rc = PMPI_Allreduce(mine, all, 5, MPI_INT, MPI_MAX, parent);
    if (rc != MPI_SUCCESS) return rc;
    const int share = !all[0] && all[1] == -all[2] && all[3] == -all[4];
    if (!(share && has)) {
        if ((rc = PMPI_Comm_dup(parent, &u->comm)) != MPI_SUCCESS) return rc;
        /* its failures come back to clampi (fence, PSCW and free raise them on the window),
         * never to the handler the parent had when its first window came (should this
         * fail, that handler stays: no worse than before, and every process goes on alike) */
        (void)PMPI_Comm_set_errhandler(u->comm, MPI_ERRORS_RETURN);
    }
    if (!share) return MPI_SUCCESS; /* the window keeps its duplicate for itself */
    /* shared: a duplicate in use, or the one just made (the first window of parent, or the
     * first since its windows were all freed) */
    pthread_mutex_lock(&lock);
    if (!has) rec->comm = u->comm;
    rec->used[slot] = 1;
    rec->refs++;
    pthread_mutex_unlock(&lock);
    u->wcomm = rec, u->slot = slot, u->comm = rec->comm;
    return MPI_SUCCESS;
}

/* The record is never taken off the parent here: a window may be freed inside the deletion
 * of the parent's attributes (a library's callback freeing the window it cached there), and
 * deleting an attribute of a communicator whose attributes the MPI is deleting corrupts
 * its list. An unused record stays, empty, until the parent goes or gets a window again. */
void clampi_ucx_win_comm_close(clampi_ucx_win *u) {
    clampi_ucx_wcomm *rec = u->wcomm;
    u->wcomm = NULL;
    if (!rec) {
        if (u->comm != MPI_COMM_NULL) PMPI_Comm_free(&u->comm);
        return;
    }
    u->comm = MPI_COMM_NULL;
    pthread_mutex_lock(&lock);
    rec->used[u->slot] = 0;
    const int last = --rec->refs == 0, detached = rec->parent == MPI_COMM_NULL;
    MPI_Comm dup = rec->comm;
    if (last) rec->comm = MPI_COMM_NULL;
    pthread_mutex_unlock(&lock);
    if (!last) return;
    PMPI_Comm_free(&dup);
    if (detached) {
        free(rec->used);
        free(rec);
    }
}

int clampi_ucx_win_comm_tag(const clampi_ucx_win *u, int which) { return which + 2 * u->slot; }
