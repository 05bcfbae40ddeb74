/* Window creation and destruction: CMPI_Win_create, CMPI_Win_allocate, CMPI_Win_free. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numa/first_touch.h"
#include "common/stats.h"
#include "rma/errors.h"
#include "rma/stats.h"
#include "rma/window.h"
#include "topo/node.h"

/* The extensions' hooks (src/rmax registers them); none by default. */
static const clampi_win_hooks no_hooks;
static const clampi_win_hooks *hooks = &no_hooks;
void clampi_win_set_hooks(const clampi_win_hooks *h) { hooks = h ? h : &no_hooks; }

void clampi_win_release(clampi_win *w) {
    if (w->rmax && hooks->on_release) hooks->on_release(w);
    if (w->mt) pthread_mutex_destroy(&w->lock);
    clampi_cache_destroy(&w->cache);
    clampi_inflight_destroy(&w->inflight);
    free(w->b.target_size);
    free(w->b.target_disp_unit);
    free(w->target_shm);
    free(w->outstanding);
    free(w->dirty_targets);
    free(w->straight);
    free(w->straight_policy);
    free(w);
}

/* The state a window owns per target, sized for w->b.nranks, empty (target_shm only when
 * with_shm: attach maps it later). Returns 1, or 0 with whatever was allocated left for
 * clampi_win_release. */
static int alloc_per_target(clampi_win *w, int with_shm) {
    const size_t n = (size_t)w->b.nranks;
    w->b.target_size = malloc(n * sizeof *w->b.target_size);
    w->b.target_disp_unit = malloc(n * sizeof *w->b.target_disp_unit);
    w->target_shm = with_shm ? malloc(n * sizeof *w->target_shm) : NULL;
    w->outstanding = calloc(n, sizeof *w->outstanding);
    w->dirty_targets = malloc(n * sizeof *w->dirty_targets);
    w->straight = calloc(n, 1);
    return w->b.target_size && w->b.target_disp_unit && (!with_shm || w->target_shm) && w->outstanding &&
           w->dirty_targets && w->straight && clampi_inflight_init(&w->inflight, (uint32_t)n) == 0;
}

clampi_win *clampi_win_clone(const clampi_win *parent) {
    clampi_win *w = malloc(sizeof *w);
    if (!w) return NULL;
    *w = *parent; /* identity, options, MPI handles, backend: shared with the parent */
    /* Everything clampi keeps per window starts empty: cache, gets in flight, counters,
     * dirty and outstanding targets, extensions; the preload's straight-path state belongs
     * to the parent's MPI_Win only. */
    memset(&w->cache, 0, sizeof w->cache);
    memset(&w->adapt, 0, sizeof w->adapt);
    memset(&w->n, 0, sizeof w->n);
    w->rmax = NULL;
    w->caches_data = 0;
    w->ndirty = 0;
    w->all_straight = 0;
    w->straight_policy = NULL;
    int ok = alloc_per_target(w, parent->target_shm != NULL);
    int mt_ok = !w->mt || pthread_mutex_init(&w->lock, NULL) == 0;
    if (!ok || !mt_ok) {
        if (!mt_ok) w->mt = 0;
        clampi_win_release(w);
        return NULL;
    }
    const size_t n = (size_t)w->b.nranks;
    memcpy(w->b.target_size, parent->b.target_size, n * sizeof *w->b.target_size);
    memcpy(w->b.target_disp_unit, parent->b.target_disp_unit, n * sizeof *w->b.target_disp_unit);
    if (w->target_shm) memcpy(w->target_shm, parent->target_shm, n * sizeof *w->target_shm);
    return w;
}

/* Everyone agrees on a flag (logical AND over comm). */
static int all_agree(MPI_Comm comm, int ok) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

/* Collective part common to both creation calls: options are read and agreed on
 * before any window exists, so a bad value anywhere fails everywhere, cleanly. */
int clampi_win_read_options(MPI_Info info, MPI_Comm comm, clampi_win_options *opts) {
    const char *bad_key = NULL;
    int local = clampi_options_read(info, opts, &bad_key) == MPI_SUCCESS;
    if (!local) fprintf(stderr, "clampi: invalid value for %s\n", bad_key);
#if !CLAMPI_HAVE_UCX
    /* Built without UCX: what only the UCX backend gives is not there (clampi-info says so);
     * the window is an MPI window with MPI's semantics, and its info says that. */
    opts->backend = CLAMPI_BACKEND_KIND_MPI;
    opts->thread_scope = opts->ordered = opts->acc_intrinsic = 0;
#endif
    return all_agree(comm, local);
}

static int check_comm_args(MPI_Comm comm, MPI_Aint size, int disp_unit, const void *out_handle) {
    if (comm == MPI_COMM_NULL) return clampi_raise_nowin(CLAMPI_E_ARG);
    if (!out_handle || size < 0 || disp_unit <= 0) return clampi_raise_comm(comm, CLAMPI_E_ARG);
    return MPI_SUCCESS;
}

/* Caching modes on a dynamic window need the program's opt-in: clampi caches by (target,
 * absolute address) and cannot see a detach (and a later attach of other memory at the
 * same address) at the target. Transparent mode keeps nothing past a flush, so it is safe. */
static clampi_mode allowed_mode(const clampi_win *w, const clampi_win_options *o) {
    if (w->b.dynamic && (o->mode == CLAMPI_MODE_ALWAYS || o->mode == CLAMPI_MODE_USER) && !o->dynamic_cache)
        return CLAMPI_MODE_TRANSPARENT;
    return o->mode;
}

static int mode_caches(clampi_mode m) { return m == CLAMPI_MODE_ALWAYS || m == CLAMPI_MODE_USER; }

/* The cache of a caching mode, allocated on first need. */
static void setup_cache(clampi_win *w) {
    const clampi_win_options *opts = &w->opts;
    if (!w->caches_data || clampi_cache_usable(&w->cache)) return;
    clampi_cache_counters kept = w->cache.c;
    if (clampi_cache_init(&w->cache, opts->index_entries, opts->buffer_bytes) != CLAMPI_CACHE_OK) {
        static int warned;
        if (!__atomic_fetch_add(&warned, 1, __ATOMIC_RELAXED))
            fprintf(stderr,
                    "clampi: rank %d: cannot allocate a %zu-byte cache with %zu index entries; "
                    "the window works uncached\n",
                    w->b.rank, opts->buffer_bytes, opts->index_entries);
    }
    w->cache.c = kept;
    clampi_adapt_init(&w->adapt, NULL, &w->cache);
}

int clampi_win_attach(MPI_Win mpi_win, MPI_Win shm_win, MPI_Comm comm, MPI_Aint size, int disp_unit, int dynamic,
                      const clampi_win_options *opts, clampi_win **out) {
    clampi_win *w = calloc(1, sizeof *w);
    int ok = w != NULL;
    if (w) {
        w->b.win = mpi_win;
        w->b.err_win = mpi_win;
        w->b.ops = clampi_backend_table(CLAMPI_BACKEND_KIND_MPI);
        w->b.shm_win = shm_win;
        w->b.shm_comm = MPI_COMM_NULL;
        w->b.dynamic = dynamic;
        w->elide_flushes = CLAMPI_ELIDE_ALWAYS;
        w->opts = *opts;
        /* In effect until a backend that honours them takes over (setup_backend). */
        w->opts.backend = CLAMPI_BACKEND_KIND_MPI;
        w->opts.thread_scope = 0;
        w->opts.ordered = 0;
        w->opts.acc_intrinsic = 0;
        w->opts.mode = allowed_mode(w, opts);
        w->caches_data = mode_caches(w->opts.mode);
        w->passthrough = w->opts.mode == CLAMPI_MODE_OFF;
        int provided = MPI_THREAD_SINGLE;
        MPI_Query_thread(&provided);
        w->mt = provided == MPI_THREAD_MULTIPLE;
        if (w->mt && pthread_mutex_init(&w->lock, NULL) != 0) w->mt = 0, ok = 0;
        w->lock_ops = w->mt;
        w->keeps_books = 1;
        MPI_Comm_rank(comm, &w->b.rank);
        MPI_Comm_size(comm, &w->b.nranks);
        ok = alloc_per_target(w, 0) && ok;
    }
    /* Agree first: the allgathers below are collective and must run on every rank. */
    if (!all_agree(comm, ok)) {
        if (w) clampi_win_release(w);
        return MPI_ERR_NO_MEM;
    }
    if (dynamic) {
        /* Displacements are absolute addresses: any address is in range for clampi (MPI
         * checks attachment), disp_unit is 1. */
        for (int i = 0; i < w->b.nranks; i++) {
            w->b.target_size[i] = (MPI_Aint)(INTPTR_MAX / 2);
            w->b.target_disp_unit[i] = 1;
        }
    } else {
        MPI_Aint my_size = size;
        PMPI_Allgather(&my_size, 1, MPI_AINT, w->b.target_size, 1, MPI_AINT, comm);
        PMPI_Allgather(&disp_unit, 1, MPI_INT, w->b.target_disp_unit, 1, MPI_INT, comm);
    }
    setup_cache(w);
    if (shm_win != MPI_WIN_NULL) {
        /* Same-node ranks' memory can be read directly: map their bases. */
        MPI_Group g_comm, g_node;
        MPI_Win_get_group(shm_win, &g_node);
        MPI_Comm_group(comm, &g_comm);
        int nnode;
        MPI_Group_size(g_node, &nnode);
        w->target_shm = calloc(w->b.nranks, sizeof *w->target_shm);
        int *node_ranks = malloc(nnode * sizeof *node_ranks), *comm_ranks = malloc(nnode * sizeof *comm_ranks);
        if (w->target_shm && node_ranks && comm_ranks) {
            for (int i = 0; i < nnode; i++) node_ranks[i] = i;
            MPI_Group_translate_ranks(g_node, nnode, node_ranks, g_comm, comm_ranks);
            for (int i = 0; i < nnode; i++) {
                MPI_Aint sz;
                int du;
                void *base = NULL;
                if (MPI_Win_shared_query(shm_win, i, &sz, &du, &base) == MPI_SUCCESS && comm_ranks[i] >= 0)
                    w->target_shm[comm_ranks[i]] = base ? base : (void *)w->target_shm; /* non-NULL even for 0 bytes */
            }
        } else {
            free(w->target_shm);
            w->target_shm = NULL;
        }
        free(node_ranks);
        free(comm_ranks);
        MPI_Group_free(&g_comm);
        MPI_Group_free(&g_node);
    }
    *out = w;
    return MPI_SUCCESS;
}

void clampi_win_reconfigure(clampi_win *w, const clampi_win_options *opts) {
    clampi_win_enter_always(w);
    clampi_win_options next = *opts;
    next.mode = allowed_mode(w, opts);
    int sizes_changed = next.index_entries != w->opts.index_entries || next.buffer_bytes != w->opts.buffer_bytes;
    /* Gets in flight still complete (and fill their duplicates) but are not cached. */
    clampi_inflight_forget_all(&w->inflight);
    /* An off or transparent window's operations may have gone straight to MPI (preload):
     * the next flushes must not be elided. */
    if (w->opts.mode == CLAMPI_MODE_OFF || w->opts.mode == CLAMPI_MODE_TRANSPARENT)
        for (int t = 0; t < w->b.nranks; t++) clampi_win_mark_outstanding(w, t);
    if (clampi_cache_usable(&w->cache)) {
        if (!mode_caches(next.mode))
            clampi_cache_invalidate(&w->cache);
        else if (sizes_changed)
            clampi_cache_resize(&w->cache, next.index_entries, next.buffer_bytes);
        else if (next.mode != w->opts.mode)
            clampi_cache_invalidate(&w->cache);
    }
    w->opts = next;
    w->b.ordered = next.ordered; /* the backend honours it (0 unless the backend can) */
    w->caches_data = mode_caches(next.mode);
    __atomic_store_n(&w->passthrough, next.mode == CLAMPI_MODE_OFF, __ATOMIC_RELAXED);
    setup_cache(w);
    clampi_win_leave_always(w);
}

/* The backend the options ask for (collective). The MPI backend needs nothing; another
 * takes the window over (its setup), then the extensions' hook runs. A backend honours
 * mpi_win_scope and mpi_win_order; with thread scope the get cache is off (a process-wide
 * cache cannot be completed by per-thread flushes). */
int clampi_win_setup_backend(clampi_win *w, MPI_Comm comm, void *base, MPI_Aint size, const clampi_win_options *opts,
                             void *memh) {
    const clampi_backend_ops *be = clampi_backend_table(opts->backend);
    if (!be->setup) return MPI_SUCCESS;
    /* What the backend honours, in effect from here (its setup and the hooks read it). */
    w->opts.backend = opts->backend;
    w->opts.ordered = (be->caps & CLAMPI_BACKEND_CAP_ORDER) ? opts->ordered : 0;
    w->opts.acc_intrinsic = (be->caps & CLAMPI_BACKEND_CAP_ACC_INTRINSIC) ? opts->acc_intrinsic : 0;
    w->b.ordered = w->opts.ordered;
    w->b.progress = opts->progress;
    w->b.shm_direct = opts->shm_direct;
    int rc = be->setup(&w->b, comm, base, size, memh);
    if (rc == MPI_SUCCESS && hooks->on_backend) {
        rc = hooks->on_backend(w, comm);
        if (rc != MPI_SUCCESS) clampi_win_teardown_backend(w);
    }
    if (rc != MPI_SUCCESS) { /* still an MPI window: say so */
        w->opts.backend = CLAMPI_BACKEND_KIND_MPI;
        w->opts.ordered = w->opts.acc_intrinsic = 0;
        w->b.ordered = 0;
        return rc;
    }
    if (opts->thread_scope && (be->caps & CLAMPI_BACKEND_CAP_THREAD_SCOPE)) {
        clampi_win_options o = w->opts;
        o.thread_scope = 1;
        o.mode = CLAMPI_MODE_OFF;
        clampi_win_reconfigure(w, &o);
        clampi_win_set_thread_scope(w, 1);
    }
    return MPI_SUCCESS;
}

void clampi_win_teardown_backend(clampi_win *w) {
    if (w->b.ops->teardown) w->b.ops->teardown(&w->b); /* the backend's state only; the MPI window stays */
    w->b.ops = clampi_backend_table(CLAMPI_BACKEND_KIND_MPI);
    w->opts.backend = CLAMPI_BACKEND_KIND_MPI;
    w->opts.ordered = w->opts.acc_intrinsic = 0;
    w->b.ordered = 0;
}

/* attach + backend + registry: the CMPI_Win handle. On failure the MPI window is left to
 * the caller. memh: UCX-allocated window memory (passed on to the UCX state). */
static int attach_state(MPI_Win mpi_win, MPI_Win shm_win, MPI_Comm comm, void *base, MPI_Aint size, int disp_unit,
                        int dynamic, const clampi_win_options *opts, CMPI_Win *handle, void *memh) {
    clampi_win *w;
    int rc = clampi_win_attach(mpi_win, shm_win, comm, size, disp_unit, dynamic, opts, &w);
    if (rc != MPI_SUCCESS) {
        clampi_win_free_backend_memory(opts->backend, memh);
        return rc;
    }
    rc = clampi_win_setup_backend(w, comm, base, size, opts, memh);
    if (rc == MPI_SUCCESS) {
        CMPI_Win h;
        int ok = clampi_registry_add(w, &h) == MPI_SUCCESS, all;
        PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
        if (all) {
            *handle = h;
            clampi_registry_map(w); /* CMPI_Invalidate(w.win) finds it (best effort) */
            if (w->b.state) clampi_win_free_unfreed_at_finalize();
            return MPI_SUCCESS;
        }
        if (ok) clampi_registry_remove(h);
        rc = MPI_ERR_NO_MEM;
        clampi_win_teardown_backend(w);
    }
    clampi_win_release(w);
    return rc;
}

int CMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, CMPI_Win *win) {
    int rc = check_comm_args(comm, size, disp_unit, win);
    if (rc != MPI_SUCCESS) return rc;
    clampi_win_options opts;
    if (!clampi_win_read_options(info, comm, &opts)) return clampi_raise_comm(comm, CLAMPI_E_INFO);
    MPI_Win mpi_win;
    rc = PMPI_Win_create(base, size, disp_unit, info, comm, &mpi_win);
    if (rc != MPI_SUCCESS) return rc;
    rc = attach_state(mpi_win, MPI_WIN_NULL, comm, base, size, disp_unit, 0, &opts, win, NULL);
    if (rc != MPI_SUCCESS) {
        PMPI_Win_free(&mpi_win);
        return clampi_raise_comm(comm, rc == MPI_ERR_NO_MEM ? CLAMPI_E_NOMEM : CLAMPI_E_UCX);
    }
    return MPI_SUCCESS;
}

int CMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, CMPI_Win *win) {
    int rc = check_comm_args(comm, 0, 1, win);
    if (rc != MPI_SUCCESS) return rc;
    clampi_win_options opts;
    if (!clampi_win_read_options(info, comm, &opts)) return clampi_raise_comm(comm, CLAMPI_E_INFO);
    MPI_Win mpi_win;
    rc = PMPI_Win_create_dynamic(info, comm, &mpi_win);
    if (rc != MPI_SUCCESS) return rc;
    rc = attach_state(mpi_win, MPI_WIN_NULL, comm, NULL, 0, 1, 1, &opts, win, NULL);
    if (rc != MPI_SUCCESS) {
        PMPI_Win_free(&mpi_win);
        return clampi_raise_comm(comm, rc == MPI_ERR_NO_MEM ? CLAMPI_E_NOMEM : CLAMPI_E_UCX);
    }
    return MPI_SUCCESS;
}

int CMPI_Win_attach(CMPI_Win win, void *base, MPI_Aint size) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!w->b.dynamic) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (size < 0 || (size > 0 && !base)) return clampi_raise_win(w, CLAMPI_E_ARG);
    return w->b.ops->attach(&w->b, base, size);
}

int CMPI_Win_detach(CMPI_Win win, const void *base) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!w->b.dynamic) return clampi_raise_win(w, CLAMPI_E_ARG);
    return w->b.ops->detach(&w->b, base);
}

int clampi_win_test_locks_taken(CMPI_Win win, uint64_t *out) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return MPI_ERR_WIN;
    if (w->mt) pthread_mutex_lock(&w->lock); /* not counted */
    *out = w->locks_taken;
    if (w->mt) pthread_mutex_unlock(&w->lock);
    return MPI_SUCCESS;
}

int CMPI_Win_get_info(CMPI_Win win, MPI_Info *info_used) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!info_used) return clampi_raise_win(w, CLAMPI_E_ARG);
    int rc = PMPI_Win_get_info(w->b.win, info_used);
    if (rc != MPI_SUCCESS) return rc;
    clampi_win_enter_always(w);
    clampi_win_options o = w->opts;
    clampi_win_leave_always(w);
    clampi_options_to_info(&o, *info_used);
    return MPI_SUCCESS;
}

/* Run-time changes: the cache keys (mode, sizes, ...) and mpi_win_order (UCX windows).
 * clampi_backend, clampi_progress and mpi_win_scope are fixed at creation: new values are
 * validated and then ignored (CMPI_Win_get_info reports what is in effect). */
int CMPI_Win_set_info(CMPI_Win win, MPI_Info info) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    clampi_win_options next = w->opts;
    const char *bad_key = NULL;
    if (clampi_options_update(info, &next, &bad_key) != MPI_SUCCESS) return clampi_raise_win(w, CLAMPI_E_INFO);
    int rc = PMPI_Win_set_info(w->b.win, info);
    if (rc != MPI_SUCCESS) return rc;
    next.backend = w->opts.backend;
    next.progress = w->opts.progress;
    next.thread_scope = w->opts.thread_scope;
    const unsigned caps = w->b.ops->caps;
    if (!(caps & CLAMPI_BACKEND_CAP_ORDER)) next.ordered = 0;
    if (!(caps & CLAMPI_BACKEND_CAP_ACC_INTRINSIC)) next.acc_intrinsic = 0;
    if (w->b.thread_scope) next.mode = CLAMPI_MODE_OFF;
    clampi_win_reconfigure(w, &next);
    if (hooks->on_set_info) hooks->on_set_info(w); /* e.g. mpi_assert_accumulate_intrinsic changed */
    return MPI_SUCCESS;
}

/* Tries to put the window's memory in node-shared memory: returns 1 with *mpi_win (over
 * comm) and *shm_win set, or 0 (everyone then falls back to MPI_Win_allocate). When all
 * of comm is on one node the shared window is the user's window itself. */
/* A window segment's size rounded up to 64 bytes, so that every rank's segment starts
 * aligned: MPICH 4.0 misplaces targets that follow a segment whose size is not a multiple
 * of 16 (MPI_Win_allocate: gets read the wrong bytes), and read wrong bytes through a window
 * created over such a segment (LCC on 2 nodes of 2 ranks; test app_lcc_rmat_two_nodes_np4). */
static MPI_Aint aligned_segment(MPI_Aint size) { return (size + 63) & ~(MPI_Aint)63; }

static int allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void **base, MPI_Win *mpi_win,
                           MPI_Win *shm_win, MPI_Comm *shm_comm) {
    MPI_Comm node;
    if (clampi_node_split(comm, &node) != MPI_SUCCESS) return 0;
    int nnode, ncomm;
    MPI_Comm_size(node, &nnode);
    MPI_Comm_size(comm, &ncomm);
    int one_node = all_agree(comm, nnode == ncomm);
    MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    /* Some MPI configurations cannot allocate shared windows (e.g. Open MPI with only
     * the osc pt2pt component): that is not an error, just no shortcut. */
    /* On one node the shared window is the user's window: its size stays. */
    const MPI_Aint shm_size = one_node ? size : aligned_segment(size);
    int ok = PMPI_Win_allocate_shared(shm_size, disp_unit, info, node, base, shm_win) == MPI_SUCCESS;
    if (ok) clampi_numa_touch_own(*base, (size_t)size); /* my segment: placed by me */
    if (!all_agree(comm, ok)) {
        if (ok) PMPI_Win_free(shm_win);
        MPI_Comm_free(&node);
        return 0;
    }
    *shm_comm = node; /* freed after the shared window (backend free) */
    if (one_node) {
        /* The shared window spans comm already (same group, same order: the node split
         * keeps comm's order with key 0). */
        *mpi_win = *shm_win;
        return 1;
    }
    ok = PMPI_Win_create(*base, size, disp_unit, info, comm, mpi_win) == MPI_SUCCESS;
    if (!all_agree(comm, ok)) {
        if (ok) PMPI_Win_free(mpi_win);
        PMPI_Win_free(shm_win);
        MPI_Comm_free(shm_comm);
        return 0;
    }
    return 1;
}

/* Window memory from the backend (UCX: allocated by UCX so that its shared-memory
 * transports reach it one-sidedly) with an MPI window created over it. 0 if the backend has
 * no allocator or it is not possible everywhere (e.g. Open MPI's osc/rdma cannot create a
 * window over user memory at np = 1): the caller then allocates with MPI, and the backend
 * registers that memory. */
int clampi_win_allocate_backend(clampi_backend_kind kind, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                void **base, MPI_Win *mpi_win, void **memh) {
    const clampi_backend_ops *be = clampi_backend_table(kind);
    if (!be->mem_alloc) return 0;
    int ok = be->mem_alloc((size_t)size, base, memh) == MPI_SUCCESS;
    if (!all_agree(comm, ok)) {
        if (ok) be->mem_free(*memh);
        return 0;
    }
    MPI_Errhandler old;
    PMPI_Comm_get_errhandler(comm, &old);
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    ok = PMPI_Win_create(*base, size, disp_unit, info, comm, mpi_win) == MPI_SUCCESS;
    PMPI_Comm_set_errhandler(comm, old);
    PMPI_Errhandler_free(&old);
    if (!all_agree(comm, ok)) {
        if (ok) PMPI_Win_free(mpi_win);
        be->mem_free(*memh);
        *memh = NULL;
        return 0;
    }
    return 1;
}

void clampi_win_free_backend_memory(clampi_backend_kind kind, void *memh) {
    const clampi_backend_ops *be = clampi_backend_table(kind);
    if (memh && be->mem_free) be->mem_free(memh);
}

int CMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, CMPI_Win *win) {
    int rc = check_comm_args(comm, size, disp_unit, win);
    if (rc == MPI_SUCCESS && !baseptr) rc = clampi_raise_comm(comm, CLAMPI_E_ARG);
    if (rc != MPI_SUCCESS) return rc;
    clampi_win_options opts;
    if (!clampi_win_read_options(info, comm, &opts)) return clampi_raise_comm(comm, CLAMPI_E_INFO);
    MPI_Win mpi_win = MPI_WIN_NULL, shm_win = MPI_WIN_NULL;
    MPI_Comm shm_comm = MPI_COMM_NULL;
    void *base = NULL, *memh = NULL;
    if (clampi_win_allocate_backend(opts.backend, size, disp_unit, info, comm, &base, &mpi_win, &memh)) {
        /* the backend's memory under an MPI window */
    } else if (!(opts.shm_direct &&
                 allocate_shared(size, disp_unit, info, comm, &base, &mpi_win, &shm_win, &shm_comm))) {
        rc = PMPI_Win_allocate(aligned_segment(size), disp_unit, info, comm, &base, &mpi_win);
        if (rc != MPI_SUCCESS) return rc;
    }
    rc = attach_state(mpi_win, shm_win, comm, base, size, disp_unit, 0, &opts, win, memh);
    if (rc == MPI_SUCCESS) clampi_registry_find(*win)->b.shm_comm = shm_comm;
    if (rc != MPI_SUCCESS) {
        PMPI_Win_free(&mpi_win);
        if (shm_win != MPI_WIN_NULL && shm_win != mpi_win) PMPI_Win_free(&shm_win);
        if (shm_comm != MPI_COMM_NULL) PMPI_Comm_free(&shm_comm);
        return clampi_raise_comm(comm, rc == MPI_ERR_NO_MEM ? CLAMPI_E_NOMEM : CLAMPI_E_UCX);
    }
    *(void **)baseptr = base;
    return MPI_SUCCESS;
}

int clampi_win_quiesce(clampi_win *w) {
    return w->b.state && w->b.ops->quiesce ? w->b.ops->quiesce(&w->b) : MPI_SUCCESS;
}

int CMPI_Win_free(CMPI_Win *win) {
    clampi_win *w = win ? clampi_registry_find(*win) : NULL;
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (w->rmax && hooks->on_free) { /* duplicates and memory-handle windows go (src/rmax) */
        int rc = hooks->on_free(w, win);
        if (rc != -1) return rc;
    }
    /* a parent, or a window of no family: everyone's operations complete; a failure leaves
     * the window in place */
    int qrc = clampi_win_quiesce(w);
    if (qrc != MPI_SUCCESS) return qrc;
    if (clampi_stats_enabled()) clampi_stats_print(w);
    int rc = w->b.ops->free(&w->b);   /* frees w->b.win (and the shared window behind it) */
    if (rc != MPI_SUCCESS) return rc; /* the window stays usable */
    clampi_registry_unmap(w);
    clampi_registry_remove(*win);
    clampi_win_release(w);
    win->win = MPI_WIN_NULL;
    win->slot = 0;
    win->serial = 0;
    return MPI_SUCCESS;
}
