/* CMPIX_Memhandle_create / CMPIX_Win_from_memhandle / CMPIX_Memhandle_release and the
 * owner's side (the peer's: src/backends/ucx/mh_ops.c). See memhandle.h for the liveness design. */
#include "rmax/memhandle.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "services/ucx/context.h"
#include "backends/ucx/intrinsic.h"
#include "clampi/rmax.h"
#include "services/heap.h"
#include "rma/errors.h"
#include "rmax/family.h"
#include "rmax/mh_format.h"
#include "rmax/ucx_access.h"

typedef struct clampi_mh_slot {
    ucp_mem_h memh; /* registration of the region (NULL: slot free) */
    void *rkey;     /* packed rkey of the region */
    size_t rkey_len;
} clampi_mh_slot;

typedef struct clampi_mh_table {
    pthread_mutex_t lock;
    uint64_t *gen; /* CLAMPI_MH_SLOTS words, registered */
    ucp_mem_h gen_memh;
    void *gen_rkey;
    size_t gen_rkey_len;
    uint64_t next_generation;
    clampi_mh_slot slot[CLAMPI_MH_SLOTS];
} clampi_mh_table;

/* ---- owner side ------------------------------------------------------------------- */

static int map_region(ucp_context_h ctx, void *base, size_t size, ucp_mem_h *memh, void **rkey, size_t *rkey_len) {
    ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                              .address = base,
                              .length = size ? size : 1};
    if (ucp_mem_map(ctx, &p, memh) != UCS_OK) return -1;
    if (ucp_rkey_pack(ctx, *memh, rkey, rkey_len) != UCS_OK) {
        ucp_mem_unmap(ctx, *memh);
        return -1;
    }
    return 0;
}

/* The generation table is allocated by UCX (UCP_MEM_MAP_ALLOCATE): on shared memory that
 * puts it in a segment peers map, so the liveness get of a flush is a load, not a syscall. */
static int map_table(ucp_context_h ctx, clampi_mh_table *t) {
    const size_t bytes = CLAMPI_MH_SLOTS * sizeof *t->gen;
    ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                            UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                              .address = NULL,
                              .length = bytes,
                              .flags = UCP_MEM_MAP_ALLOCATE};
    if (ucp_mem_map(ctx, &p, &t->gen_memh) != UCS_OK) return -1;
    ucp_mem_attr_t a = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
    if (ucp_mem_query(t->gen_memh, &a) != UCS_OK ||
        ucp_rkey_pack(ctx, t->gen_memh, &t->gen_rkey, &t->gen_rkey_len) != UCS_OK) {
        ucp_mem_unmap(ctx, t->gen_memh);
        return -1;
    }
    t->gen = a.address;
    memset(t->gen, 0, bytes);
    return 0;
}

static clampi_mh_table *table_of(clampi_win *w) {
    clampi_rmax *x = clampi_rmax_of(w);
    if (!x) return NULL;
    if (x->mht) return x->mht;
    ucp_context_h ctx;
    if (clampi_ucx_context(&ctx) != MPI_SUCCESS) return NULL;
    clampi_mh_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (map_table(ctx, t) != 0) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    /* Generations differ across tables and runs: a handle from an earlier window at the same
     * address, or a released slot reused, never matches by accident. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    t->next_generation = ((uint64_t)ts.tv_nsec << 20) ^ ((uint64_t)ts.tv_sec << 40) ^ (uintptr_t)t;
    x->mht = t;
    return t;
}

static void release_slot(ucp_context_h ctx, clampi_mh_table *t, uint32_t s) {
    __atomic_store_n(&t->gen[s], 0, __ATOMIC_RELEASE);
    ucp_rkey_buffer_release(t->slot[s].rkey);
    ucp_mem_unmap(ctx, t->slot[s].memh);
    memset(&t->slot[s], 0, sizeof t->slot[s]);
}

void clampi_mh_table_destroy(clampi_win *w) {
    clampi_mh_table *t = w->rmax->mht;
    ucp_context_h ctx;
    if (clampi_ucx_context(&ctx) == MPI_SUCCESS) {
        for (uint32_t s = 0; s < CLAMPI_MH_SLOTS; s++)
            if (t->slot[s].memh) release_slot(ctx, t, s);
        ucp_rkey_buffer_release(t->gen_rkey);
        ucp_mem_unmap(ctx, t->gen_memh);
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
    w->rmax->mht = NULL;
}

#define FIND(w, win)                           \
    clampi_win *w = clampi_registry_find(win); \
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN)

int CMPIX_Memhandle_create(void *base, MPI_Aint size, CMPI_Win win, void *memhandle, int *memhandle_size) {
    FIND(w, win);
    if (!clampi_rmax_is_ucx(w) || (w->rmax && w->rmax->kind != CLAMPI_RMAX_PARENT) || !w->b.dynamic)
        return clampi_raise_win(w, CLAMPI_E_WIN);
    if (!memhandle || !memhandle_size || size < 0 || (!base && size > 0)) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (!clampi_rmax_attached(w, base, (size_t)size)) return clampi_raise_win(w, CLAMPI_E_RANGE);
    ucp_context_h ctx;
    clampi_mh_table *t;
    if (clampi_ucx_context(&ctx) != MPI_SUCCESS || !(t = table_of(w))) return clampi_raise_win(w, CLAMPI_E_NOMEM);
    pthread_mutex_lock(&t->lock);
    uint32_t s = 0;
    while (s < CLAMPI_MH_SLOTS && t->slot[s].memh) s++;
    int rc = MPI_SUCCESS;
    if (s == CLAMPI_MH_SLOTS) {
        rc = CLAMPI_E_NOMEM;
    } else if (map_region(ctx, base, (size_t)size, &t->slot[s].memh, &t->slot[s].rkey, &t->slot[s].rkey_len) != 0) {
        memset(&t->slot[s], 0, sizeof t->slot[s]);
        rc = CLAMPI_E_NOMEM;
    } else {
        uint64_t generation = ++t->next_generation;
        if (generation == 0) generation = ++t->next_generation;
        clampi_mh_fields f = {.owner = (uint32_t)w->b.rank,
                              .win_id = clampi_rmax_win_id(w),
                              .base = (uint64_t)(uintptr_t)base,
                              .size = (uint64_t)size,
                              .slot = s,
                              .generation = generation,
                              .gen_addr = (uint64_t)(uintptr_t)&t->gen[s],
                              .rkey = t->slot[s].rkey,
                              .rkey_len = (uint32_t)t->slot[s].rkey_len,
                              .gen_rkey = t->gen_rkey,
                              .gen_rkey_len = (uint32_t)t->gen_rkey_len};
        /* Memory from CMPI_Alloc_mem (the node-shared heap): same-node peers map it already. */
        int32_t seg;
        uint64_t off;
        if (size > 0 && clampi_heap_locate(base, (size_t)size, &seg, &off))
            f.heap_id = clampi_heap_id(), f.heap_seg = (uint32_t)seg, f.heap_off = off;
        int len = clampi_mh_encode(&f, memhandle, CMPIX_MAX_MEMHANDLE_SIZE);
        if (len < 0) {
            release_slot(ctx, t, s);
            rc = CLAMPI_E_NOMEM;
        } else {
            __atomic_store_n(&t->gen[s], generation, __ATOMIC_RELEASE);
            *memhandle_size = len;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : clampi_raise_win(w, (clampi_error)rc);
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
    clampi_mh_table *t = w->rmax ? w->rmax->mht : NULL;
    if (len < 0 || clampi_mh_decode(memhandle, (size_t)len, &f) != 0 || !t || f.owner != (uint32_t)w->b.rank ||
        f.win_id != clampi_rmax_win_id(w) || f.slot >= CLAMPI_MH_SLOTS)
        return clampi_raise_win(w, CLAMPI_E_ARG);
    ucp_context_h ctx;
    if (clampi_ucx_context(&ctx) != MPI_SUCCESS) return clampi_raise_win(w, CLAMPI_E_ARG);
    pthread_mutex_lock(&t->lock);
    int live = t->slot[f.slot].memh && __atomic_load_n(&t->gen[f.slot], __ATOMIC_ACQUIRE) == f.generation;
    if (live) release_slot(ctx, t, f.slot);
    pthread_mutex_unlock(&t->lock);
    return live ? MPI_SUCCESS : clampi_raise_win(w, CLAMPI_E_ARG); /* released twice, or someone else's */
}

/* ---- peer side -------------------------------------------------------------------- */

static ucp_rkey_h cached_gen_rkey(clampi_win *parent, int owner, ucp_ep_h ep, const void *packed, uint32_t len) {
    clampi_rmax *x = clampi_rmax_of(parent);
    if (!x) return NULL;
    if (!x->gen_cache && !(x->gen_cache = calloc((size_t)parent->b.nranks, sizeof *x->gen_cache))) return NULL;
    clampi_mh_gen_cache *c = &x->gen_cache[owner];
    uint64_t sum = clampi_mh_checksum(packed, len) | 1;
    if (c->sum == sum) return c->rkey;
    ucp_rkey_h rkey;
    if (ucp_ep_rkey_unpack(ep, packed, &rkey) != UCS_OK) return NULL;
    if (c->sum) ucp_rkey_destroy(c->rkey); /* the owner made a new table */
    c->sum = sum;
    c->rkey = rkey;
    return rkey;
}

void clampi_mh_gen_cache_destroy(clampi_win *parent) {
    clampi_mh_gen_cache *c = parent->rmax ? parent->rmax->gen_cache : NULL;
    if (!c) return;
    for (int r = 0; r < parent->b.nranks; r++)
        if (c[r].sum) ucp_rkey_destroy(c[r].rkey);
    free(c);
    parent->rmax->gen_cache = NULL;
}

int CMPIX_Win_from_memhandle(const void *memhandle, int memhandle_size, int target_rank, int disp_unit, MPI_Info info,
                             CMPI_Win win, CMPI_Win *newwin) {
    FIND(parent, win);
    if (!clampi_rmax_is_ucx(parent) || !parent->b.dynamic || (parent->rmax && parent->rmax->kind != CLAMPI_RMAX_PARENT))
        return clampi_raise_win(parent, CLAMPI_E_WIN);
    if (!newwin || disp_unit <= 0) return clampi_raise_win(parent, CLAMPI_E_ARG);
    if (target_rank < 0 || target_rank >= parent->b.nranks) return clampi_raise_win(parent, CLAMPI_E_RANK);
    clampi_mh_fields f;
    if (!memhandle || memhandle_size <= 0 || clampi_mh_decode(memhandle, (size_t)memhandle_size, &f) != 0 ||
        f.win_id != clampi_rmax_win_id(parent))
        return clampi_raise_win(parent, CLAMPI_E_ARG);
    if (f.owner != (uint32_t)target_rank) return clampi_raise_win(parent, CLAMPI_E_RANK);
    /* A handle of this process: its liveness is known here and now. */
    if (target_rank == parent->b.rank) {
        clampi_mh_table *t = parent->rmax ? parent->rmax->mht : NULL;
        if (!t || f.slot >= CLAMPI_MH_SLOTS || __atomic_load_n(&t->gen[f.slot], __ATOMIC_ACQUIRE) != f.generation)
            return clampi_raise_win(parent, CLAMPI_E_ARG);
    }
    clampi_win_options opts = parent->opts;
    const char *bad = NULL;
    if (clampi_options_update(info, &opts, &bad) != MPI_SUCCESS) return clampi_raise_win(parent, CLAMPI_E_INFO);
    clampi_mh_win *m = calloc(1, sizeof *m);
    if (!m) return clampi_raise_win(parent, CLAMPI_E_NOMEM);
    m->target = target_rank;
    m->base = f.base;
    m->size = f.size;
    m->disp_unit = disp_unit;
    m->gen_addr = f.gen_addr;
    m->md_map = clampi_ucx_rkey_md_map(f.rkey, f.rkey_len);
    m->generation = f.generation;
    m->worker = clampi_rmax_worker(parent);
    m->ep = clampi_rmax_ep(parent, target_rank);
    if (!m->ep || ucp_ep_rkey_unpack(m->ep, f.rkey, &m->rkey) != UCS_OK) {
        free(m);
        return clampi_raise_win(parent, CLAMPI_E_ARG);
    }
    if (!(m->gen_rkey = cached_gen_rkey(parent, target_rank, m->ep, f.gen_rkey, f.gen_rkey_len))) {
        ucp_rkey_destroy(m->rkey);
        free(m);
        return clampi_raise_win(parent, CLAMPI_E_ARG);
    }
    /* The liveness word by pointer where it can be: our own table, or the owner's table
     * segment mapped by UCX's shared-memory transport. */
    void *gp = NULL;
    if (target_rank == parent->b.rank)
        m->gen_ptr = (const uint64_t *)(uintptr_t)f.gen_addr;
    else if (ucp_rkey_ptr(m->gen_rkey, f.gen_addr, &gp) == UCS_OK)
        m->gen_ptr = gp;
    /* Zero copy: the region is in a node-shared heap this process maps too. */
    if (f.heap_id && f.heap_id == clampi_heap_id())
        m->direct = (unsigned char *)clampi_heap_addr((int32_t)f.heap_seg, f.heap_off);
    int rc = clampi_mh_window_create(parent, m, &opts, newwin);
    if (rc != MPI_SUCCESS) {
        ucp_rkey_destroy(m->rkey);
        free(m);
        return clampi_raise_win(parent, CLAMPI_E_NOMEM);
    }
    return MPI_SUCCESS;
}

int clampi_mh_window_create(clampi_win *parent, clampi_mh_win *m, const clampi_win_options *opts, CMPI_Win *newwin) {
    clampi_win *w = clampi_rmax_clone(parent);
    if (!w) return MPI_ERR_NO_MEM;
    if (!clampi_rmax_of(parent) || !clampi_rmax_of(w)) {
        clampi_win_detach_shared(w);
        clampi_win_release(w);
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
        clampi_win_detach_shared(w);
        clampi_win_release(w);
        return MPI_ERR_NO_MEM;
    }
    clampi_ucx_mh_adopt(&w->b, &parent->b, m);
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
