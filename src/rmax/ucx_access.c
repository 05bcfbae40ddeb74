/* The extensions' view of the UCX backend's window state (see ucx_access.h): the only file
 * of src/rmax that includes the backend's internals. */
#include "rmax/ucx_access.h"

#include "backends/ucx/ucx_win.h"
#include "rma/errors.h"
#include "rmax/family.h"
#include "rmax/intrinsic.h"
#include "rmax/memhandle.h"

int clampi_rmax_is_ucx(const clampi_win *w) { return w->ucx != NULL; }

int clampi_rmax_attached(const clampi_win *w, const void *base, size_t size) {
    if (!w->ucx || !w->dynamic) return 0;
    const clampi_ucx_ctl *c = w->ucx->ctl;
    const clampi_ucx_region *t = w->ucx->table; /* this rank's table: attach/detach are local calls */
    const uint64_t lo = (uint64_t)(uintptr_t)base;
    uint64_t n = __atomic_load_n(&c->nregions, __ATOMIC_ACQUIRE);
    for (uint64_t i = 0; i < n; i++)
        if (lo >= t[i].base && lo - t[i].base <= t[i].size && size <= t[i].size - (lo - t[i].base)) return 1;
    return 0;
}

ucp_worker_h clampi_rmax_worker(clampi_win *w) { return w->ucx->main.worker; }
ucp_ep_h clampi_rmax_ep(clampi_win *w, int target) { return clampi_ucx_lane_ep(w->ucx, &w->ucx->main, target); }

ucp_worker_h clampi_rmax_thread_worker(clampi_win *w) {
    clampi_ucx_lane *l = clampi_ucx_lane_current(w);
    return l ? l->worker : NULL;
}
ucp_ep_h clampi_rmax_thread_ep(clampi_win *w, int target) {
    clampi_ucx_lane *l = clampi_ucx_lane_current(w);
    return l ? clampi_ucx_lane_ep(w->ucx, l, target) : NULL;
}

int clampi_rmax_eps(clampi_win *w, ucp_ep_h **eps) {
    if (!w->ucx) return 0;
    for (int r = 0; r < w->nranks; r++) clampi_ucx_lane_ep(w->ucx, &w->ucx->main, r);
    *eps = w->ucx->main.eps;
    return w->nranks;
}

void clampi_win_share_backend(clampi_win *w, const clampi_win *parent) {
    if (!parent->ucx) return;
    __atomic_add_fetch(&parent->ucx->refs, 1, __ATOMIC_RELAXED);
    w->ucx = parent->ucx;
}

void clampi_win_detach_shared(clampi_win *w) {
    if (!w->ucx) return;
    __atomic_sub_fetch(&w->ucx->refs, 1, __ATOMIC_RELAXED);
    w->ucx = NULL;
}

uint64_t clampi_rmax_win_id(const clampi_win *w) { return w->rmax ? w->rmax->win_id : 0; }

int clampi_rmax_in_epoch(const clampi_win *w, int target) { return clampi_ucx_in_access_epoch(w->ucx, target); }

const void *clampi_rmax_ucx_table(void) { return &clampi_backend_ucx; }

int clampi_rmax_target_begin(clampi_win *w, int target, uint64_t offset, uint64_t len, clampi_rmax_target *t) {
    clampi_ucx_win *u = w->ucx;
    clampi_mh_win *m = w->rmax ? w->rmax->mh : NULL;
    clampi_ucx_lane *l = m ? &u->main : clampi_ucx_lane_current(w);
    if (!l) return -1 - CLAMPI_E_UCX;
    clampi_ucx_lane_enter(l);
    t->lane = l;
    t->worker = l->worker;
    t->ep = clampi_ucx_lane_ep(u, l, target);
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
    if (w->opts.ordered) ucp_worker_fence(l->worker);
    return MPI_SUCCESS;
}

void clampi_rmax_target_end(clampi_win *w, int target, clampi_rmax_target *t, int issued) {
    clampi_ucx_lane *l = t->lane;
    if (issued) {
        clampi_ucx_lane_count(l, target);
        clampi_ucx_thread *th = clampi_ucx_thread_current(w->ucx);
        if (th) th->stats.ops++;
    }
    clampi_ucx_lane_leave(l);
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

uint64_t clampi_rmax_target_md_map(clampi_win *w, int target) {
    clampi_ucx_win *u = w->ucx;
    if (w->rmax && w->rmax->mh) return w->rmax->mh->md_map;
    if (u->dynamic) return registered_memory_md_map(u->ctx);
    size_t len = u->rkey_off[target + 1] - u->rkey_off[target];
    return len ? clampi_ucx_rkey_md_map(u->rkey_blob + u->rkey_off[target], len) : ~0ull; /* no bytes there */
}

void *clampi_rmax_lane(clampi_win *w) {
    if (w->rmax && w->rmax->mh) return &w->ucx->main;
    return clampi_ucx_lane_current(w);
}
void clampi_rmax_lane_enter(void *lane) { clampi_ucx_lane_enter(lane); }
void clampi_rmax_lane_leave(void *lane) { clampi_ucx_lane_leave(lane); }
ucp_worker_h clampi_rmax_lane_worker(void *lane) { return ((clampi_ucx_lane *)lane)->worker; }
ucp_ep_h clampi_rmax_lane_ep(clampi_win *w, void *lane, int target) { return clampi_ucx_lane_ep(w->ucx, lane, target); }
ucp_worker_h clampi_rmax_main_worker(clampi_win *w) { return w->ucx->main.worker; }
