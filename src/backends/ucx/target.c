/* Target resolution for the UCX window variants (target.h). */
#include "backends/ucx/target.h"

#include "services/ucx/context.h"
#include "backends/ucx/intrinsic.h"
#include "backends/ucx/memhandle.h"
#include "backends/ucx/ucx_win.h"

clampi_ucx_lane *clampi_ucx_issue_lane(clampi_bwin *b) {
    if (clampi_ucx_mh_of(b)) return &clampi_ucx_of(b)->main;
    return clampi_ucx_lane_current(b);
}

int clampi_ucx_target_begin(clampi_bwin *b, int target, uint64_t offset, uint64_t len, clampi_ucx_target *t) {
    clampi_ucx_win *u = clampi_ucx_of(b);
    clampi_mh_win *m = clampi_ucx_mh_of(b);
    clampi_ucx_lane *l = clampi_ucx_issue_lane(b);
    if (!l) return -1 - CLAMPI_E_UCX;
    clampi_ucx_lane_enter(l);
    t->lane = l;
    t->worker = l->worker;
    t->ep = clampi_ucx_lane_ep_peek(u, l, target); /* marked by _end, after the operation */
    ucs_status_t st = UCS_ERR_UNREACHABLE;
    if (t->ep && m) {
        t->raddr = m->base + offset;
        t->rkey = m->rkey;
        st = UCS_OK;
    } else if (t->ep) {
        st = clampi_ucx_lane_remote(u, l, target, offset, len, &t->raddr, &t->rkey);
    }
    if (st != UCS_OK) {
        clampi_ucx_lane_leave(l);
        return -1 - (st == UCS_ERR_INVALID_ADDR ? CLAMPI_E_RANGE : CLAMPI_E_UCX);
    }
    if (b->ordered) ucp_worker_fence(l->worker);
    return MPI_SUCCESS;
}

void clampi_ucx_target_end(clampi_bwin *b, int target, clampi_ucx_target *t, int issued) {
    clampi_ucx_lane *l = t->lane;
    clampi_ucx_lane_mark(l, target); /* also after a failure: some of it may be in UCX */
    if (issued) clampi_ucx_lane_count(l, target);
    clampi_ucx_lane_leave(l);
}

void clampi_ucx_target_end_local(clampi_bwin *b, int target, clampi_ucx_target *t) {
    (void)b, (void)target;
    clampi_ucx_lane_leave(t->lane);
}

void *clampi_ucx_target_amo_ptr(clampi_bwin *b, const clampi_ucx_target *t, int target) {
    clampi_ucx_win *u = clampi_ucx_of(b);
    clampi_ucx_lane *l = t->lane;
    if (clampi_ucx_mh_of(b)) return NULL;
    if (u->all_direct) /* every rank's memory is in the heap (setup.c); NULL: an empty one */
        return u->direct[target] ? u->direct[target] + (t->raddr - u->peer_base[target]) : NULL;
    if (u->dynamic || target == u->rank) return NULL;
    void *base = __atomic_load_n(&l->amo_base[target], __ATOMIC_ACQUIRE);
    if (__builtin_expect(base == NULL, 0)) { /* first atomic to target on this lane */
        void *p = NULL;
        if (!b->shm_direct || !l->rkeys[target] || !clampi_ucx_ep_amo_cpu(t->ep) ||
            ucp_rkey_ptr(l->rkeys[target], u->peer_base[target], &p) != UCS_OK || !p)
            p = CLAMPI_UCX_NO_AMO_BASE;
        __atomic_store_n(&l->amo_base[target], p, __ATOMIC_RELEASE);
        base = p;
    }
    return base == CLAMPI_UCX_NO_AMO_BASE ? NULL : (char *)base + (t->raddr - u->peer_base[target]);
}

void *clampi_ucx_amo_ptr_known(clampi_bwin *b, int target, uint64_t offset) {
    clampi_ucx_win *u = clampi_ucx_of(b);
    if (u->all_direct) return u->direct[target] ? u->direct[target] + offset : NULL;
    if (target == u->rank) return NULL; /* self: through UCX unless all_direct (clampi_ucx_target_amo_ptr) */
    clampi_ucx_lane *l = clampi_ucx_lane_current(b);
    void *base = l ? __atomic_load_n(&l->amo_base[target], __ATOMIC_ACQUIRE) : NULL;
    return base && base != CLAMPI_UCX_NO_AMO_BASE ? (char *)base + offset : NULL;
}

int clampi_ucx_target_in_epoch(const clampi_bwin *b, int target) {
    return clampi_ucx_in_access_epoch(clampi_ucx_of(b), target);
}

/* Memory an application attaches is registered, never allocated, by UCX: a probe buffer
 * registered the same way shows which mds such memory gets. */
static uint64_t registered_memory_md_map(ucp_context_h ctx) {
    static uint64_t cached;
    uint64_t v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v) return v;
    static char probe[64];
    ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                              .address = probe,
                              .length = sizeof probe};
    ucp_mem_h memh;
    void *packed;
    size_t len;
    if (ucp_mem_map(ctx, &p, &memh) != UCS_OK) return 0;
    if (ucp_rkey_pack(ctx, memh, &packed, &len) == UCS_OK) {
        v = clampi_ucx_rkey_md_map(packed, len);
        ucp_rkey_buffer_release(packed);
    }
    ucp_mem_unmap(ctx, memh);
    __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    return v;
}

uint64_t clampi_ucx_target_md_map(const clampi_bwin *b, int target) {
    const clampi_ucx_win *u = clampi_ucx_of(b);
    const clampi_mh_win *m = clampi_ucx_mh_of(b);
    if (m) return m->md_map;
    if (u->dynamic) return registered_memory_md_map(u->ctx);
    size_t len = u->rkey_off[target + 1] - u->rkey_off[target];
    return len ? clampi_ucx_rkey_md_map(u->rkey_blob + u->rkey_off[target], len) : ~0ull; /* no bytes there */
}
