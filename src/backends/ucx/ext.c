/* The UCX backend's rows for the RMA extensions (backend.h, clampi_backend_ext): shared
 * state of children, variants, what a dynamic window has attached, the intrinsic-atomics
 * answer; the table itself, which every UCX table (sync.c, mh_ops.c, intrinsic_ops.c)
 * points to. Memory handles: mh_owner.c, mh_open.c, mh_ops.c, mh_invalidate.c; notification: notify.c;
 * remote-completion requests: rflush.c. */
#include "backends/ucx/intrinsic.h"
#include "backends/ucx/memhandle.h"
#include "backends/ucx/target.h"
#include "backends/ucx/ucx_win.h"

static void share(clampi_bwin *child, const clampi_bwin *parent) {
    clampi_ucx_win *u = clampi_ucx_of(parent);
    if (!u) return;
    __atomic_add_fetch(&u->refs, 1, __ATOMIC_RELAXED);
    child->state = u;
}

static void unshare(clampi_bwin *child) {
    clampi_ucx_win *u = clampi_ucx_of(child);
    if (!u) return;
    __atomic_sub_fetch(&u->refs, 1, __ATOMIC_RELAXED);
    child->state = NULL;
}

/* Only this rank's table is read: attach and detach are local calls. */
static int attached(const clampi_bwin *b, const void *base, size_t size) {
    const clampi_ucx_win *u = clampi_ucx_of(b);
    if (!u || !b->dynamic) return 0;
    const clampi_ucx_region *t = u->table;
    const uint64_t lo = (uint64_t)(uintptr_t)base;
    uint64_t n = __atomic_load_n(&u->ctl->nregions, __ATOMIC_ACQUIRE);
    for (uint64_t i = 0; i < n; i++)
        if (lo >= t[i].base && lo - t[i].base <= t[i].size && size <= t[i].size - (lo - t[i].base)) return 1;
    return 0;
}

/* 1 if, for every target, UCX has an atomic lane that reaches the target's window memory
 * (the lane's remote md is in the memory's rkey): then atomics are executed by the target's
 * NIC or, on shared memory, by the origin's CPU on the mapped segment. Anything else is
 * emulated by UCX with active messages that the target's CPU runs. A window whose every
 * rank's memory is in one node-shared heap has CPU atomics everywhere (all_direct). */
static int transports_intrinsic(clampi_bwin *b, clampi_bwin *eps_of) {
    clampi_ucx_win *u = clampi_ucx_of(eps_of);
    if (!u) return 0;
    const clampi_mh_win *m = clampi_ucx_mh_of(b);
    if (!m && clampi_ucx_of(b) && clampi_ucx_of(b)->all_direct) return 1; /* CPU atomics on the heap (setup.c) */
    const int only = m ? m->target : -1;
    for (int r = 0; r < eps_of->nranks; r++) {
        if (only >= 0 && r != only) continue;
        ucp_ep_h ep = clampi_ucx_lane_ep_peek(u, &u->main, r);
        if (!ep || !(clampi_ucx_ep_amo_mds(ep) & clampi_ucx_target_md_map(b, r))) return 0;
    }
    return 1;
}

static int op_intrinsic(clampi_bwin *b, clampi_bwin *eps_of, unsigned opbits, int count, MPI_Datatype type,
                        int *lanes) {
    if (!clampi_intrinsic_supported(opbits, count, type)) return 0;
    if (!*lanes) *lanes = transports_intrinsic(b, eps_of) ? 1 : -1;
    return *lanes > 0;
}

static int mh_is(const clampi_bwin *b) { return clampi_ucx_mh_of(b) != NULL; }
static void mh_adopt(clampi_bwin *b, clampi_bwin *parent, void *handle) { clampi_ucx_mh_adopt(b, parent, handle); }
static void mh_release(clampi_bwin *b) {
    if (clampi_ucx_mh_of(b)) clampi_ucx_mh_release(b);
}

const clampi_backend_ext clampi_backend_ucx_ext = {
    .share = share,
    .unshare = unshare,
    .variant = clampi_ucx_variant_ops,
    .attached = attached,
    .mh_register = clampi_ucx_mh_register,
    .mh_live = clampi_ucx_mh_live,
    .mh_table_free = clampi_ucx_mh_table_free,
    .mh_open = clampi_ucx_mh_open,
    .mh_adopt = mh_adopt,
    .mh_close = clampi_ucx_mh_close,
    .mh_is = mh_is,
    .mh_share = clampi_ucx_mh_share,
    .mh_release = mh_release,
    .mh_cache_free = clampi_ucx_mh_cache_free,
    .notify_listen = clampi_ucx_notify_listen,
    .notify_stop = clampi_ucx_notify_stop,
    .notify_progress = clampi_ucx_notify_progress,
    .notify_free = clampi_ucx_notify_free,
    .notify_send = clampi_ucx_notify_send,
    .rflush = clampi_ucx_rflush,
    .op_intrinsic = op_intrinsic,
};
