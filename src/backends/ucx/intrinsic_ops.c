/* mpi_assert_accumulate_intrinsic=true on a UCX window: accumulate, get-accumulate,
 * fetch-and-op and compare-and-swap go straight to UCX atomics (ucp_atomic_op_nbx), one per
 * element, completed by the next flush like a put; or, where UCX itself would run them as
 * CPU atomics on shared memory it maps here, straight to those CPU atomics (complete at
 * once: clampi_ucx_target_amo_ptr says where). The window's table is the UCX backend's
 * with these four replaced; whatever UCX has no atomic for (ops, float types, more than
 * CLAMPI_INTRINSIC_MAX_COUNT elements, non-contiguous types) falls back to the backend's
 * lock-based path: by the assertion the program issues none of those, and if it does they
 * are not atomic with respect to the intrinsic ones (the paper's rule). */
#include <pthread.h>
#include <string.h>

#include "backends/access.h"
#include "services/ucx/context.h"
#include "backends/ucx/intrinsic.h"
#include "backends/ucx/memhandle.h"
#include "backends/ucx/target.h"
#include "backends/ucx/ucx_win.h"

enum { FALLBACK = -2 };

static int raise_neg(clampi_bwin *w, int rc) { return rc < 0 ? clampi_bwin_raise(w, (clampi_error)(-1 - rc)) : rc; }

/* One blocking atomic on t (offset off): UCX's buffer/reply as ucp_atomic_op_nbx takes them. */
static ucs_status_t blocking_atomic(const clampi_ucx_target *t, ucp_atomic_op_t uop, const void *value, void *reply,
                                    int esize, uint64_t off) {
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    p.datatype = ucp_dt_make_contig((size_t)esize);
    p.reply_buffer = reply;
    void *req = ucp_atomic_op_nbx(t->ep, uop, value, 1, t->raddr + off, t->rkey, &p);
    if (UCS_PTR_IS_ERR(req)) return UCS_PTR_STATUS(req);
    return req ? clampi_ucx_wait(t->worker, req) : UCS_OK;
}

/* Fetching and/or/xor as fetch (add 0) + compare-and-swap until no one came between. */
static ucs_status_t fetch_bitwise(const clampi_ucx_target *t, ucp_atomic_op_t uop, const void *value, void *reply,
                                  int esize, uint64_t off) {
    const uint64_t mask = esize == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * esize)) - 1;
    uint64_t v = 0, old = 0, zero = 0, swap;
    memcpy(&v, value, (size_t)esize);
    ucs_status_t st = blocking_atomic(t, UCP_ATOMIC_OP_ADD, &zero, &old, esize, off);
    for (int tries = 0; st == UCS_OK; tries++) {
        uint64_t want = (uop == UCP_ATOMIC_OP_AND ? old & v : uop == UCP_ATOMIC_OP_OR ? old | v : old ^ v) & mask;
        swap = want; /* in: the new value; out: what was there */
        uint64_t cmp = old;
        st = blocking_atomic(t, UCP_ATOMIC_OP_CSWAP, &cmp, &swap, esize, off);
        if (st != UCS_OK || (swap & mask) == (old & mask)) break;
        old = swap & mask;
    }
    memcpy(reply, &old, (size_t)esize);
    return st;
}

/* One element at p (naturally aligned, esize 4 or 8) as a CPU atomic: what UCX's
 * shared-memory transports do for an atomic on memory they map (clampi_ucx_target_amo_ptr). */
#define CPU_ATOMIC(T)                                                                             \
    static void cpu_atomic_##T(T *p, unsigned bit, const T *value, const T *compare, T *reply) {  \
        T old;                                                                                    \
        switch (bit) { /* CLAMPI_OPBIT_*: computed once per call (no MPI_Op compares here) */     \
        case CLAMPI_OPBIT_CAS:                                                                    \
            old = *compare;                                                                       \
            __atomic_compare_exchange_n(p, &old, *value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);  \
            break;                                                                                \
        case CLAMPI_OPBIT_SUM: old = __atomic_fetch_add(p, *value, __ATOMIC_SEQ_CST); break;      \
        case CLAMPI_OPBIT_BAND: old = __atomic_fetch_and(p, *value, __ATOMIC_SEQ_CST); break;     \
        case CLAMPI_OPBIT_BOR: old = __atomic_fetch_or(p, *value, __ATOMIC_SEQ_CST); break;       \
        case CLAMPI_OPBIT_BXOR: old = __atomic_fetch_xor(p, *value, __ATOMIC_SEQ_CST); break;     \
        case CLAMPI_OPBIT_REPLACE: old = __atomic_exchange_n(p, *value, __ATOMIC_SEQ_CST); break; \
        default: old = __atomic_load_n(p, __ATOMIC_SEQ_CST); break; /* MPI_NO_OP */               \
        }                                                                                         \
        if (reply) memcpy(reply, &old, sizeof old);                                               \
    }
CPU_ATOMIC(uint32_t)
CPU_ATOMIC(uint64_t)

static void cpu_atomics(char *p, int esize, int count, unsigned bit, const char *origin, const char *compare,
                        char *result) {
    const int has_value = origin && bit != CLAMPI_OPBIT_NO_OP;
    for (int i = 0; i < count; i++) {
        const size_t at = (size_t)i * (size_t)esize;
        /* aligned copies of the operands; fixed sizes, so no memcpy call */
        if (esize == 4) {
            uint32_t v = 0, c = 0, r;
            if (has_value) memcpy(&v, origin + at, 4);
            if (compare) memcpy(&c, compare + at, 4);
            cpu_atomic_uint32_t((uint32_t *)(p + at), bit, &v, compare ? &c : NULL, &r);
            if (result) memcpy(result + at, &r, 4);
        } else {
            uint64_t v = 0, c = 0, r;
            if (has_value) memcpy(&v, origin + at, 8);
            if (compare) memcpy(&c, compare + at, 8);
            cpu_atomic_uint64_t((uint64_t *)(p + at), bit, &v, compare ? &c : NULL, &r);
            if (result) memcpy(result + at, &r, 8);
        }
    }
}

/* The atomic done here on the mapped target memory, counted (clampi_ucx_counters.cpu_amos). */
static inline int cpu_amo(clampi_bwin *w, char *cpu, int esize, int count, unsigned bit, const char *origin,
                          const char *compare, char *result) {
    if (count == 1 && esize == 8 && bit == CLAMPI_OPBIT_SUM && origin) { /* a 64-bit counter: one add */
        uint64_t v, old;
        memcpy(&v, origin, 8);
        old = __atomic_fetch_add((uint64_t *)cpu, v, __ATOMIC_SEQ_CST);
        if (result) memcpy(result, &old, 8);
    } else {
        cpu_atomics(cpu, esize, count, bit, origin, compare, result);
    }
    __atomic_fetch_add(&clampi_ucx_of(w)->counters.cpu_amos, (uint64_t)count, __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

/* count elements of datatype at target_disp: op (fetching into result when result != NULL;
 * cas: compare != NULL). Returns FALLBACK when UCX has no atomic for it. */
static int atomic_elems(clampi_bwin *w, int target, MPI_Aint disp, const void *origin, void *result,
                        const void *compare, MPI_Datatype type, int count, MPI_Op op) {
    const int esize = clampi_intrinsic_int_size(type);
    const unsigned bit = compare ? CLAMPI_OPBIT_CAS : clampi_intrinsic_op_bit(op);
    if (!esize || !bit || (bit & ~(unsigned)CLAMPI_OPBITS_UCX) || count > CLAMPI_INTRINSIC_MAX_COUNT) return FALLBACK;
    if (op == MPI_NO_OP && !result) return MPI_SUCCESS; /* nothing to do, nothing to fetch */
    if (!clampi_ucx_target_in_epoch(w, target)) return clampi_bwin_raise(w, CLAMPI_E_RMA_SYNC);
    if (count <= 0) return MPI_SUCCESS;
    /* The window layer checked rank, count and range (clampi_win_write_begin) before calling
     * the table; a predefined integer type is dense: the bytes are one run from here. */
    const uint64_t offset = (uint64_t)disp * (uint64_t)w->target_disp_unit[target];
    const clampi_mh_win *m = clampi_ucx_mh_of(w);
    if (!m && !w->dynamic) { /* the target's memory mapped here already: no lane work at all */
        char *cpu = clampi_ucx_amo_ptr_known(w, target, offset);
        if (cpu && (uintptr_t)cpu % (uintptr_t)esize == 0)
            return cpu_amo(w, cpu, esize, count, bit, origin, compare, result);
        /* every rank's memory by load/store (setup.c): a misaligned element takes the
         * accumulate lock, as UCX would need the target to progress for it */
        if (clampi_ucx_of(w)->all_direct) return FALLBACK;
    }
    if (m) { /* a memory-handle window: only its owner, only while live */
        if (target != m->target) return clampi_bwin_raise(w, CLAMPI_E_RANK);
        int live = clampi_ucx_mh_check_live((clampi_mh_win *)m);
        if (live != MPI_SUCCESS)
            return clampi_bwin_raise(w, live == clampi_error_code(CLAMPI_E_RANGE) ? CLAMPI_E_RANGE : CLAMPI_E_UCX);
    }
    clampi_ucx_target t;
    int rc = clampi_ucx_target_begin(w, target, offset, (uint64_t)count * (uint64_t)esize, &t);
    if (rc == -1 - CLAMPI_E_RANGE && w->dynamic && count > 1) {
        /* Elements in adjacent attached regions: one at a time (atomicity is per element
         * anyway), each checked before any is issued. A dynamic window's disp is an address. */
        for (int i = 0; i < count; i++) {
            clampi_ucx_target probe;
            rc = clampi_ucx_target_begin(w, target, offset + (uint64_t)i * esize, (uint64_t)esize, &probe);
            if (rc != MPI_SUCCESS) return raise_neg(w, rc);
            clampi_ucx_target_end(w, target, &probe, 0);
        }
        for (int i = 0; i < count && rc == MPI_SUCCESS; i++)
            rc = atomic_elems(w, target, disp + (MPI_Aint)i * esize,
                              origin ? (const char *)origin + (size_t)i * esize : NULL,
                              result ? (char *)result + (size_t)i * esize : NULL, NULL, type, 1, op);
        return rc;
    }
    if (rc != MPI_SUCCESS) return raise_neg(w, rc);
    char *cpu = clampi_ucx_target_amo_ptr(w, &t, target);
    if (cpu && (uintptr_t)cpu % (uintptr_t)esize == 0) { /* complete here: nothing for the flush */
        cpu_amo(w, cpu, esize, count, bit, origin, compare, result);
        clampi_ucx_target_end_local(w, target, &t); /* nothing went to UCX */
        return MPI_SUCCESS;
    }
    ucp_atomic_op_t uop = compare             ? UCP_ATOMIC_OP_CSWAP
                          : op == MPI_SUM     ? UCP_ATOMIC_OP_ADD
                          : op == MPI_BAND    ? UCP_ATOMIC_OP_AND
                          : op == MPI_BOR     ? UCP_ATOMIC_OP_OR
                          : op == MPI_BXOR    ? UCP_ATOMIC_OP_XOR
                          : op == MPI_REPLACE ? UCP_ATOMIC_OP_SWAP
                                              : UCP_ATOMIC_OP_OR; /* MPI_NO_OP: fetch with "or 0" */
    static const uint64_t zero = 0;
    uint64_t scratch[CLAMPI_INTRINSIC_MAX_COUNT];
    /* A swap always returns the old value: without a result it lands in scratch, which
     * lives only in this call, so that case completes here. */
    int wait_here = uop == UCP_ATOMIC_OP_SWAP && !result;
    ucs_status_t st = UCS_OK;
    for (int i = 0; i < count && st == UCS_OK; i++) {
        ucp_request_param_t p; /* UCX reads only the fields op_attr_mask names: no memset */
        p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
        p.datatype = ucp_dt_make_contig((size_t)esize);
        const char *value =
            op == MPI_NO_OP && !compare ? (const char *)&zero : (const char *)origin + (size_t)i * esize;
        void *reply = result ? (char *)result + (size_t)i * esize : wait_here ? (char *)&scratch[i] : NULL;
        if (compare) { /* UCX: buffer = compare value, reply = swap value in, old value out */
            memcpy(reply, (const char *)origin + (size_t)i * esize, (size_t)esize);
            value = (const char *)compare + (size_t)i * esize;
        }
        if (reply) {
            p.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
            p.reply_buffer = reply;
        }
        if (reply && !compare && (uop == UCP_ATOMIC_OP_AND || uop == UCP_ATOMIC_OP_OR || uop == UCP_ATOMIC_OP_XOR)) {
            /* UCX 1.13's fetching and/or/xor over shared memory apply the old value instead of
             * ours (target unchanged, or 0 for xor: found by a differential test against MPI): a
             * compare-and-swap loop, atomic with respect to every other UCX atomic. */
            st = fetch_bitwise(&t, uop, value, reply, esize, (uint64_t)i * esize);
            continue;
        }
        void *req = ucp_atomic_op_nbx(t.ep, uop, value, 1, t.raddr + (uint64_t)i * esize, t.rkey, &p);
        if (UCS_PTR_IS_ERR(req))
            st = UCS_PTR_STATUS(req);
        else if (wait_here)
            st = clampi_ucx_wait(t.worker, req);
        else if (req)
            ucp_request_free(req); /* completes at the next flush */
    }
    clampi_ucx_target_end(w, target, &t, st == UCS_OK);
    return st == UCS_OK ? MPI_SUCCESS : clampi_bwin_raise(w, CLAMPI_E_UCX);
}

/* The table the window had before: the UCX backend's, or (memory-handle windows) theirs. */
static const clampi_backend_ops *base_ops(clampi_bwin *w) {
    return clampi_ucx_mh_of(w) ? &clampi_backend_ucx_memhandle : &clampi_backend_ucx;
}

static int intr_accumulate(clampi_bwin *bw, const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc,
                           MPI_Datatype tt, MPI_Op op) {
    clampi_bwin *w = bw;
    if (ot == tt && oc == tc) {
        int rc = atomic_elems(w, t, d, o, NULL, NULL, tt, tc, op);
        if (rc != FALLBACK) return rc;
    }
    return base_ops(w)->accumulate(w, o, oc, ot, t, d, tc, tt, op);
}

static int intr_get_accumulate(clampi_bwin *bw, const void *o, int oc, MPI_Datatype ot, void *r, int rc_,
                               MPI_Datatype rt, int t, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op) {
    clampi_bwin *w = bw;
    if (rt == tt && rc_ == tc && (op == MPI_NO_OP || (ot == tt && oc == tc))) {
        int rc = atomic_elems(w, t, d, o, r, NULL, tt, tc, op);
        if (rc != FALLBACK) return rc;
    }
    return base_ops(w)->get_accumulate(w, o, oc, ot, r, rc_, rt, t, d, tc, tt, op);
}

static int intr_fetch_and_op(clampi_bwin *bw, const void *o, void *r, MPI_Datatype type, int t, MPI_Aint d, MPI_Op op) {
    clampi_bwin *w = bw;
    int rc = atomic_elems(w, t, d, o, r, NULL, type, 1, op);
    return rc != FALLBACK ? rc : base_ops(w)->fetch_and_op(w, o, r, type, t, d, op);
}

static int intr_compare_and_swap(clampi_bwin *bw, const void *o, const void *c, void *r, MPI_Datatype type, int t,
                                 MPI_Aint d) {
    clampi_bwin *w = bw;
    int rc = atomic_elems(w, t, d, o, r, c, type, 1, MPI_REPLACE);
    return rc != FALLBACK ? rc : base_ops(w)->compare_and_swap(w, o, c, r, type, t, d);
}

static clampi_backend_ops ucx_intrinsic, mh_intrinsic;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void with_atomics(clampi_backend_ops *dst, const clampi_backend_ops *src) {
    *dst = *src;
    dst->accumulate = intr_accumulate;
    dst->get_accumulate = intr_get_accumulate;
    dst->fetch_and_op = intr_fetch_and_op;
    dst->compare_and_swap = intr_compare_and_swap;
}

static void build_tables(void) {
    with_atomics(&ucx_intrinsic, &clampi_backend_ucx);
    with_atomics(&mh_intrinsic, &clampi_backend_ucx_memhandle);
}

const clampi_backend_ops *clampi_ucx_variant_ops(const clampi_bwin *b, int acc_intrinsic) {
    pthread_once(&tables_once, build_tables);
    const int mh = clampi_ucx_mh_of(b) != NULL;
    if (acc_intrinsic) return mh ? &mh_intrinsic : &ucx_intrinsic;
    return mh ? &clampi_backend_ucx_memhandle : &clampi_backend_ucx;
}
