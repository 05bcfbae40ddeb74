/* Put and get on a UCX window: one ucp_put_nbx / ucp_get_nbx on the calling thread's lane
 * (its own worker with thread scope, the process worker otherwise), completed by a later
 * flush; to a target whose memory lies in the node-shared heap, a copy (setup.c
 * exchange_places). Non-contiguous origin data goes through a packed bounce buffer (the operation is
 * then completed locally before returning). A non-contiguous target datatype is flattened
 * (src/common/flatten.h, cached on the type) into pieces: one UCX operation per piece. */
#include <stdlib.h>
#include <string.h>

#include "backends/ucx/ucx_win.h"
#include "common/greq.h"
#include "backends/access.h"
#include "common/flatten.h"

/* Requests of one call's pieces that must complete before it returns. */
typedef struct pending {
    void **req;
    size_t n, cap;
    uint64_t issued; /* UCX operations of the call so far (clampi_ucx_lane_issued) */
} pending;

static ucs_status_t pending_add(pending *p, clampi_ucx_lane *l, void *req) {
    if (req == NULL) return UCS_OK;
    if (UCS_PTR_IS_ERR(req)) return UCS_PTR_STATUS(req);
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        void **r = realloc(p->req, cap * sizeof *r);
        if (!r) return clampi_ucx_lane_wait(l, req); /* no room to keep it: complete it now */
        p->req = r, p->cap = cap;
    }
    p->req[p->n++] = req;
    return UCS_OK;
}

/* A put or get of len bytes at offset addr of a target whose memory is mapped here
 * (u->direct: the node-shared heap) as a copy, complete when it returns. On an ordered
 * window what the lane handed UCX for that target (an intrinsic atomic) lands first. */
static ucs_status_t direct_copy(clampi_ucx_win *u, clampi_ucx_lane *l, ucp_ep_h ep, int is_put, char *local, int target,
                                uint64_t addr, uint64_t len, int ordered) {
    ucs_status_t st = ordered ? clampi_ucx_lane_settle(l, ep, target) : UCS_OK;
    if (st != UCS_OK) return st;
    char *remote = u->direct[target] + addr;
    if (is_put) {
        memmove(remote, local, len);             /* a put to self may overlap its origin */
        __atomic_thread_fence(__ATOMIC_RELEASE); /* visible before whatever synchronizes next */
    } else {
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        memmove(local, remote, len);
    }
    __atomic_fetch_add(&u->counters.direct_ops, 1, __ATOMIC_RELAXED);
    return UCS_OK;
}

/* One put or get of [addr, addr + len) per part one rkey reaches (a dynamic window's
 * access may run over adjacent attached regions); the range was checked. */
static ucs_status_t issue_parts(clampi_ucx_win *u, clampi_ucx_lane *l, ucp_ep_h ep, int is_put, char *local, int target,
                                uint64_t addr, uint64_t len, int ordered, int complete, pending *p) {
    if (!u->dynamic && u->direct[target]) return direct_copy(u, l, ep, is_put, local, target, addr, len, ordered);
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    while (len) {
        uint64_t raddr, part;
        ucp_rkey_h rkey;
        ucs_status_t st = clampi_ucx_lane_remote_part(u, l, target, addr, len, &raddr, &rkey, &part);
        if (st != UCS_OK) return st;
        if (ordered) ucp_worker_fence(l->worker);
        void *req = is_put ? ucp_put_nbx(ep, local, part, raddr, rkey, &param)
                           : ucp_get_nbx(ep, local, part, raddr, rkey, &param);
        if (complete) {
            st = pending_add(p, l, req);
        } else if (UCS_PTR_IS_ERR(req)) {
            st = UCS_PTR_STATUS(req);
        } else if (req) {
            ucp_request_free(req);
        }
        if (st != UCS_OK) return st;
        clampi_ucx_lane_issued(l, ++p->issued);
        local += part, addr += part, len -= part;
    }
    return UCS_OK;
}

/* Issued requests always complete, even after an error. */
static ucs_status_t pending_wait(pending *p, clampi_ucx_lane *l, ucs_status_t st) {
    for (size_t k = 0; k < p->n; k++) {
        ucs_status_t s2 = clampi_ucx_lane_wait(l, p->req[k]);
        if (st == UCS_OK) st = s2;
    }
    free(p->req);
    return st;
}

/* (ucx_win.h) */
ucs_status_t clampi_ucx_pieces(clampi_ucx_win *u, clampi_ucx_lane *l, ucp_ep_h ep, int is_put, char *buf, int target,
                               uint64_t base, int tcount, const clampi_flat *f, int ordered, int complete) {
    pending p = {NULL, 0, 0, 0};
    ucs_status_t st = UCS_OK;
    /* every piece must be in the window (dynamic: attached) before any is issued; a target
     * reached by load/store was checked by the window layer, and its rkey is never
     * unpacked (UCX 1.13 then stalls the endpoint's fetching atomics until the target
     * progresses: see setup.c exchange_places) */
    for (int i = 0; i < tcount && st == UCS_OK && !u->direct[target]; i++)
        for (size_t k = 0; k < f->n && st == UCS_OK; k++) {
            const clampi_piece c = clampi_flat_piece(f, k);
            st = clampi_ucx_lane_covered(u, l, target, base + (uint64_t)((MPI_Aint)i * f->extent + c.offset), c.len);
        }
    for (int i = 0; i < tcount && st == UCS_OK; i++)
        for (size_t k = 0; k < f->n && st == UCS_OK; k++) {
            const clampi_piece c = clampi_flat_piece(f, k);
            st = issue_parts(u, l, ep, is_put, buf + (uint64_t)i * f->size + c.packed, target,
                             base + (uint64_t)((MPI_Aint)i * f->extent + c.offset), c.len, ordered, complete, &p);
        }
    return pending_wait(&p, l, st);
}

/* (ucx_win.h) */
ucs_status_t clampi_ucx_range(clampi_ucx_win *u, clampi_ucx_lane *l, ucp_ep_h ep, int is_put, char *buf, int target,
                              uint64_t addr, uint64_t len, int ordered, int complete) {
    pending p = {NULL, 0, 0, 0};
    ucs_status_t st = u->direct[target] ? UCS_OK : clampi_ucx_lane_covered(u, l, target, addr, len);
    if (st == UCS_OK) st = issue_parts(u, l, ep, is_put, buf, target, addr, len, ordered, complete, &p);
    return pending_wait(&p, l, st);
}

/* Small contiguous puts leave the origin buffer free when CMPI_Put returns, whatever the
 * transport: UCX is asked to complete the put at once (FORCE_IMM_CMPL: sent, or copied
 * into the transport); if it cannot (over TCP: an endpoint whose wireup is still going
 * on, a full socket; a transport that only has zero-copy for the size), the put is issued
 * from a private copy, freed on local completion. Without this, such a put kept pointing
 * at the caller's buffer until the next flush, and a caller that reused it (a loop
 * variable) sent the last value to every displacement: 99 of the first 100 puts of each
 * thread over UCX_TLS=tcp,self. (MPI lets the buffer be held until local completion, but
 * over shared memory clampi never did, so programs came to rely on it.) */
#define CLAMPI_UCX_PUT_COPY_MAX 8192

static void copy_sent(void *request, ucs_status_t status, void *user_data) {
    (void)request, (void)status;
    free(user_data);
}

static void *put_small(clampi_ucx_win *u, ucp_ep_h ep, const void *buf, size_t bytes, uint64_t raddr, ucp_rkey_h rkey) {
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    param.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    void *req = ucp_put_nbx(ep, buf, bytes, raddr, rkey, &param);
    if (!UCS_PTR_IS_ERR(req) || UCS_PTR_STATUS(req) != UCS_ERR_NO_RESOURCE) {
        /* done, failed, or (not expected) a request after all: the caller completes it */
        if (req && !UCS_PTR_IS_ERR(req)) __atomic_fetch_add(&u->counters.put_waits, 1, __ATOMIC_RELAXED);
        return req;
    }
    void *copy = malloc(bytes);
    if (!copy) return UCS_STATUS_PTR(UCS_ERR_NO_MEMORY);
    memcpy(copy, buf, bytes);
    __atomic_fetch_add(&u->counters.put_copies, 1, __ATOMIC_RELAXED);
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = copy_sent;
    param.user_data = copy;
    req = ucp_put_nbx(ep, copy, bytes, raddr, rkey, &param);
    if (req == NULL || UCS_PTR_IS_ERR(req)) { /* done at once (no callback) or failed */
        free(copy);
        return req;
    }
    ucp_request_free(req); /* the callback frees the copy when the put has left it */
    return NULL;
}

/* A get of many small pieces costs less as one get of their whole span, the pieces then
 * copied out here: each UCX operation costs about as much as moving a few KiB (over TCP,
 * or to memory UCX reaches with messages, it is a request and a reply), and MPICH's test
 * types hold millions of 4-byte pieces (8 M pieces took minutes; their span takes
 * seconds). Used from CLAMPI_UCX_SPAN_GET_PIECES pieces on, when the span holds at most
 * CLAMPI_UCX_SPAN_GET_SPREAD bytes per piece and CLAMPI_UCX_SPAN_GET_MAX in all. The gaps
 * are read, never written, and never reach the caller. */
#define CLAMPI_UCX_SPAN_GET_PIECES 4096
#define CLAMPI_UCX_SPAN_GET_SPREAD 512
#define CLAMPI_UCX_SPAN_GET_MAX ((uint64_t)256 << 20)

static int span_get_pays(const clampi_ucx_win *u, int target, const clampi_flat *f, int tcount, uint64_t span) {
    const uint64_t pieces = (uint64_t)f->n * (uint64_t)tcount;
    return !u->dynamic && !u->direct[target] && pieces >= CLAMPI_UCX_SPAN_GET_PIECES &&
           span <= CLAMPI_UCX_SPAN_GET_MAX && span <= pieces * CLAMPI_UCX_SPAN_GET_SPREAD;
}

/* The span got, packed into buf by MPI's own datatype engine, as an accumulate reads its
 * target (atomics.c). */
static ucs_status_t get_through_span(clampi_ucx_win *u, clampi_ucx_lane *l, ucp_ep_h ep, char *buf, int target,
                                     const clampi_access *a, int tcount, MPI_Datatype ttype, int ordered) {
    char *span = malloc(a->target.span);
    if (!span) return UCS_ERR_NO_MEMORY;
    ucs_status_t st = clampi_ucx_range(u, l, ep, 0, span, target, a->offset, a->target.span, ordered, 1);
    int pos = 0;
    if (st == UCS_OK &&
        MPI_Pack(span - a->target.lo, tcount, ttype, buf, (int)a->target.bytes, &pos, MPI_COMM_SELF) != MPI_SUCCESS)
        st = UCS_ERR_INVALID_PARAM;
    free(span);
    return st;
}

static int transfer(clampi_bwin *w, int is_put, void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                    int tcount, MPI_Datatype ttype, int complete_locally) {
    clampi_ucx_win *u = clampi_ucx_of(w);
    clampi_access a;
    int err = clampi_access_check(w, ocount, otype, target, disp, tcount, ttype, &a);
    if (err >= 0) return clampi_bwin_raise(w, (clampi_error)err);
    if (!clampi_ucx_in_access_epoch(u, target)) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    if (a.target.bytes == 0) return MPI_SUCCESS;
    const clampi_flat *flat = NULL;
    if (!a.target.contiguous && !(flat = clampi_flat_get(ttype))) return clampi_bwin_raise(w, CLAMPI_E_TYPE_LAYOUT);
    clampi_ucx_lane *l = clampi_ucx_lane_current(w);
    if (!l) return clampi_bwin_raise(w, CLAMPI_E_UCX);
    const size_t bytes = a.target.bytes;
    void *tmp = NULL, *buf = (char *)origin + a.origin.lo;
    if (!a.origin.contiguous) {
        tmp = malloc(bytes);
        if (!tmp) return clampi_bwin_raise(w, CLAMPI_E_NOMEM);
        int pos = 0;
        if (is_put) MPI_Pack(origin, ocount, otype, tmp, (int)bytes, &pos, MPI_COMM_SELF);
        buf = tmp;
        complete_locally = 1;
    }
    clampi_ucx_lane_enter(l);
    uint64_t raddr, part;
    ucp_rkey_h rkey;
    /* a target reached by load/store gets nothing the next flush must complete: unmarked */
    ucp_ep_h ep = u->direct[target] ? clampi_ucx_lane_ep_peek(u, l, target) : clampi_ucx_lane_ep(u, l, target);
    ucs_status_t st = ep ? UCS_OK : UCS_ERR_UNREACHABLE;
    if (st == UCS_OK && flat && !is_put && span_get_pays(u, target, flat, tcount, a.target.span)) {
        st = get_through_span(u, l, ep, buf, target, &a, tcount, ttype, w->ordered);
        if (st == UCS_OK) clampi_ucx_lane_count(l, target);
    } else if (st == UCS_OK && flat) {
        st = clampi_ucx_pieces(u, l, ep, is_put, buf, target, a.offset - (uint64_t)a.target.lo, tcount, flat,
                               w->ordered, complete_locally);
        if (st == UCS_OK) (u->direct[target] ? clampi_ucx_lane_tally : clampi_ucx_lane_count)(l, target);
    } else if (st == UCS_OK && u->direct[target]) { /* static window: the offset was checked */
        st = direct_copy(u, l, ep, is_put, buf, target, a.offset, bytes, w->ordered);
        if (st == UCS_OK) clampi_ucx_lane_tally(l, target);
    } else if (st == UCS_OK &&
               (st = clampi_ucx_lane_remote_part(u, l, target, a.offset, bytes, &raddr, &rkey, &part)) == UCS_OK &&
               part < bytes) { /* a dynamic window's access over adjacent attached regions */
        st = clampi_ucx_range(u, l, ep, is_put, buf, target, a.offset, bytes, w->ordered, complete_locally);
        if (st == UCS_OK) clampi_ucx_lane_count(l, target);
    } else if (st == UCS_OK) {
        if (w->ordered) ucp_worker_fence(l->worker);
        ucp_request_param_t param;
        memset(&param, 0, sizeof param);
        void *req;
        if (is_put && !complete_locally && bytes <= CLAMPI_UCX_PUT_COPY_MAX) {
            req = put_small(u, ep, buf, bytes, raddr, rkey);
            if (req && !UCS_PTR_IS_ERR(req)) complete_locally = 1;
        } else {
            req = is_put ? ucp_put_nbx(ep, buf, bytes, raddr, rkey, &param)
                         : ucp_get_nbx(ep, buf, bytes, raddr, rkey, &param);
        }
        if (complete_locally) {
            st = clampi_ucx_lane_wait(l, req);
        } else if (UCS_PTR_IS_ERR(req)) {
            st = UCS_PTR_STATUS(req);
        } else if (req) {
            ucp_request_free(req); /* completes at the next flush */
        }
        if (st == UCS_OK) clampi_ucx_lane_count(l, target);
    }
    if (st != UCS_OK) clampi_ucx_lane_mark(l, target); /* part of it may be in UCX */
    clampi_ucx_lane_leave(l);
    if (st == UCS_OK && tmp && !is_put) {
        int pos = 0;
        MPI_Unpack(tmp, (int)bytes, &pos, origin, ocount, otype, MPI_COMM_SELF);
    }
    free(tmp);
    if (st == UCS_ERR_INVALID_ADDR) return clampi_bwin_raise(w, CLAMPI_E_RANGE); /* dynamic: not attached */
    if (st != UCS_OK) return clampi_bwin_raise(w, CLAMPI_E_UCX);
    return MPI_SUCCESS;
}

int clampi_ucx_get(clampi_bwin *w, void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt) {
    return transfer(w, 0, o, oc, ot, t, d, tc, tt, 0);
}
int clampi_ucx_put(clampi_bwin *w, const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt) {
    return transfer(w, 1, (void *)o, oc, ot, t, d, tc, tt, 0);
}
/* Request-based: completed locally before the (generalized) request is returned. */
int clampi_ucx_rget(clampi_bwin *w, void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
                    MPI_Request *r) {
    int rc = transfer(w, 0, o, oc, ot, t, d, tc, tt, 1);
    return rc == MPI_SUCCESS ? clampi_request_done(r) : rc;
}
int clampi_ucx_rput(clampi_bwin *w, const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
                    MPI_Request *r) {
    int rc = transfer(w, 1, (void *)o, oc, ot, t, d, tc, tt, 1);
    return rc == MPI_SUCCESS ? clampi_request_done(r) : rc;
}
