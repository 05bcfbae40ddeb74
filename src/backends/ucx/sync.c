/* Synchronization on a UCX window.
 *
 * Passive target: MPI_Win_lock takes the lock word in the target's control block with UCX
 * atomics (shared: fetch-add of 1, undone and retried while the exclusive bit is set;
 * exclusive: compare-and-swap 0 -> CLAMPI_UCX_EXCL), retrying with exponential backoff
 * while progressing the worker. Unlock completes every lane's operations to the target,
 * then releases the word. Flushes complete the calling lane's operations (thread scope:
 * the calling thread's; process scope: the process worker's, i.e. every thread's).
 * Active target: fence = complete everything + a barrier that keeps the worker
 * progressing; PSCW = zero-byte MPI messages on the duplicate of its communicator (win_comm.c) for
 * post/complete notices, plus UCX flushes in complete. */
#include <stdlib.h>
#include <string.h>

#include "services/ucx/context.h"
#include "services/ucx/mpi_polls.h"
#include "backends/ucx/ucx_win.h"
#include "common/options.h"

enum { TAG_POST = 1, TAG_DONE = 2 };

ucs_status_t clampi_ucx_ctl_atomic(clampi_ucx_win *u, clampi_ucx_lane *l, int target, size_t field, ucp_atomic_op_t op,
                                   uint64_t value, uint64_t *result) {
    uint64_t raddr;
    ucp_rkey_h rkey;
    ucs_status_t st = clampi_ucx_lane_ctl(u, l, target, field, &raddr, &rkey);
    if (st != UCS_OK) return st;
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
    param.datatype = ucp_dt_make_contig(sizeof(uint64_t));
    if (result) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        param.reply_buffer = result;
    }
    /* a fetching atomic has happened at the target when it returns: the next flush owes it
     * nothing (the target stays unmarked) */
    ucp_ep_h ep = result ? clampi_ucx_lane_ep_peek(u, l, target) : clampi_ucx_lane_ep(u, l, target);
    return clampi_ucx_lane_wait(l, ucp_atomic_op_nbx(ep, op, &value, 1, raddr, rkey, &param));
}

int clampi_ucx_in_access_epoch(const clampi_ucx_win *u, int target) {
    if (__atomic_load_n(&u->lock_all, __ATOMIC_RELAXED) || __atomic_load_n(&u->fence_open, __ATOMIC_RELAXED) ||
        __atomic_load_n(&u->lock_type[target], __ATOMIC_RELAXED))
        return 1;
    if (__atomic_load_n(&u->start_open, __ATOMIC_RELAXED))
        for (int i = 0; i < u->nstart; i++)
            if (u->start_ranks[i] == target) return 1;
    return 0;
}

static int passive_epoch(const clampi_ucx_win *u, int target) {
    if (__atomic_load_n(&u->lock_all, __ATOMIC_RELAXED)) return 1;
    if (target >= 0) return __atomic_load_n(&u->lock_type[target], __ATOMIC_RELAXED) != 0;
    return __atomic_load_n(&u->nlocks, __ATOMIC_RELAXED) > 0;
}

/* ---- flushes ---- */
/* The flush probe (CLAMPI_FLUSH_PROBE): a diagnostic for tests and benchmarks, off by
 * default (its accounting is a fifth of an idle flush's instructions). Kept here once read:
 * the options table's lookup is a call into another file on every flush. */
static int probe_enabled(void) {
    static int on = -1;
    int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
    if (v < 0) __atomic_store_n(&on, v = clampi_opt_process(CLAMPI_OPT_FLUSH_PROBE).u != 0, __ATOMIC_RELAXED);
    return v;
}

static int flush_lane(clampi_bwin *w, int target) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    if (!passive_epoch(u, target)) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    clampi_ucx_lane *l = clampi_ucx_lane_current(w);
    if (!l) return clampi_bwin_raise(w, CLAMPI_E_UCX);
    uint64_t driven = 0;
    clampi_ucx_thread *t = clampi_ucx_thread_current(u);
    const int probe = t && probe_enabled();
    if (probe) clampi_ucx_probe_begin(t); /* what this call really flushes (lane.c) */
    clampi_ucx_lane_enter(l);
    ucs_status_t st = clampi_ucx_lane_flush(u, l, target, &driven);
    clampi_ucx_lane_leave(l);
    if (t) {
        if (probe) clampi_ucx_probe_end(u, t, l);
        t->stats.flushes++;
        t->stats.flush_ops_driven += driven;
        t->stats.last_flush_ops = driven;
    }
    return st == UCS_OK ? MPI_SUCCESS : clampi_bwin_raise(w, CLAMPI_E_UCX);
}

/* UCX has no local-only completion for RMA: flush_local is a flush (stronger, allowed). */
static int ucx_flush(clampi_bwin *w, int rank) { return flush_lane(w, rank); }
static int ucx_flush_all(clampi_bwin *w) { return flush_lane(w, -1); }

/* ---- passive-target locks ---- */
static int lock_word(clampi_bwin *w, int type, int target) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    clampi_ucx_lane *l = &u->main; /* lock traffic: process lane (any thread may unlock) */
    const size_t field = offsetof(clampi_ucx_ctl, lock_word);
    ucs_status_t st;
    for (unsigned round = 0;;) {
        uint64_t old = 0;
        if (type == MPI_LOCK_EXCLUSIVE) {
            old = CLAMPI_UCX_EXCL;
            st = clampi_ucx_ctl_atomic(u, l, target, field, UCP_ATOMIC_OP_CSWAP, 0, &old);
            if (st != UCS_OK || old == 0) break;
        } else {
            st = clampi_ucx_ctl_atomic(u, l, target, field, UCP_ATOMIC_OP_ADD, 1, &old);
            if (st != UCS_OK || !(old & CLAMPI_UCX_EXCL)) break;
            st = clampi_ucx_ctl_atomic(u, l, target, field, UCP_ATOMIC_OP_ADD, (uint64_t)-1, &old);
            if (st != UCS_OK) break;
        }
        clampi_ucx_backoff(l, &round);
    }
    return st == UCS_OK ? MPI_SUCCESS : clampi_bwin_raise(w, CLAMPI_E_UCX);
}

static int unlock_word(clampi_bwin *w, int type, int target) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    uint64_t old;
    uint64_t delta = type == MPI_LOCK_EXCLUSIVE ? (uint64_t)0 - CLAMPI_UCX_EXCL : (uint64_t)-1;
    ucs_status_t st =
        clampi_ucx_ctl_atomic(u, &u->main, target, offsetof(clampi_ucx_ctl, lock_word), UCP_ATOMIC_OP_ADD, delta, &old);
    return st == UCS_OK ? MPI_SUCCESS : clampi_bwin_raise(w, CLAMPI_E_UCX);
}

/* A fence followed by other synchronization opened no epoch (MPI 12.5.1): forget it. */
static void end_fence_epoch(clampi_ucx_win *u) { __atomic_store_n(&u->fence_open, 0, __ATOMIC_RELAXED); }

static int ucx_lock(clampi_bwin *w, int type, int rank, int assert) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    end_fence_epoch(u);
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE) return clampi_bwin_raise(w, CLAMPI_E_LOCKTYPE);
    if (u->lock_type[rank] || u->lock_all || u->start_open) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    int rc = (assert &MPI_MODE_NOCHECK) ? MPI_SUCCESS : lock_word(w, type, rank);
    if (rc != MPI_SUCCESS) return rc;
    clampi_ucx_dyn_epoch(u);
    __atomic_store_n(&u->lock_type[rank], type | ((assert &MPI_MODE_NOCHECK) ? CLAMPI_UCX_LOCK_NOCHECK : 0),
                     __ATOMIC_RELAXED);
    __atomic_fetch_add(&u->nlocks, 1, __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

static int ucx_unlock(clampi_bwin *w, int rank) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    int type = u->lock_type[rank];
    if (!type) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    if (clampi_ucx_flush_everything(u, rank) != UCS_OK) return clampi_bwin_raise(w, CLAMPI_E_UCX);
    if (!(type & CLAMPI_UCX_LOCK_NOCHECK)) {
        int rc = unlock_word(w, type, rank);
        if (rc != MPI_SUCCESS) return rc;
    }
    __atomic_store_n(&u->lock_type[rank], 0, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&u->nlocks, 1, __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

static int ucx_lock_all(clampi_bwin *w, int assert) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    end_fence_epoch(u);
    if (u->lock_all || u->nlocks || u->start_open) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    if (!(assert &MPI_MODE_NOCHECK))
        for (int t = 0; t < u->nranks; t++) {
            int rc = lock_word(w, MPI_LOCK_SHARED, t);
            if (rc != MPI_SUCCESS) {
                while (t-- > 0) unlock_word(w, MPI_LOCK_SHARED, t);
                return rc;
            }
        }
    clampi_ucx_dyn_epoch(u);
    __atomic_store_n(&u->lock_all, 1 | ((assert &MPI_MODE_NOCHECK) ? CLAMPI_UCX_LOCK_NOCHECK : 0), __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

static int ucx_unlock_all(clampi_bwin *w) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    if (!u->lock_all) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    if (clampi_ucx_flush_everything(u, -1) != UCS_OK) return clampi_bwin_raise(w, CLAMPI_E_UCX);
    if (!(u->lock_all & CLAMPI_UCX_LOCK_NOCHECK))
        for (int t = 0; t < u->nranks; t++) {
            int rc = unlock_word(w, MPI_LOCK_SHARED, t);
            if (rc != MPI_SUCCESS) return rc;
        }
    __atomic_store_n(&u->lock_all, 0, __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

/* MPI_Win_sync: our loads/stores and remote UCX writes meet in memory; a full barrier
 * plus a progress round (software-emulated writes land during progress). */
static int ucx_sync(clampi_bwin *w) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    clampi_ucx_win *u = clampi_ucx_of(w); /* a program polling a flag with MPI_Win_sync polls the worker */
    clampi_ucx_poller_progress(u->main.poller, u->main.worker);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

/* ---- active target ---- */
static int ucx_fence(clampi_bwin *w, int assert) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    if (u->nlocks || u->lock_all || u->start_open || u->post_open) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    if (!(assert &MPI_MODE_NOPRECEDE) && clampi_ucx_flush_everything(u, -1) != UCS_OK)
        return clampi_bwin_raise(w, CLAMPI_E_UCX);
    int rc = clampi_ucx_barrier(u->comm, u->main.worker, u->main.poller);
    if (rc != MPI_SUCCESS) return clampi_bwin_raise_rc(w, rc);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    clampi_ucx_dyn_epoch(u);
    __atomic_store_n(&u->fence_open, !(assert &MPI_MODE_NOSUCCEED), __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

/* Ranks of group in the window's communicator; NULL on failure. */
static int *group_ranks(clampi_ucx_win *u, MPI_Group group, int *n) {
    MPI_Group wg;
    MPI_Comm_group(u->comm, &wg);
    MPI_Group_size(group, n);
    int *in = malloc(sizeof(int) * (size_t)(*n ? *n : 1)), *out = malloc(sizeof(int) * (size_t)(*n ? *n : 1));
    if (in && out) {
        for (int i = 0; i < *n; i++) in[i] = i;
        MPI_Group_translate_ranks(group, *n, in, wg, out);
    } else {
        free(out);
        out = NULL;
    }
    free(in);
    MPI_Group_free(&wg);
    return out;
}

/* Zero-byte messages to every rank of ranks (not waited for: a notice to ourselves is
 * received only later in this thread), or from every rank of ranks, waiting with the
 * worker progressing. */
static int notify(clampi_ucx_win *u, const int *ranks, int n, int tag, int receive) {
    if (!receive) {
        for (int i = 0; i < n; i++) {
            MPI_Request r;
            int rc = PMPI_Isend(NULL, 0, MPI_BYTE, ranks[i], tag, u->comm, &r);
            if (rc != MPI_SUCCESS) return rc;
            PMPI_Request_free(&r);
        }
        return MPI_SUCCESS;
    }
    /* statuses of their own: gcc 12 reads MPICH's MPI_STATUSES_IGNORE, (MPI_Status *)1, as
     * an array of size 0 and warns of an overflow */
    size_t k = (size_t)(n ? n : 1);
    MPI_Request *reqs = malloc(k * sizeof *reqs);
    MPI_Status *statuses = malloc(k * sizeof *statuses);
    if (!reqs || !statuses) {
        free(reqs);
        free(statuses);
        return MPI_ERR_NO_MEM;
    }
    int rc = MPI_SUCCESS, done = 0;
    for (int i = 0; i < n; i++) reqs[i] = MPI_REQUEST_NULL;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = PMPI_Irecv(NULL, 0, MPI_BYTE, ranks[i], tag, u->comm, &reqs[i]);
    while (rc == MPI_SUCCESS && !done) {
        clampi_ucx_poller_progress(u->main.poller, u->main.worker);
        rc = PMPI_Testall(n, reqs, &done, statuses);
    }
    if (rc == MPI_ERR_IN_STATUS) /* the failure itself (under ULFM: a peer's death) */
        for (int i = 0; i < n && rc == MPI_ERR_IN_STATUS; i++)
            if (statuses[i].MPI_ERROR != MPI_SUCCESS && statuses[i].MPI_ERROR != MPI_ERR_PENDING)
                rc = statuses[i].MPI_ERROR;
    /* a failed epoch leaves no receive behind to take the window's next notice */
    for (int i = 0; rc != MPI_SUCCESS && i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL) {
            PMPI_Cancel(&reqs[i]);
            PMPI_Request_free(&reqs[i]);
        }
    free(reqs);
    free(statuses);
    return rc;
}

static int ucx_post(clampi_bwin *w, MPI_Group group, int assert) {
    (void)assert;
    clampi_ucx_win *u = clampi_ucx_of(w);
    end_fence_epoch(u);
    if (u->post_open) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    int n, *ranks = group_ranks(u, group, &n);
    if (!ranks) return clampi_bwin_raise(w, CLAMPI_E_NOMEM);
    int rc = notify(u, ranks, n, clampi_ucx_win_comm_tag(u, TAG_POST), 0);
    if (rc != MPI_SUCCESS) {
        free(ranks);
        return clampi_bwin_raise_rc(w, rc);
    }
    u->post_ranks = ranks;
    u->npost = n;
    __atomic_store_n(&u->post_open, 1, __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

static int ucx_start(clampi_bwin *w, MPI_Group group, int assert) {
    (void)assert;
    clampi_ucx_win *u = clampi_ucx_of(w);
    end_fence_epoch(u);
    if (u->start_open || u->lock_all || u->nlocks) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    int n, *ranks = group_ranks(u, group, &n);
    if (!ranks) return clampi_bwin_raise(w, CLAMPI_E_NOMEM);
    int rc = notify(u, ranks, n, clampi_ucx_win_comm_tag(u, TAG_POST), 1); /* wait for every target's post */
    if (rc != MPI_SUCCESS) {
        free(ranks);
        return clampi_bwin_raise_rc(w, rc);
    }
    clampi_ucx_dyn_epoch(u);
    u->start_ranks = ranks;
    u->nstart = n;
    __atomic_store_n(&u->start_open, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

static int ucx_complete(clampi_bwin *w) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    if (!u->start_open) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    for (int i = 0; i < u->nstart; i++)
        if (clampi_ucx_flush_everything(u, u->start_ranks[i]) != UCS_OK) return clampi_bwin_raise(w, CLAMPI_E_UCX);
    int rc = notify(u, u->start_ranks, u->nstart, clampi_ucx_win_comm_tag(u, TAG_DONE), 0);
    __atomic_store_n(&u->start_open, 0, __ATOMIC_RELAXED);
    free(u->start_ranks);
    u->start_ranks = NULL;
    u->nstart = 0;
    return clampi_bwin_raise_rc(w, rc);
}

/* The target side of PSCW: every origin of the exposure epoch sends one zero-byte
 * TAG_DONE notice in complete (only origins that started on us do, and none can start
 * again before our next post), counted in post_done. */
static int receive_done(clampi_ucx_win *u, int block) {
    int rc = MPI_SUCCESS, tag = clampi_ucx_win_comm_tag(u, TAG_DONE);
    while (u->post_done < u->npost && rc == MPI_SUCCESS) {
        int flag = 0;
        MPI_Status st;
        clampi_ucx_poller_progress(u->main.poller, u->main.worker);
        rc = PMPI_Iprobe(MPI_ANY_SOURCE, tag, u->comm, &flag, &st);
        if (rc == MPI_SUCCESS && flag) {
            rc = PMPI_Recv(NULL, 0, MPI_BYTE, st.MPI_SOURCE, tag, u->comm, MPI_STATUS_IGNORE);
            u->post_done++;
        } else if (!block) {
            break;
        }
    }
    return rc;
}

static void end_exposure(clampi_ucx_win *u) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    free(u->post_ranks);
    u->post_ranks = NULL;
    u->npost = 0;
    u->post_done = 0;
    __atomic_store_n(&u->post_open, 0, __ATOMIC_RELAXED);
}

static int ucx_wait(clampi_bwin *w) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    if (!u->post_open) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    int rc = receive_done(u, 1);
    end_exposure(u);
    return clampi_bwin_raise_rc(w, rc);
}

static int ucx_test(clampi_bwin *w, int *flag) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    if (!u->post_open) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    int rc = receive_done(u, 0);
    *flag = rc == MPI_SUCCESS && u->post_done >= u->npost;
    if (*flag) end_exposure(u);
    return clampi_bwin_raise_rc(w, rc);
}

/* The ops table (put/get: rma_ops.c; accumulates: atomics.c; attach/detach, free: setup.c). */
int clampi_ucx_get(clampi_bwin *, void *, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype);
int clampi_ucx_put(clampi_bwin *, const void *, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype);
int clampi_ucx_rget(clampi_bwin *, void *, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Request *);
int clampi_ucx_rput(clampi_bwin *, const void *, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Request *);
int clampi_ucx_accumulate(clampi_bwin *, const void *, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Op);
int clampi_ucx_get_accumulate(clampi_bwin *, const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Aint,
                              int, MPI_Datatype, MPI_Op);
int clampi_ucx_fetch_and_op(clampi_bwin *, const void *, void *, MPI_Datatype, int, MPI_Aint, MPI_Op);
int clampi_ucx_compare_and_swap(clampi_bwin *, const void *, const void *, void *, MPI_Datatype, int, MPI_Aint);
int clampi_ucx_attach(clampi_bwin *, void *, MPI_Aint);
int clampi_ucx_detach(clampi_bwin *, const void *);
int clampi_ucx_quiesce(clampi_bwin *);
int clampi_ucx_free(clampi_bwin *);

const clampi_backend_ops clampi_backend_ucx = {
    .name = "ucx",
    .caps = CLAMPI_BACKEND_CAP_THREAD_SCOPE | CLAMPI_BACKEND_CAP_ORDER | CLAMPI_BACKEND_CAP_ACC_INTRINSIC,
    .setup = clampi_ucx_win_setup,
    .teardown = clampi_ucx_win_teardown,
    .mem_alloc = clampi_ucx_mem_alloc,
    .mem_free = clampi_ucx_mem_free,
    .get = clampi_ucx_get,
    .rget = clampi_ucx_rget,
    .put = clampi_ucx_put,
    .rput = clampi_ucx_rput,
    .accumulate = clampi_ucx_accumulate,
    .get_accumulate = clampi_ucx_get_accumulate,
    .fetch_and_op = clampi_ucx_fetch_and_op,
    .compare_and_swap = clampi_ucx_compare_and_swap,
    .flush = ucx_flush,
    .flush_all = ucx_flush_all,
    .flush_local = ucx_flush,
    .flush_local_all = ucx_flush_all,
    .lock = ucx_lock,
    .unlock = ucx_unlock,
    .lock_all = ucx_lock_all,
    .unlock_all = ucx_unlock_all,
    .sync = ucx_sync,
    .fence = ucx_fence,
    .start = ucx_start,
    .complete = ucx_complete,
    .post = ucx_post,
    .wait = ucx_wait,
    .test = ucx_test,
    .attach = clampi_ucx_attach,
    .detach = clampi_ucx_detach,
    .quiesce = clampi_ucx_quiesce,
    .free = clampi_ucx_free,
    .thread_stats = clampi_ucx_thread_stats,
    .ext = &clampi_backend_ucx_ext,
};
