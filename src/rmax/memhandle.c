/* CMPIX_Memhandle_create / CMPIX_Win_from_memhandle / CMPIX_Memhandle_release (the Quo
 * Vadis RMA paper, §4.2): the handle's bytes (mh_format.c), the checks and the window made
 * from a handle; the registration, the generation table that says which handles live and
 * the peer's view of a handle are the backend's (backend.h, clampi_backend_ext mh_*; on
 * UCX: src/backends/ucx/memhandle.h has the liveness design). A window whose backend has
 * no such rows (MPI windows) refuses them with MPI_ERR_WIN. */
#include <stdlib.h>
#include <string.h>

#include "clampi/rmax.h"
#include "common/options.h"
#include "rma/errors.h"
#include "rmax/family.h"
#include "rmax/mh_format.h"
#include "rmax/mh_share.h"
#include "services/heap.h"

#define FIND(w, win)                           \
    clampi_win *w = clampi_registry_find(win); \
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN)

/* The owner's registration, between the handle's bytes and the backend's view of it
 * (to_bytes: h -> f, else f -> h). */
static void registration_copy(clampi_mh_fields *f, clampi_backend_mh *h, int to_bytes) {
    if (to_bytes) {
        f->slot = h->slot, f->generation = h->generation, f->gen_addr = h->gen_addr;
        f->rkey = h->rkey, f->rkey_len = h->rkey_len, f->gen_rkey = h->gen_rkey, f->gen_rkey_len = h->gen_rkey_len;
    } else {
        h->slot = f->slot, h->generation = f->generation, h->gen_addr = f->gen_addr;
        h->rkey = f->rkey, h->rkey_len = f->rkey_len, h->gen_rkey = f->gen_rkey, h->gen_rkey_len = f->gen_rkey_len;
    }
}

/* A window handles can be made on or from: a dynamic parent whose backend has the rows. */
static const clampi_backend_ext *handle_rows(clampi_win *w) {
    const clampi_backend_ext *e = clampi_rmax_ext(w);
    return e && w->b.dynamic && (!w->rmax || w->rmax->kind == CLAMPI_RMAX_PARENT) ? e : NULL;
}

int CMPIX_Memhandle_create(void *base, MPI_Aint size, CMPI_Win win, void *memhandle, int *memhandle_size) {
    FIND(w, win);
    const clampi_backend_ext *e = handle_rows(w);
    if (!e) return clampi_raise_win(w, CLAMPI_E_WIN);
    if (!memhandle || !memhandle_size || size < 0 || (!base && size > 0)) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (!e->attached(&w->b, base, (size_t)size)) return clampi_raise_win(w, CLAMPI_E_RANGE);
    clampi_rmax *x = clampi_rmax_of(w);
    if (!x) return clampi_raise_win(w, CLAMPI_E_NOMEM);
    clampi_backend_mh h = {0};
    int rc = e->mh_register(&w->b, &x->mh_table, base, (size_t)size, &h);
    if (x->mh_table) x->mh_ext = e;
    if (rc != MPI_SUCCESS) return clampi_raise_win(w, (clampi_error)rc);
    clampi_mh_fields f = {.owner = (uint32_t)w->b.rank,
                          .win_id = clampi_rmax_win_id(w),
                          .base = (uint64_t)(uintptr_t)base,
                          .size = (uint64_t)size};
    registration_copy(&f, &h, 1);
    /* Memory from CMPI_Alloc_mem (the node-shared heap): same-node peers map it already. */
    int32_t seg;
    uint64_t off;
    clampi_mh_share_ref share = {0};
    if (size > 0 && clampi_heap_locate(base, (size_t)size, &seg, &off))
        f.heap_id = clampi_heap_id(), f.heap_seg = (uint32_t)seg, f.heap_off = off;
    else if (size > 0 && clampi_opt_process(CLAMPI_OPT_MH_SHARE).u &&
             clampi_mh_share(&x->mh_shares, base, (size_t)size, h.generation, &share) == 0)
        f.share_node = share.node, f.share_token = share.token, f.share_lo = share.lo, f.share_len = share.len,
        f.share_pid = share.pid, f.share_fd = share.fd;
    int len = clampi_mh_encode(&f, memhandle, CMPIX_MAX_MEMHANDLE_SIZE);
    if (len < 0) {
        if (f.share_node) clampi_mh_unshare(&x->mh_shares, h.generation);
        e->mh_live(x->mh_table, &h, 1);
        return clampi_raise_win(w, CLAMPI_E_NOMEM);
    }
    *memhandle_size = len;
    return MPI_SUCCESS;
}

/* The handle's length is not passed to release: the encoded length is read from it, and
 * only the fixed header is trusted before the checksum over the whole is verified. */
static int handle_length(const void *h) {
    uint16_t header;
    uint32_t rl, gl;
    memcpy(&header, (const char *)h + 6, 2);
    memcpy(&rl, (const char *)h + 56, 4);
    memcpy(&gl, (const char *)h + 60, 4);
    uint64_t len = (uint64_t)header + rl + gl + 12;
    return len <= CMPIX_MAX_MEMHANDLE_SIZE ? (int)len : -1;
}

int CMPIX_Memhandle_release(void *memhandle, CMPI_Win win) {
    FIND(w, win);
    if (!memhandle) return clampi_raise_win(w, CLAMPI_E_ARG);
    clampi_mh_fields f;
    int len = handle_length(memhandle);
    void *t = w->rmax ? w->rmax->mh_table : NULL;
    if (len < 0 || clampi_mh_decode(memhandle, (size_t)len, &f) != 0 || !t || f.owner != (uint32_t)w->b.rank ||
        f.win_id != clampi_rmax_win_id(w))
        return clampi_raise_win(w, CLAMPI_E_ARG);
    clampi_backend_mh h = {.slot = f.slot, .generation = f.generation};
    /* released twice, or someone else's: MPI_ERR_ARG */
    int live = w->rmax->mh_ext->mh_live(t, &h, 1);
    if (!live) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (f.share_node) clampi_mh_unshare(&w->rmax->mh_shares, f.generation); /* pages back, after UCX let go */
    /* released, but a peer on another node keeping the handle's liveness could not be told */
    return live < 0 ? clampi_raise_win(w, CLAMPI_E_UCX) : MPI_SUCCESS;
}

/* ---- peer side -------------------------------------------------------------------- */

static int window_create(clampi_win *parent, const clampi_backend_ext *e, void *handle, const clampi_backend_mh *m,
                         const clampi_win_options *opts, CMPI_Win *newwin);

/* The owner's moved pages (mh_share.h), mapped here when the owner is on this node: the
 * handle's bytes inside them become load/store. */
static void direct_open(const clampi_mh_fields *f, clampi_backend_mh *h) {
    clampi_mh_share_ref ref = {.node = f->share_node,
                               .token = f->share_token,
                               .lo = f->share_lo,
                               .len = f->share_len,
                               .pid = f->share_pid,
                               .fd = f->share_fd};
    unsigned char *pages;
    if (!(h->direct_ref = clampi_mh_share_open(&ref, &pages, &h->direct_live))) return;
    h->direct_close = clampi_mh_share_close;
    const uint64_t lo = ref.lo, hi = ref.lo + ref.len; /* owner addresses */
    h->direct_lo = lo > f->base ? lo - f->base : 0;
    h->direct_hi = (hi < f->base + f->size ? hi : f->base + f->size) - f->base;
    h->direct = (unsigned char *)((uintptr_t)pages + (uintptr_t)(f->base - lo)); /* region offset 0 */
}

int CMPIX_Win_from_memhandle(const void *memhandle, int memhandle_size, int target_rank, int disp_unit, MPI_Info info,
                             CMPI_Win win, CMPI_Win *newwin) {
    FIND(parent, win);
    const clampi_backend_ext *e = handle_rows(parent);
    if (!e) return clampi_raise_win(parent, CLAMPI_E_WIN);
    if (!newwin || disp_unit <= 0) return clampi_raise_win(parent, CLAMPI_E_ARG);
    if (target_rank < 0 || target_rank >= parent->b.nranks) return clampi_raise_win(parent, CLAMPI_E_RANK);
    clampi_mh_fields f;
    if (!memhandle || memhandle_size <= 0 || clampi_mh_decode(memhandle, (size_t)memhandle_size, &f) != 0 ||
        f.win_id != clampi_rmax_win_id(parent))
        return clampi_raise_win(parent, CLAMPI_E_ARG);
    if (f.owner != (uint32_t)target_rank) return clampi_raise_win(parent, CLAMPI_E_RANK);
    clampi_backend_mh h = {.target = target_rank, .disp_unit = disp_unit, .base = f.base, .size = f.size};
    registration_copy(&f, &h, 0);
    if (target_rank == parent->b.rank) { /* a handle of this process: its liveness is known here and now */
        void *t = parent->rmax ? parent->rmax->mh_table : NULL;
        if (!t || !parent->rmax->mh_ext->mh_live(t, &h, 0)) return clampi_raise_win(parent, CLAMPI_E_ARG);
    }
    clampi_win_options opts = parent->opts;
    const char *bad = NULL;
    if (clampi_options_update(info, &opts, &bad) != MPI_SUCCESS) return clampi_raise_win(parent, CLAMPI_E_INFO);
    /* Zero copy: the region is in a node-shared heap this process maps too. */
    if (f.heap_id && f.heap_id == clampi_heap_id()) {
        h.direct = (unsigned char *)clampi_heap_addr((int32_t)f.heap_seg, f.heap_off);
        h.direct_hi = f.size;
    } else if (f.share_node) {
        direct_open(&f, &h);
    }
    clampi_rmax *x = clampi_rmax_of(parent);
    void *handle = x ? e->mh_open(&parent->b, &h, &x->mh_cache) : NULL;
    if (!handle) {
        if (h.direct_close) h.direct_close(h.direct_ref);
        return clampi_raise_win(parent, x ? CLAMPI_E_ARG : CLAMPI_E_NOMEM);
    }
    if (window_create(parent, e, handle, &h, &opts, newwin) != MPI_SUCCESS) {
        e->mh_close(handle);
        return clampi_raise_win(parent, CLAMPI_E_NOMEM);
    }
    return MPI_SUCCESS;
}

/* The clampi_win of a memory-handle window (registered, linked under parent). */
static int window_create(clampi_win *parent, const clampi_backend_ext *e, void *handle, const clampi_backend_mh *m,
                         const clampi_win_options *opts, CMPI_Win *newwin) {
    clampi_win *w = clampi_rmax_clone(parent);
    if (!w) return MPI_ERR_NO_MEM;
    if (!clampi_rmax_of(parent) || !clampi_rmax_of(w)) {
        clampi_rmax_discard(w);
        return MPI_ERR_NO_MEM;
    }
    /* Displacement 0 is the handle's base; only its owner is a target (others have no bytes). */
    w->b.dynamic = 0;
    for (int r = 0; r < w->b.nranks; r++) {
        w->b.target_size[r] = r == m->target ? (MPI_Aint)m->size : 0;
        w->b.target_disp_unit[r] = m->disp_unit;
        if (w->target_shm) w->target_shm[r] = NULL;
    }
    CMPI_Win h;
    if (clampi_registry_add(w, &h) != MPI_SUCCESS) {
        clampi_rmax_discard(w);
        return MPI_ERR_NO_MEM;
    }
    e->mh_adopt(&w->b, &parent->b, handle);
    /* Nothing cached (a handle may die under it); the process lane (its rkey is unpacked
     * on the parent's process endpoint); backend and progress are the parent's. */
    clampi_win_options o = *opts;
    o.mode = CLAMPI_MODE_OFF;
    o.thread_scope = 0;
    o.backend = parent->opts.backend;
    o.progress = parent->opts.progress;
    clampi_win_reconfigure(w, &o);
    clampi_win_set_thread_scope(w, 0);
    clampi_rmax_link(parent, w, CLAMPI_RMAX_MEMHANDLE, h);
    clampi_rmax_select_ops(w);
    *newwin = h;
    return MPI_SUCCESS;
}
