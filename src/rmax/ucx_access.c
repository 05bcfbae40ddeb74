/* The extensions' view of the UCX backend's window state (see ucx_access.h): the only file
 * of src/rmax that includes the backend's internals. */
#include "rmax/ucx_access.h"
#include "backends/ucx/target.h"

#include "backends/ucx/ucx_win.h"
#include "rma/errors.h"
#include "rmax/family.h"
#include "rmax/memhandle.h"

int clampi_rmax_is_ucx(const clampi_win *w) { return clampi_ucx_of(&w->b) != NULL; }

int clampi_rmax_attached(const clampi_win *w, const void *base, size_t size) {
    if (!clampi_ucx_of(&w->b) || !w->b.dynamic) return 0;
    const clampi_ucx_ctl *c = clampi_ucx_of(&w->b)->ctl;
    const clampi_ucx_region *t = clampi_ucx_of(&w->b)->table; /* this rank's table: attach/detach are local calls */
    const uint64_t lo = (uint64_t)(uintptr_t)base;
    uint64_t n = __atomic_load_n(&c->nregions, __ATOMIC_ACQUIRE);
    for (uint64_t i = 0; i < n; i++)
        if (lo >= t[i].base && lo - t[i].base <= t[i].size && size <= t[i].size - (lo - t[i].base)) return 1;
    return 0;
}

ucp_worker_h clampi_rmax_worker(clampi_win *w) { return clampi_ucx_of(&w->b)->main.worker; }
ucp_ep_h clampi_rmax_ep(clampi_win *w, int target) {
    return clampi_ucx_lane_ep(clampi_ucx_of(&w->b), &clampi_ucx_of(&w->b)->main, target);
}

ucp_worker_h clampi_rmax_thread_worker(clampi_win *w) {
    clampi_ucx_lane *l = clampi_ucx_lane_current(&w->b);
    return l ? l->worker : NULL;
}
ucp_ep_h clampi_rmax_thread_ep(clampi_win *w, int target) {
    clampi_ucx_lane *l = clampi_ucx_lane_current(&w->b);
    return l ? clampi_ucx_lane_ep(clampi_ucx_of(&w->b), l, target) : NULL;
}

int clampi_rmax_eps(clampi_win *w, ucp_ep_h **eps) {
    if (!clampi_ucx_of(&w->b)) return 0;
    for (int r = 0; r < w->b.nranks; r++) clampi_ucx_lane_ep_peek(clampi_ucx_of(&w->b), &clampi_ucx_of(&w->b)->main, r);
    *eps = clampi_ucx_of(&w->b)->main.eps;
    return w->b.nranks;
}

void clampi_win_share_backend(clampi_win *w, const clampi_win *parent) {
    if (!clampi_ucx_of(&parent->b)) return;
    __atomic_add_fetch(&clampi_ucx_of(&parent->b)->refs, 1, __ATOMIC_RELAXED);
    w->b.state = clampi_ucx_of(&parent->b);
}

void clampi_win_detach_shared(clampi_win *w) {
    if (!clampi_ucx_of(&w->b)) return;
    __atomic_sub_fetch(&clampi_ucx_of(&w->b)->refs, 1, __ATOMIC_RELAXED);
    w->b.state = NULL;
}

uint64_t clampi_rmax_win_id(const clampi_win *w) { return w->rmax ? w->rmax->win_id : 0; }

void *clampi_rmax_lane(clampi_win *w) {
    if (clampi_ucx_mh_of(&w->b)) return &clampi_ucx_of(&w->b)->main;
    return clampi_ucx_lane_current(&w->b);
}
void clampi_rmax_lane_enter(void *lane) { clampi_ucx_lane_enter(lane); }
void clampi_rmax_lane_leave(void *lane) { clampi_ucx_lane_leave(lane); }
ucp_worker_h clampi_rmax_lane_worker(void *lane) { return ((clampi_ucx_lane *)lane)->worker; }
ucp_ep_h clampi_rmax_lane_ep(clampi_win *w, void *lane, int target) {
    return clampi_ucx_lane_ep(clampi_ucx_of(&w->b), lane, target);
}
ucp_worker_h clampi_rmax_main_worker(clampi_win *w) { return clampi_ucx_of(&w->b)->main.worker; }

int clampi_rmax_is_memhandle(const clampi_win *w) { return clampi_ucx_mh_of(&w->b) != NULL; }
void clampi_rmax_memhandle_share(clampi_win *w, const clampi_win *from) { clampi_ucx_mh_share(&w->b, &from->b); }
void clampi_rmax_memhandle_release(clampi_win *w) {
    if (clampi_ucx_mh_of(&w->b)) clampi_ucx_mh_release(&w->b);
}
void clampi_rmax_select_variant(clampi_win *w) {
    if (w->b.state) w->b.ops = clampi_ucx_variant_ops(&w->b, w->opts.acc_intrinsic); /* MPI windows keep theirs */
}
