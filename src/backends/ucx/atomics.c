/* Accumulate-type operations on a UCX window: MPI_Accumulate, MPI_Get_accumulate,
 * MPI_Fetch_and_op, MPI_Compare_and_swap.
 *
 * Element-wise atomicity: every accumulate-type operation to a target runs under that
 * target's accumulate lock (a word in its control block taken with a UCX compare-and-swap),
 * as read-modify-write: get the target bytes, apply the op with MPI_Reduce_local, put them
 * back, flush, release. So all accumulates to a target are serialized, whichever thread or
 * process issues them; each completes at the target before the call returns (MPI allows
 * that). Cost: 4 round trips + lock retries. */
#include <stdlib.h>
#include <string.h>

#include "backends/ucx/ucx_win.h"
#include "backends/access.h"
#include "common/flatten.h"

static int predefined_op(MPI_Op op, int allow_no_op) {
    return op == MPI_MAX || op == MPI_MIN || op == MPI_SUM || op == MPI_PROD || op == MPI_LAND || op == MPI_BAND ||
           op == MPI_LOR || op == MPI_BOR || op == MPI_LXOR || op == MPI_BXOR || op == MPI_MAXLOC || op == MPI_MINLOC ||
           op == MPI_REPLACE || (allow_no_op && op == MPI_NO_OP);
}

static ucs_status_t acc_lock(clampi_ucx_win *u, clampi_ucx_lane *l, int target) {
    for (unsigned round = 0;;) {
        uint64_t old = (uint64_t)u->rank + 1; /* in: swap value; out: previous */
        ucs_status_t st =
            clampi_ucx_ctl_atomic(u, l, target, offsetof(clampi_ucx_ctl, acc_lock), UCP_ATOMIC_OP_CSWAP, 0, &old);
        if (st != UCS_OK || old == 0) return st;
        clampi_ucx_backoff(l, &round);
    }
}

static ucs_status_t acc_unlock(clampi_ucx_win *u, clampi_ucx_lane *l, int target) {
    /* The data put must have landed before the release. A worker fence is not enough: to
     * memory UCX did not allocate, small puts are emulated over another lane than the
     * atomics, and the release could overtake them. So: an endpoint flush. */
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    ucs_status_t st = clampi_ucx_lane_wait(l, ucp_ep_flush_nbx(clampi_ucx_lane_ep_peek(u, l, target), &param));
    if (st != UCS_OK) return st;
    uint64_t old;
    return clampi_ucx_ctl_atomic(u, l, target, offsetof(clampi_ucx_ctl, acc_lock), UCP_ATOMIC_OP_SWAP, 0, &old);
}

/* Where an accumulate lands: bytes at offset in one run, or (flat != NULL) tcount
 * elements of a flattened non-contiguous type whose span starts at offset, lo bytes
 * below the displacement. */
typedef struct acc_target {
    uint64_t offset;
    size_t bytes;
    const clampi_flat *flat;
    int tcount;
    MPI_Datatype ttype;
    MPI_Aint lo;
    uint64_t span;
} acc_target;

/* The target's current data, packed: one get of the run, or of the whole span of a
 * non-contiguous target, packed with its type (the gaps are read, never written). */
static ucs_status_t read_old(clampi_ucx_win *u, clampi_ucx_lane *l, ucp_ep_h ep, int target, const acc_target *at,
                             unsigned char *packed) {
    if (!at->flat) return clampi_ucx_range(u, l, ep, 0, (char *)packed, target, at->offset, at->bytes, 0, 1);
    unsigned char *span = malloc(at->span);
    if (!span) return UCS_ERR_NO_MEMORY;
    ucs_status_t st = clampi_ucx_range(u, l, ep, 0, (char *)span, target, at->offset, at->span, 0, 1);
    int pos = 0;
    if (st == UCS_OK) MPI_Pack(span - at->lo, at->tcount, at->ttype, packed, (int)at->bytes, &pos, MPI_COMM_SELF);
    free(span);
    return st;
}

/* target = origin op target, element-wise, on packed data (bytes of elements of the
 * predefined type basic). MPI_Reduce_local works on the type's memory layout: for a type
 * with gaps (the pair types: MPI_DOUBLE_INT is 12 bytes packed, 16 in memory;
 * MPI_LONG_DOUBLE_INT 20 in 32) both operands are unpacked into that layout first and the
 * result packed back. (Reducing the packed bytes directly read the pairs at the wrong
 * offsets, past the end too: MPI_MAXLOC/MINLOC gave wrong values, MPICH's acc_pairtype.) */
static ucs_status_t reduce_packed(const void *origin, unsigned char *target, size_t bytes, MPI_Datatype basic,
                                  MPI_Op op) {
    int bsize;
    MPI_Aint lb, extent, true_lb, true_extent;
    MPI_Type_size(basic, &bsize);
    MPI_Type_get_extent(basic, &lb, &extent);
    MPI_Type_get_true_extent(basic, &true_lb, &true_extent);
    const int n = (int)(bytes / (size_t)bsize);
    if (extent == bsize && true_extent == bsize && true_lb == 0 && lb == 0) {
        MPI_Reduce_local(origin, target, n, basic, op);
        return UCS_OK;
    }
    char *in = malloc((size_t)n * (size_t)extent), *inout = malloc((size_t)n * (size_t)extent);
    ucs_status_t st = in && inout ? UCS_OK : UCS_ERR_NO_MEMORY;
    if (st == UCS_OK) {
        int pos = 0;
        MPI_Unpack(origin, (int)bytes, &pos, in - lb, n, basic, MPI_COMM_SELF);
        pos = 0;
        MPI_Unpack(target, (int)bytes, &pos, inout - lb, n, basic, MPI_COMM_SELF);
        MPI_Reduce_local(in - lb, inout - lb, n, basic, op);
        pos = 0;
        MPI_Pack(inout - lb, n, basic, target, (int)bytes, &pos, MPI_COMM_SELF);
    }
    free(in);
    free(inout);
    return st;
}

/* The read-modify-write under the target's accumulate lock.
 *   origin: packed origin data (bytes), or NULL (no_op); result: where the old target
 *   bytes go (packed), or NULL; compare: CAS compare value (bytes), or NULL. */
static int rmw(clampi_bwin *w, int target, const acc_target *at, const void *origin, MPI_Datatype basic, MPI_Op op,
               void *result, const void *compare) {
    const uint64_t offset = at->offset;
    const size_t bytes = at->bytes;
    clampi_ucx_win *u = clampi_ucx_of(w);
    clampi_ucx_lane *l = clampi_ucx_lane_current(w);
    if (!l) return clampi_bwin_raise(w, CLAMPI_E_UCX);
    unsigned char *tmp = malloc(bytes ? bytes : 1);
    if (!tmp) return clampi_bwin_raise(w, CLAMPI_E_NOMEM);
    clampi_ucx_lane_enter(l);
    /* a target reached by load/store gets nothing the next flush must complete: unmarked */
    ucp_ep_h ep = u->direct[target] ? clampi_ucx_lane_ep_peek(u, l, target) : clampi_ucx_lane_ep(u, l, target);
    ucs_status_t st = !ep                 ? UCS_ERR_UNREACHABLE
                      : u->direct[target] ? UCS_OK /* checked by the window layer; see clampi_ucx_pieces */
                                          : clampi_ucx_lane_covered(u, l, target, offset, at->flat ? at->span : bytes);
    if (st == UCS_OK && w->ordered) ucp_worker_fence(l->worker);
    /* an earlier operation of ours to a target read and written by load/store here (an
     * intrinsic atomic that went to UCX) lands first: accumulates from one origin are
     * ordered, and a worker fence does not order UCX against our copies */
    if (st == UCS_OK && u->direct[target]) st = clampi_ucx_lane_settle(l, ep, target);
    if (st == UCS_OK) st = acc_lock(u, l, target);
    if (st == UCS_OK) {
        int need_old = result || compare || (op != MPI_REPLACE && op != MPI_NO_OP);
        if (need_old) st = read_old(u, l, ep, target, at, tmp);
        if (st == UCS_OK && result) memcpy(result, tmp, bytes);
        const void *newval = NULL;
        if (st == UCS_OK) {
            if (compare) {
                if (!memcmp(tmp, compare, bytes)) newval = origin;
            } else if (op == MPI_REPLACE) {
                newval = origin;
            } else if (op != MPI_NO_OP) {
                st = reduce_packed(origin, tmp, bytes, basic, op);
                newval = tmp;
            }
        }
        if (st == UCS_OK && newval && at->flat) /* only the typemap's bytes are written */
            st = clampi_ucx_pieces(u, l, ep, 1, (char *)newval, target, offset - (uint64_t)at->lo, at->tcount, at->flat,
                                   0, 1);
        else if (st == UCS_OK && newval)
            st = clampi_ucx_range(u, l, ep, 1, (char *)newval, target, offset, bytes, 0, 1);
        ucs_status_t st2 = acc_unlock(u, l, target);
        if (st == UCS_OK) st = st2;
    }
    if (st == UCS_OK) (u->direct[target] ? clampi_ucx_lane_tally : clampi_ucx_lane_count)(l, target);
    clampi_ucx_lane_leave(l);
    free(tmp);
    if (st == UCS_ERR_INVALID_ADDR) return clampi_bwin_raise(w, CLAMPI_E_RANGE);
    return st == UCS_OK ? MPI_SUCCESS : clampi_bwin_raise(w, CLAMPI_E_UCX);
}

/* Checks shared by all four: epoch, contiguous target, element type, op. *packed gets the
 * origin data packed (or the origin itself when contiguous; *owned says to free it). */
static int prepare(clampi_bwin *w, const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                   int tcount, MPI_Datatype ttype, MPI_Op op, int allow_no_op, clampi_access *a, acc_target *at,
                   MPI_Datatype *basic, const void **packed, void **owned) {
    *owned = NULL;
    int err = clampi_access_check(w, ocount, otype, target, disp, tcount, ttype, a);
    if (err >= 0) return clampi_bwin_raise(w, (clampi_error)err);
    if (!predefined_op(op, allow_no_op)) return clampi_bwin_raise(w, CLAMPI_E_OP);
    if (!clampi_ucx_in_access_epoch(clampi_ucx_of(w), target)) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    *at = (acc_target){a->offset, a->target.bytes, NULL, tcount, ttype, a->target.lo, a->target.span};
    if (clampi_type_basic(ttype, basic) != 0) return clampi_bwin_raise(w, CLAMPI_E_TYPE_LAYOUT);
    if (!a->target.contiguous && a->target.bytes && !(at->flat = clampi_flat_get(ttype)))
        return clampi_bwin_raise(w, CLAMPI_E_TYPE_LAYOUT);
    *packed = origin ? (const char *)origin + a->origin.lo : NULL;
    if (origin && a->target.bytes && !a->origin.contiguous) {
        void *p = malloc(a->target.bytes);
        if (!p) return clampi_bwin_raise(w, CLAMPI_E_NOMEM);
        int pos = 0;
        MPI_Pack(origin, ocount, otype, p, (int)a->target.bytes, &pos, MPI_COMM_SELF);
        *packed = *owned = p;
    }
    return MPI_SUCCESS;
}

int clampi_ucx_accumulate(clampi_bwin *w, const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc,
                          MPI_Datatype tt, MPI_Op op) {
    clampi_access a;
    acc_target at;
    MPI_Datatype basic;
    const void *packed;
    void *owned;
    int rc = prepare(w, o, oc, ot, t, d, tc, tt, op, 0, &a, &at, &basic, &packed, &owned);
    if (rc == MPI_SUCCESS && a.target.bytes) rc = rmw(w, t, &at, packed, basic, op, NULL, NULL);
    free(owned);
    return rc;
}

int clampi_ucx_get_accumulate(clampi_bwin *w, const void *o, int oc, MPI_Datatype ot, void *r, int rcount,
                              MPI_Datatype rtype, int t, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op) {
    clampi_access a, ra;
    acc_target at;
    MPI_Datatype basic;
    const void *packed;
    void *owned;
    /* MPI_NO_OP ignores the origin buffer (count and type may be anything): check with the
     * target's layout then. */
    int no_op = op == MPI_NO_OP;
    int rc = prepare(w, no_op ? NULL : o, no_op ? tc : oc, no_op ? tt : ot, t, d, tc, tt, op, 1, &a, &at, &basic,
                     &packed, &owned);
    if (rc != MPI_SUCCESS) return rc;
    int err = clampi_access_check(w, rcount, rtype, t, d, tc, tt, &ra); /* result layout vs target */
    if (err >= 0) {
        free(owned);
        return clampi_bwin_raise(w, (clampi_error)err);
    }
    if (a.target.bytes) {
        void *res = ra.origin.contiguous ? (char *)r + ra.origin.lo : malloc(a.target.bytes);
        if (!res)
            rc = clampi_bwin_raise(w, CLAMPI_E_NOMEM);
        else
            rc = rmw(w, t, &at, packed, basic, op, res, NULL);
        if (res && !ra.origin.contiguous) {
            if (rc == MPI_SUCCESS) {
                int pos = 0;
                MPI_Unpack(res, (int)a.target.bytes, &pos, r, rcount, rtype, MPI_COMM_SELF);
            }
            free(res);
        }
    }
    free(owned);
    return rc;
}

int clampi_ucx_fetch_and_op(clampi_bwin *w, const void *o, void *r, MPI_Datatype type, int t, MPI_Aint d, MPI_Op op) {
    return clampi_ucx_get_accumulate(w, o, 1, type, r, 1, type, t, d, 1, type, op);
}

int clampi_ucx_compare_and_swap(clampi_bwin *w, const void *o, const void *c, void *r, MPI_Datatype type, int t,
                                MPI_Aint d) {
    clampi_access a;
    acc_target at;
    MPI_Datatype basic;
    const void *packed;
    void *owned;
    int rc = prepare(w, o, 1, type, t, d, 1, type, MPI_REPLACE, 0, &a, &at, &basic, &packed, &owned);
    if (rc == MPI_SUCCESS && basic != type) rc = clampi_bwin_raise(w, CLAMPI_E_TYPE); /* predefined only */
    if (rc == MPI_SUCCESS && a.target.bytes) rc = rmw(w, t, &at, packed, basic, MPI_REPLACE, r, c);
    free(owned);
    return rc;
}
