/* The memory-handle variant of UCX windows: its operation table and the handle's
 * liveness (memhandle.h). Synchronization calls are refused (MPI_ERR_RMA_SYNC): lock and
 * unlock the parent; accumulates run through the parent's table at the handle's absolute
 * address (they need its accumulate lock anyway); flushes complete the endpoint and check
 * the handle is still live. */
#include "backends/ucx/memhandle.h"

#include <stdlib.h>
#include <string.h>

#include "backends/access.h"
#include "services/ucx/context.h"
#include "backends/ucx/target.h"
#include "backends/ucx/ucx_win.h"
#include "common/greq.h"
#include "common/options.h"

static clampi_mh_win *mh_of(clampi_bwin *w) { return (clampi_mh_win *)w->variant; }

/* ---- the handle ---------------------------------------------------------------------- */

/* A wait on the parent's worker (noted as the application's poll: clampi_ucx_wait). */
static ucs_status_t wait_here(clampi_mh_win *m, void *request) { return clampi_ucx_wait(m->worker, request); }

static int submitted(void *r) {
    if (UCS_PTR_IS_ERR(r)) return MPI_ERR_OTHER;
    if (r) ucp_request_free(r); /* completion is awaited by the window's flush */
    return MPI_SUCCESS;
}

ucs_status_t clampi_ucx_mh_fetch_word(clampi_mh_win *m, uint64_t *g) {
    ucp_request_param_t p = {0};
    m->remote_checks++;
    return wait_here(m, ucp_get_nbx(m->ep, g, sizeof *g, m->gen_addr, m->gen_rkey, &p));
}

/* A window that keeps fetching the word from another node subscribes (mh_invalidate.c). */
static int subscribe_due(clampi_mh_win *m) {
    unsigned after = (unsigned)clampi_opt_process(CLAMPI_OPT_MH_SUBSCRIBE_AFTER).u;
    return after && m->remote_checks >= after && !__atomic_load_n(&m->subscribe_tried, __ATOMIC_RELAXED) &&
           !__atomic_exchange_n(&m->subscribe_tried, 1, __ATOMIC_ACQ_REL);
}

/* The liveness word through word, loaded from m->gen_ptr earlier: 0 (released) if the pointer
 * has moved since, for then the window's copy was given back (the handle was released) and
 * its entry may already hold another window's word. */
static uint64_t word_value(clampi_mh_win *m, const uint64_t *word) {
    const uint64_t g = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&m->gen_ptr, __ATOMIC_ACQUIRE) == word ? g : 0;
}

int clampi_ucx_mh_check_live(clampi_mh_win *m) {
    if (__atomic_load_n(&m->dead, __ATOMIC_RELAXED)) return clampi_error_code(CLAMPI_E_RANGE);
    const uint64_t *word = __atomic_load_n(&m->gen_ptr, __ATOMIC_ACQUIRE);
    if (!word && subscribe_due(m)) {
        if (clampi_ucx_mh_subscribe(m) == clampi_error_code(CLAMPI_E_RANGE)) {
            __atomic_store_n(&m->dead, 1, __ATOMIC_RELAXED);
            return clampi_error_code(CLAMPI_E_RANGE);
        }
        word = __atomic_load_n(&m->gen_ptr, __ATOMIC_ACQUIRE); /* NULL: no copy, the word is fetched */
    }
    uint64_t g;
    if (word) {
        g = word_value(m, word);
    } else {
        ucs_status_t st = clampi_ucx_mh_fetch_word(m, &g);
        if (st != UCS_OK) return clampi_ucx_status_to_mpi(st);
    }
    if (g != m->generation) {
        __atomic_store_n(&m->dead, 1, __ATOMIC_RELAXED);
        if (word) clampi_ucx_mh_copy_read_dead(m, word);
        return clampi_error_code(CLAMPI_E_RANGE);
    }
    return MPI_SUCCESS;
}

/* Completes the window's operations at the owner and checks the handle is live. */
static int mh_flush_handle(clampi_mh_win *m) {
    if (__atomic_load_n(&m->dead, __ATOMIC_RELAXED)) return clampi_error_code(CLAMPI_E_RANGE);
    ucp_request_param_t p = {0};
    const uint64_t *word = __atomic_load_n(&m->gen_ptr, __ATOMIC_ACQUIRE);
    if (word && (m->direct || __atomic_load_n(&m->mirror, __ATOMIC_ACQUIRE))) {
        /* Loads and stores are complete; what went over the endpoint (accumulates, the
         * operations of a subscribed window) is completed, then the word read here: the
         * owner's own, or the copy its release clears before it returns. */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        ucs_status_t st = wait_here(m, ucp_ep_flush_nbx(m->ep, &p));
        if (st != UCS_OK) return clampi_ucx_status_to_mpi(st);
        if (word_value(m, word) != m->generation) {
            __atomic_store_n(&m->dead, 1, __ATOMIC_RELAXED);
            clampi_ucx_mh_copy_read_dead(m, word);
            return clampi_error_code(CLAMPI_E_RANGE);
        }
        return MPI_SUCCESS;
    }
    /* The liveness word travels with the flush: issued after the window's operations,
     * completed by the same endpoint flush. (A fence and the read alone would not do: UCX
     * 1.13's fence orders each lane only, and on one node the word, in UCX-allocated
     * memory, and the data, in the program's, take different lanes; from UCX 1.16 the
     * fence flushes the whole worker.) */
    if (!word) m->remote_checks++;
    int rc = submitted(ucp_get_nbx(m->ep, &m->gen_seen, sizeof m->gen_seen, m->gen_addr, m->gen_rkey, &p));
    if (rc != MPI_SUCCESS) return rc;
    ucs_status_t st = wait_here(m, ucp_ep_flush_nbx(m->ep, &p));
    if (st != UCS_OK) return clampi_ucx_status_to_mpi(st);
    if (m->gen_seen != m->generation) {
        __atomic_store_n(&m->dead, 1, __ATOMIC_RELAXED);
        return clampi_error_code(CLAMPI_E_RANGE);
    }
    return MPI_SUCCESS;
}

void clampi_ucx_mh_adopt(clampi_bwin *b, clampi_bwin *parent, clampi_mh_win *m) {
    m->refs = 1;
    m->parent = parent;
    b->variant = m;
}

void clampi_ucx_mh_share(clampi_bwin *b, const clampi_bwin *from) {
    clampi_mh_win *m = from->variant;
    m->refs++;
    b->variant = m;
}

void clampi_ucx_mh_release(clampi_bwin *b) {
    clampi_mh_win *m = b->variant;
    b->variant = NULL;
    if (!m || --m->refs > 0) return;
    clampi_ucx_mh_close(m); /* gen_rkey belongs to the parent's cache */
}

/* ---- the operation table ------------------------------------------------------------- */

/* Checks common to every operation: the handle's owner, liveness, epoch, range. */
static int check(clampi_bwin *w, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                 MPI_Datatype ttype, clampi_access *a) {
    clampi_mh_win *m = mh_of(w);
    if (target != m->target) return clampi_bwin_raise(w, CLAMPI_E_RANK);
    if (__atomic_load_n(&m->dead, __ATOMIC_RELAXED)) return clampi_bwin_raise(w, CLAMPI_E_RANGE);
    int err = clampi_access_check(w, ocount, otype, target, disp, tcount, ttype, a);
    if (err >= 0) return clampi_bwin_raise(w, (clampi_error)err);
    if (!clampi_ucx_target_in_epoch(w, target)) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    if (a->target.bytes && (!a->target.contiguous || !a->origin.contiguous))
        return clampi_bwin_raise(w, CLAMPI_E_TYPE_LAYOUT);
    /* Last: is the handle still live (memhandle.h)? A released handle lets nothing in. */
    int rc = clampi_ucx_mh_check_live(m);
    if (rc != MPI_SUCCESS)
        return clampi_bwin_raise(w, rc == clampi_error_code(CLAMPI_E_RANGE) ? CLAMPI_E_RANGE : CLAMPI_E_UCX);
    return MPI_SUCCESS;
}

static int transfer(clampi_bwin *w, int is_put, void *origin, int oc, MPI_Datatype ot, int target, MPI_Aint disp,
                    int tc, MPI_Datatype tt) {
    clampi_access a;
    int rc = check(w, oc, ot, target, disp, tc, tt, &a);
    if (rc != MPI_SUCCESS || a.target.bytes == 0) return rc;
    clampi_mh_win *m = mh_of(w);
    if (m->direct && (uint64_t)a.offset >= m->direct_lo && (uint64_t)a.offset + a.target.bytes <= m->direct_hi) {
        /* zero copy: the owner's bytes are mapped here */
        char *buf = (char *)origin + a.origin.lo;
        m->direct_ops++;
        if (is_put)
            memcpy(m->direct + a.offset, buf, a.target.bytes);
        else
            memcpy(buf, m->direct + a.offset, a.target.bytes);
        return MPI_SUCCESS;
    }
    clampi_ucx_target t;
    rc = clampi_ucx_target_begin(w, target, a.offset, a.target.bytes, &t);
    if (rc != MPI_SUCCESS) return clampi_bwin_raise(w, (clampi_error)(-1 - rc));
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    char *buf = (char *)origin + a.origin.lo;
    void *req = is_put ? ucp_put_nbx(t.ep, buf, a.target.bytes, t.raddr, t.rkey, &p)
                       : ucp_get_nbx(t.ep, buf, a.target.bytes, t.raddr, t.rkey, &p);
    int ok = !UCS_PTR_IS_ERR(req);
    if (ok && req) ucp_request_free(req); /* completed by the next flush */
    clampi_ucx_target_end(w, target, &t, ok);
    return ok ? MPI_SUCCESS : clampi_bwin_raise(w, CLAMPI_E_UCX);
}

static int mh_get(clampi_bwin *bw, void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt) {
    clampi_bwin *w = bw;
    return transfer(w, 0, o, oc, ot, t, d, tc, tt);
}
static int mh_put(clampi_bwin *bw, const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt) {
    clampi_bwin *w = bw;
    return transfer(w, 1, (void *)o, oc, ot, t, d, tc, tt);
}

/* Flush: the endpoint to the owner, plus the liveness word (memhandle.c). */
static int mh_flush(clampi_bwin *bw, int rank) {
    clampi_bwin *w = bw;
    clampi_mh_win *m = mh_of(w);
    if (rank != m->target) return clampi_bwin_raise(w, CLAMPI_E_RANK);
    int rc = mh_flush_handle(m);
    return rc == MPI_SUCCESS
               ? rc
               : clampi_bwin_raise(w, rc == clampi_error_code(CLAMPI_E_RANGE) ? CLAMPI_E_RANGE : CLAMPI_E_UCX);
}
static int mh_flush_all(clampi_bwin *bw) {
    clampi_bwin *w = bw;
    return mh_flush(bw, mh_of(w)->target);
}

static int mh_request_op(clampi_bwin *w, int rc, MPI_Request *req) {
    /* Completed at the owner before the request is returned (as the UCX backend's). */
    if (rc == MPI_SUCCESS) rc = mh_flush(w, mh_of(w)->target);
    return rc == MPI_SUCCESS ? clampi_request_done(req) : rc;
}
static int mh_rget(clampi_bwin *bw, void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
                   MPI_Request *r) {
    return mh_request_op(bw, mh_get(bw, o, oc, ot, t, d, tc, tt), r);
}
static int mh_rput(clampi_bwin *bw, const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
                   MPI_Request *r) {
    return mh_request_op(bw, mh_put(bw, o, oc, ot, t, d, tc, tt), r);
}

/* Accumulates: the parent's operation at the handle's absolute address. */
#define ABS(w, d) ((MPI_Aint)(mh_of(w)->base + (uint64_t)(d) * (uint64_t)mh_of(w)->disp_unit))
#define ACC_CHECK(w, t, d, tc, tt)                 \
    clampi_access a_;                              \
    int rc_ = check(w, tc, tt, t, d, tc, tt, &a_); \
    if (rc_ != MPI_SUCCESS) return rc_
static int mh_accumulate(clampi_bwin *bw, const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc,
                         MPI_Datatype tt, MPI_Op op) {
    clampi_bwin *w = bw;
    ACC_CHECK(w, t, d, tc, tt);
    clampi_bwin *p = mh_of(w)->parent;
    return p->ops->accumulate(p, o, oc, ot, t, ABS(w, d), tc, tt, op);
}
static int mh_get_accumulate(clampi_bwin *bw, const void *o, int oc, MPI_Datatype ot, void *r, int rc, MPI_Datatype rt,
                             int t, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op) {
    clampi_bwin *w = bw;
    ACC_CHECK(w, t, d, tc, tt);
    clampi_bwin *p = mh_of(w)->parent;
    return p->ops->get_accumulate(p, o, oc, ot, r, rc, rt, t, ABS(w, d), tc, tt, op);
}
static int mh_fetch_and_op(clampi_bwin *bw, const void *o, void *r, MPI_Datatype type, int t, MPI_Aint d, MPI_Op op) {
    clampi_bwin *w = bw;
    ACC_CHECK(w, t, d, 1, type);
    clampi_bwin *p = mh_of(w)->parent;
    return p->ops->fetch_and_op(p, o, r, type, t, ABS(w, d), op);
}
static int mh_compare_and_swap(clampi_bwin *bw, const void *o, const void *c, void *r, MPI_Datatype type, int t,
                               MPI_Aint d) {
    clampi_bwin *w = bw;
    ACC_CHECK(w, t, d, 1, type);
    clampi_bwin *p = mh_of(w)->parent;
    return p->ops->compare_and_swap(p, o, c, r, type, t, ABS(w, d));
}

/* Everything else: not on a memory-handle window (the Quo Vadis RMA paper, §4.2). */
static int refuse(clampi_bwin *bw) {
    clampi_bwin *w = bw;
    return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
}
static int mh_lock(clampi_bwin *bw, int lt, int r, int a) {
    (void)lt, (void)r, (void)a;
    return refuse(bw);
}
static int mh_unlock(clampi_bwin *bw, int r) {
    (void)r;
    return refuse(bw);
}
static int mh_lock_all(clampi_bwin *bw, int a) {
    (void)a;
    return refuse(bw);
}
static int mh_fence(clampi_bwin *bw, int a) {
    (void)a;
    return refuse(bw);
}
static int mh_group(clampi_bwin *bw, MPI_Group g, int a) {
    (void)g, (void)a;
    return refuse(bw);
}
static int mh_attach(clampi_bwin *bw, void *b, MPI_Aint s) {
    clampi_bwin *w = bw;
    (void)b, (void)s;
    return clampi_bwin_raise(w, CLAMPI_E_WIN);
}
static int mh_detach(clampi_bwin *bw, const void *b) {
    clampi_bwin *w = bw;
    (void)b;
    return clampi_bwin_raise(w, CLAMPI_E_WIN);
}
static int mh_free(clampi_bwin *bw) { /* never called: the extensions free children */
    (void)bw;
    return MPI_SUCCESS;
}

const clampi_backend_ops clampi_backend_ucx_memhandle = {
    .name = "ucx",
    .caps = CLAMPI_BACKEND_CAP_ORDER | CLAMPI_BACKEND_CAP_ACC_INTRINSIC, /* process lane only */
    .get = mh_get,
    .rget = mh_rget,
    .put = mh_put,
    .rput = mh_rput,
    .accumulate = mh_accumulate,
    .get_accumulate = mh_get_accumulate,
    .fetch_and_op = mh_fetch_and_op,
    .compare_and_swap = mh_compare_and_swap,
    .flush = mh_flush,
    .flush_all = mh_flush_all,
    .flush_local = mh_flush,
    .flush_local_all = mh_flush_all,
    .lock = mh_lock,
    .unlock = mh_unlock,
    .lock_all = mh_lock_all,
    .unlock_all = refuse,
    .sync = refuse,
    .fence = mh_fence,
    .start = mh_group,
    .complete = refuse,
    .post = mh_group,
    .wait = refuse,
    .attach = mh_attach,
    .detach = mh_detach,
    .free = mh_free,
    .thread_stats = clampi_ucx_thread_stats,
    .ext = &clampi_backend_ucx_ext,
};

/* Only UCX windows (with state) carry a handle as their variant. */
clampi_mh_win *clampi_ucx_mh_of(const clampi_bwin *b) { return b->state ? (clampi_mh_win *)b->variant : NULL; }
