/* libclampi_pmpi: clampi's transparent mode for unmodified MPI programs, through the MPI
 * profiling interface (LD_PRELOAD, or linked before the MPI library).
 *
 * Thin entry points only: each MPI_* function here finds the window's clampi state and
 * hands the call to the rma/ layer (clampi_win_*) or the coll/ layer (clampi_coll_*),
 * which do the work and reach the MPI library through PMPI_*.
 *
 * Non-recursion: every MPI call the library layers make for themselves goes to PMPI_
 * (src/common/pmpi_shim.h, force-included into them; this file spells PMPI_ out), so
 * nothing they do comes back here, whichever way the libraries are loaded; the same
 * objects go into libclampi and libclampi_pmpi (scripts/check_pmpi.py checks both).
 *
 * Window state hangs on the MPI_Win as an attribute (its delete callback frees the state
 * inside MPI_Win_free); the hot path finds it through the rma layer's lock-free
 * MPI_Win -> state map. Windows clampi does not know (created before the preload was
 * active, or by clampi itself) and invalid arguments go to MPI unchanged, so MPI's own
 * checks and error messages apply. Everything not defined here is not wrapped. */
#include <mpi.h>

#include "clampi/export.h"
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "services/finalize.h"
#include "services/heap.h"
#include "common/options.h"
#include "common/progress_hook.h"
#include "pmpi/straight.h"
#include "pmpi/match_entry.h"
#include "pmpi/match_profile.h"
#include "common/stats.h"
#include "backends/access.h"
#include "rma/errors.h"
#include "rma/stats.h"
#include "rma/window.h"
#include "rmax/family.h"
#include "pmpi/preload_internal.h"
#include "pmpi/ulfm.h"

/* ---- process-wide switches: read once, at load ------------------------------------- */
/* 0 with CLAMPI_MODE=off: every call goes straight to MPI. (Hidden, not static: the
 * assembly entries of pmpi/pass_entry.h read it.) */
__attribute__((visibility("hidden"))) int active = 1;
static int thread_multiple; /* MPI initialised with MPI_THREAD_MULTIPLE */

__attribute__((constructor)) static void preload_init(void) {
    clampi_opt_value mode; /* an invalid CLAMPI_MODE fails window creation later, with its message */
    active = !(clampi_opt_env(CLAMPI_OPT_MODE, &mode) > 0 && mode.u == CLAMPI_MODE_OFF);
}

/* ---- window state on the MPI_Win --------------------------------------------------- */
static int win_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int unmapped; /* windows that did not fit the map: found through the attribute */
/* Bumped whenever the preload creates or frees a window: it invalidates every thread's
 * last-window entry (a freed window's handle may come back for a new window). */
static unsigned window_gen = 1;

/* Called by MPI_Win_free (before MPI frees the handle, so no new window can reuse the
 * handle while the map still names it). */
static __thread clampi_win *freeing; /* a UCX window MPI_Win_free is tearing down itself */
static int delete_state(MPI_Win win, int keyval, void *attr, void *extra) {
    clampi_win *w = attr;
    if (w == freeing) return MPI_SUCCESS;
    /* duplicates and memory-handle windows go first (their MPI_Win handles stay valid
     * MPI windows, unknown to clampi from now on) */
    if (w->rmax && w->rmax->kind == CLAMPI_RMAX_PARENT) clampi_rmax_on_free(w, &w->self);
    clampi_registry_remove(w->self);
    if (clampi_registry_lookup_mpi(win) == w)
        clampi_registry_unmap(w);
    else
        __atomic_fetch_sub(&unmapped, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&window_gen, 1, __ATOMIC_RELEASE);
    clampi_win_release(w);
    return MPI_SUCCESS;
}

/* ---- windows of a family (MPIX_Win_dup_with_info, MPIX_Win_from_memhandle: mpix.c) ---
 * Each has an MPI_Win of its own (a zero-size window on MPI_COMM_SELF) carrying, as an
 * attribute, the CMPI_ handle of its clampi state; that state may die first (freed with
 * its parent): the handle then no longer resolves and the window is MPI's alone. */
static int family_keyval = MPI_KEYVAL_INVALID;
static int nfamily; /* family windows alive */

static int delete_family(MPI_Win win, int keyval, void *attr, void *extra) {
    CMPI_Win *h = attr;
    if (clampi_registry_find(*h)) CMPI_Win_free(h);
    free(h);
    __atomic_fetch_sub(&nfamily, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&window_gen, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}
static void create_keyval(void) {
    PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_state, &win_keyval, NULL);
    PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_family, &family_keyval, NULL);
}

int clampi_pmpi_family_adopt(MPI_Win own, CMPI_Win child) {
    pthread_once(&keyval_once, create_keyval);
    CMPI_Win *h = malloc(sizeof *h);
    if (!h || family_keyval == MPI_KEYVAL_INVALID) {
        free(h);
        return MPI_ERR_NO_MEM;
    }
    *h = child;
    int rc = PMPI_Win_set_attr(own, family_keyval, h);
    if (rc != MPI_SUCCESS) {
        free(h);
        return rc;
    }
    __atomic_fetch_add(&nfamily, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&window_gen, 1, __ATOMIC_RELEASE);
    if (!thread_multiple) clampi_straight_forget_last();
    return MPI_SUCCESS;
}

void clampi_pmpi_route(clampi_win *w) {
    if (w->cmpi_route) return;
    w->cmpi_route = 1;
    __atomic_fetch_add(&window_gen, 1, __ATOMIC_RELEASE);
    if (!thread_multiple) clampi_straight_forget_last();
}

static __attribute__((noinline)) clampi_win *find_slow(MPI_Win win) {
    void *attr = NULL;
    int flag = 0;
    if (win == MPI_WIN_NULL) return NULL;
    if (__atomic_load_n(&unmapped, __ATOMIC_RELAXED) && win_keyval != MPI_KEYVAL_INVALID) {
        PMPI_Win_get_attr(win, win_keyval, &attr, &flag);
        if (flag) return attr;
    }
    if (__atomic_load_n(&nfamily, __ATOMIC_RELAXED) && family_keyval != MPI_KEYVAL_INVALID) {
        PMPI_Win_get_attr(win, family_keyval, &attr, &flag);
        if (flag) return clampi_registry_find(*(CMPI_Win *)attr);
    }
    return NULL;
}

static inline clampi_win *find(MPI_Win win) {
    clampi_win *w = clampi_registry_lookup_mpi(win);
    if (__builtin_expect(w != NULL, 1) ||
        !(__atomic_load_n(&unmapped, __ATOMIC_RELAXED) | __atomic_load_n(&nfamily, __ATOMIC_RELAXED)))
        return w;
    return find_slow(win);
}

clampi_win *clampi_pmpi_find(MPI_Win win) { return active ? find(win) : NULL; }

/* One entry per thread: the window last looked up, so that a program working on one
 * window pays two compares per call instead of the map probe. (initial-exec: a TLS
 * access without a call; the library is loaded at start-up, by LD_PRELOAD or linking.) */
typedef struct last_window {
    MPI_Win win;
    clampi_win *w;
    unsigned gen;
} last_window;
static __thread last_window last __attribute__((tls_model("initial-exec")));

static inline int last_is(MPI_Win win) {
    return last.win == win && last.gen == __atomic_load_n(&window_gen, __ATOMIC_RELAXED);
}
static __attribute__((noinline)) clampi_win *lookup_fill(MPI_Win win) {
    unsigned gen = __atomic_load_n(&window_gen, __ATOMIC_ACQUIRE);
    clampi_win *w = find(win);
    last.win = win;
    last.w = w;
    last.gen = gen;
    if (!thread_multiple) clampi_straight_remember(win, w);
    return w;
}
/* find(), through the thread's last-window entry. */
static inline clampi_win *lookup(MPI_Win win) { return last_is(win) ? last.w : lookup_fill(win); }

/* The hot entry points test, inline, whether the call goes straight to MPI: the window is
 * the last one used and all its operations (FAST_PASS(ops)) or synchronizations
 * (FAST_PASS(syncs)) go straight (pmpi/straight.h), or the preload is off. Everything else is
 * in an out-of-line function with the same signature, so that both branches are tail
 * calls (no registers to save around the test). */
#define FAST_PASS(kind) (__builtin_expect(clampi_last.kind##_win == win, 1) || !active)
/* PASS_ENTRY(NAME, WIN_OFFSET, (params), (args)) defines MPI_NAME as
 *     if (FAST_PASS(ops)) return PMPI_NAME(args); return clampi_pmpi_NAME_entry(args);
 * for the RMA operations (the calls programs make most): in assembly on x86-64, where
 * the window handle is read at WIN_OFFSET from the stack pointer (GCC's C version reloads
 * and stores back every stack argument before either tail call); elsewhere in C. */
#include "pmpi/pass_entry.h"

/* Synchronizations also count down a pause of in-flight sharing (pmpi/straight.h). */
#define FAST_SYNC (__builtin_expect(clampi_last.syncs_win == win && --clampi_last.budget, 1) || !active)

/* Options are read and agreed on before the window exists: a bad value fails creation on
 * every rank with MPI_ERR_INFO_VALUE (through comm's error handler), as CMPI_Win_* do. */
static int creation_options(MPI_Info info, MPI_Comm comm, clampi_win_options *opts) {
    if (comm == MPI_COMM_NULL) return MPI_ERR_COMM; /* let MPI report it */
    if (!clampi_win_read_options(info, comm, opts)) return clampi_raise_comm(comm, CLAMPI_E_INFO);
    /* The Quo Vadis RMA paper's semantics exist only on the UCX backend: asking for any of them asks for it. */
    if (opts->thread_scope || opts->ordered || opts->acc_intrinsic) opts->backend = CLAMPI_BACKEND_KIND_UCX;
    return MPI_SUCCESS;
}

/* State for a window MPI has just created. A rank that cannot get memory leaves the
 * window uncached (clampi_win_attach agrees over comm), never fails the program.
 * try_ucx: the options may put the window on the UCX backend (clampi_backend=ucx, or a
 * key that implies it; not on shared windows): then every MPI_ call on it is served
 * through the CMPI_ layer. memh: UCX-allocated memory under win (MPI_Win_allocate).
 * Returns 1 if the window is on UCX, 0 if not; -1 (memh given, UCX could not be set up
 * on every rank: the caller frees win and allocates with MPI; memh is gone). */
static int manage(MPI_Win win, MPI_Win shm, MPI_Comm comm, void *base, MPI_Aint size, int disp_unit, int dynamic,
                  const clampi_win_options *opts, int try_ucx, void *memh) {
    pthread_once(&keyval_once, create_keyval);
    clampi_win *w;
    if (win_keyval == MPI_KEYVAL_INVALID ||
        clampi_win_attach(win, shm, comm, size, disp_unit, dynamic, opts, &w) != MPI_SUCCESS) {
        if (memh) clampi_win_free_backend_memory(opts->backend, memh);
        return memh ? -1 : 0;
    }
    int ucx = 0;
    if (try_ucx && opts->backend == CLAMPI_BACKEND_KIND_UCX)
        ucx = clampi_win_setup_backend(w, comm, base, size, opts, memh) == MPI_SUCCESS &&
              w->opts.backend != CLAMPI_BACKEND_KIND_MPI;
    if (memh && !ucx) {
        clampi_win_release(w);
        return -1;
    }
    /* Every RMA call is wrapped (the MPI-4 large-count ones too, where the MPI has them):
     * a flush with nothing outstanding may be elided while the window caches. */
    w->elide_flushes = CLAMPI_ELIDE_WHILE_CACHING;
    int ok = (ucx || clampi_straight_setup(w, comm) == 0) && clampi_registry_add(w, &w->self) == MPI_SUCCESS;
    if (ucx) { /* every rank on UCX, or none */
        int all = 0;
        PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
        if (!all) {
            clampi_registry_remove(w->self);
            clampi_win_teardown_backend(w);
            ok = 0;
        }
    }
    if (!ok || PMPI_Win_set_attr(win, win_keyval, w) != MPI_SUCCESS) {
        clampi_registry_remove(w->self);
        clampi_win_release(w);
        return 0;
    }
    w->cmpi_route = ucx;
    if (ucx) clampi_win_free_unfreed_at_finalize(); /* those the program leaves (rma/unfreed.c) */
    if (clampi_registry_map(w) != 0) __atomic_fetch_add(&unmapped, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&window_gen, 1, __ATOMIC_RELEASE);
    if (!thread_multiple) clampi_straight_forget_last();
    return ucx;
}

/* The body of every creation call: options agreed on, MPI's call, clampi state. */
#define CREATE_WINDOW(pmpi_call, shm, base, size, disp_unit, dynamic, try_ucx)                         \
    clampi_before_blocking();                                                                          \
    clampi_win_options o;                                                                              \
    int rc = active ? creation_options(info, comm, &o) : MPI_SUCCESS;                                  \
    if (!active || rc == MPI_ERR_COMM) return pmpi_call;                                               \
    if (rc != MPI_SUCCESS) return rc;                                                                  \
    rc = pmpi_call;                                                                                    \
    if (rc == MPI_SUCCESS) manage(*win, shm, comm, base, size, disp_unit, dynamic, &o, try_ucx, NULL); \
    return rc

CLAMPI_API int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    CREATE_WINDOW(PMPI_Win_create(base, size, disp_unit, info, comm, win), MPI_WIN_NULL, base, size, disp_unit, 0, 1);
}

/* On the UCX backend the memory comes from UCX (one-sided over its shared-memory
 * transports, as CMPI_Win_allocate does), with an MPI window created over it; if that is
 * not possible everywhere, MPI allocates and the window stays on MPI. */
static int allocate_entry(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    clampi_before_blocking();
    clampi_win_options o;
    int rc = active ? creation_options(info, comm, &o) : MPI_SUCCESS;
    if (!active || rc == MPI_ERR_COMM) return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    if (rc != MPI_SUCCESS) return rc;
    if (o.backend == CLAMPI_BACKEND_KIND_UCX && size >= 0 && disp_unit > 0 && baseptr && win) {
        void *base = NULL, *memh = NULL;
        MPI_Win mw;
        if (clampi_win_allocate_backend(o.backend, size, disp_unit, info, comm, &base, &mw, &memh)) {
            if (manage(mw, MPI_WIN_NULL, comm, base, size, disp_unit, 0, &o, 1, memh) == 1) {
                clampi_win *w = find(mw);
                if (w) w->preload_flavor = MPI_WIN_FLAVOR_ALLOCATE;
                *(void **)baseptr = base;
                *win = mw;
                return MPI_SUCCESS;
            }
            PMPI_Win_free(&mw); /* its memory went with the failed UCX setup */
        }
    }
    rc = PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    if (rc == MPI_SUCCESS) manage(*win, MPI_WIN_NULL, comm, *(void **)baseptr, size, disp_unit, 0, &o, 0, NULL);
    return rc;
}

CLAMPI_API int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                MPI_Win *win) {
    return allocate_entry(size, disp_unit, info, comm, baseptr, win);
}

/* Shared windows: gets to any rank of the window are a direct copy from its memory
 * (always fresh; legal since MPI_Get may read at any time before its completion). They
 * stay on MPI (UCX cannot give load/store access): MPI_Win_get_info says so. */
CLAMPI_API int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                       MPI_Win *win) {
    CREATE_WINDOW(PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win),
                  o.shm_direct ? *win : MPI_WIN_NULL, NULL, size, disp_unit, 0, 0);
}

/* Dynamic windows: cached by (target, absolute address); caching modes need the
 * clampi_dynamic_cache opt-in (see clampi_win_attach). */
CLAMPI_API int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    CREATE_WINDOW(PMPI_Win_create_dynamic(info, comm, win), MPI_WIN_NULL, NULL, 0, 1, 1, 1);
}

/* Memory of a dynamic window on the UCX backend is registered with UCX too. */
CLAMPI_API int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) {
    clampi_win *w = active ? lookup(win) : NULL;
    if (w && w->cmpi_route) return CMPI_Win_attach(w->self, base, size);
    return PMPI_Win_attach(win, base, size);
}

CLAMPI_API int MPI_Win_detach(MPI_Win win, const void *base) {
    clampi_win *w = active ? lookup(win) : NULL;
    if (w && w->cmpi_route) return CMPI_Win_detach(w->self, base);
    return PMPI_Win_detach(win, base);
}

static int win_free_entry(MPI_Win *win) {
    clampi_before_blocking();
    if (!thread_multiple) clampi_straight_forget_last();
    clampi_win *w = active && win ? find(*win) : NULL;
    /* a window of a family: its attribute's delete callback frees the child (stats too) */
    if (!w || (w->rmax && w->rmax->kind != CLAMPI_RMAX_PARENT)) return PMPI_Win_free(win);
    int rc = clampi_win_quiesce(w);
    if (rc != MPI_SUCCESS) return rc;
    if (clampi_stats_enabled()) clampi_stats_print(w);
    if (!w->b.state) return PMPI_Win_free(win); /* the attribute's delete callback frees w */
    /* UCX: the children go, our operations complete, then the MPI window (collective:
     * nobody uses the memory after it), then the UCX state, which may own the memory. */
    if (w->rmax) clampi_rmax_on_free(w, &w->self);
    clampi_registry_remove(w->self);
    if (clampi_registry_lookup_mpi(*win) == w)
        clampi_registry_unmap(w);
    else
        __atomic_fetch_sub(&unmapped, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&window_gen, 1, __ATOMIC_RELEASE);
    freeing = w;
    rc = w->b.ops->free(&w->b);
    freeing = NULL;
    clampi_win_release(w);
    if (rc == MPI_SUCCESS) *win = MPI_WIN_NULL;
    return rc;
}

CLAMPI_API int MPI_Win_free(MPI_Win *win) { return win_free_entry(win); }

/* A UCX-backend window the program left, freed at MPI_Finalize (rma/unfreed.c), at its own
 * place in the order. A window of a family (duplicate, memory-handle window) is a copy of
 * its parent, b.win included: it is freed through its own MPI_Win (b.err_win, adopt() in
 * mpix.c), as the program would, never through b.win, which would free the parent early
 * (on this rank only, for a memory-handle window: out of step with the other ranks). */
static int free_routed(clampi_win *w) {
    int child = w->rmax && w->rmax->kind != CLAMPI_RMAX_PARENT;
    MPI_Win win = child ? w->b.err_win : w->b.win;
    return win_free_entry(&win);
}
static void stats_print_unless_ucx(const clampi_win *w) {
    if (!w->b.state) clampi_stats_print(w);
}

/* ---- gets ---------------------------------------------------------------------------- */
__attribute__((visibility("hidden"), noinline)) int clampi_pmpi_Get_entry(void *origin_addr, int origin_count,
                                                                          MPI_Datatype origin_datatype, int target_rank,
                                                                          MPI_Aint target_disp, int target_count,
                                                                          MPI_Datatype target_datatype, MPI_Win win) {
    clampi_win *w = active ? lookup(win) : NULL;
    if (w && w->cmpi_route)
        return CMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                        target_datatype, w->self);
    if (w && !clampi_straight_op(w, target_rank) && target_rank != MPI_PROC_NULL) {
        int rc = clampi_win_get(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                                target_datatype);
        if (__builtin_expect(rc >= 0, 1)) return rc;
    }
    return PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
                    win);
}

PASS_ENTRY(Get, 16,
           (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, MPI_Win win),
           (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win))

/* A get served locally still owes the program a request: a generalized request,
 * completed before it is returned. */
static int done_query(void *extra, MPI_Status *status) {
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int done_free(void *extra) { return MPI_SUCCESS; }
static int done_cancel(void *extra, int complete) { return MPI_SUCCESS; }

/* MPI_Rget's body, also the int path of MPI_Rget_c (never a call to the MPI_ name). */
static int rget_entry(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                      MPI_Request *request) {
    clampi_win *w = active ? lookup(win) : NULL;
    if (w && w->cmpi_route)
        return CMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                         target_datatype, w->self, request);
    if (w && target_rank != MPI_PROC_NULL && request && !clampi_straight_op(w, target_rank)) {
        int served = 0;
        int rc = clampi_win_rget(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                                 target_datatype, request, &served);
        if (rc >= 0) {
            if (rc != MPI_SUCCESS || !served) return rc;
            rc = PMPI_Grequest_start(done_query, done_free, done_cancel, NULL, request);
            return rc == MPI_SUCCESS ? PMPI_Grequest_complete(*request) : rc;
        }
    }
    return PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, win, request);
}

CLAMPI_API int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                        MPI_Request *request) {
    return rget_entry(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win, request);
}

/* ---- writes and atomics: drop what they may overwrite ------------------------------- */
/* The target range is checked with the target's count and type on both sides: argument
 * errors are MPI's to report (the call then goes to MPI unchanged). */
#define WRITE_OP(target, disp, tcount, ttype, call, ccall)                                   \
    do {                                                                                     \
        clampi_win *w;                                                                       \
        clampi_access a;                                                                     \
        if (FAST_PASS(ops)) return call;                                                     \
        if (!active || !(w = lookup(win))) return call;                                      \
        if (w->cmpi_route) return ccall;                                                     \
        if ((target) == MPI_PROC_NULL || clampi_straight_op(w, target) ||                    \
            clampi_win_write_begin(w, tcount, ttype, target, disp, tcount, ttype, &a) != -1) \
            return call;                                                                     \
        return clampi_win_write_end(w, target, &a, call);                                    \
    } while (0)

PASS_ENTRY(Put, 16,
           (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
           (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win))
__attribute__((visibility("hidden"), noinline)) int clampi_pmpi_Put_entry(const void *origin_addr, int origin_count,
                                                                          MPI_Datatype origin_datatype, int target_rank,
                                                                          MPI_Aint target_disp, int target_count,
                                                                          MPI_Datatype target_datatype, MPI_Win win) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win),
             CMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, w->self));
}

PASS_ENTRY(Rput, 16,
           (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request),
           (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
            request))
__attribute__((visibility("hidden"), noinline)) int
clampi_pmpi_Rput_entry(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                       MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                       MPI_Request *request) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, request),
             CMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, w->self, request));
}

PASS_ENTRY(Accumulate, 24,
           (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
           (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
            win))
__attribute__((visibility("hidden"), noinline)) int
clampi_pmpi_Accumulate_entry(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                             MPI_Win win) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, win),
             CMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, w->self));
}

PASS_ENTRY(Raccumulate, 24,
           (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
            MPI_Request *request),
           (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
            win, request))
__attribute__((visibility("hidden"), noinline)) int
clampi_pmpi_Raccumulate_entry(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                              MPI_Win win, MPI_Request *request) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                              target_datatype, op, win, request),
             clampi_win_raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                                    target_datatype, op, w->self, request));
}

PASS_ENTRY(Get_accumulate, 48,
           (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
            int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
           (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
            target_disp, target_count, target_datatype, op, win))
__attribute__((visibility("hidden"), noinline)) int
clampi_pmpi_Get_accumulate_entry(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                 void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                                 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                 MPI_Win win) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                                 target_rank, target_disp, target_count, target_datatype, op, win),
             CMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                                 target_rank, target_disp, target_count, target_datatype, op, w->self));
}

PASS_ENTRY(Rget_accumulate, 48,
           (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
            int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request),
           (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
            target_disp, target_count, target_datatype, op, win, request))
__attribute__((visibility("hidden"), noinline)) int
clampi_pmpi_Rget_accumulate_entry(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                  void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                                  MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                  MPI_Win win, MPI_Request *request) {
    WRITE_OP(target_rank, target_disp, target_count, target_datatype,
             PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                  result_datatype, target_rank, target_disp, target_count, target_datatype, op, win,
                                  request),
             clampi_win_rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                        result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                                        w->self, request));
}

PASS_ENTRY(Fetch_and_op, 8,
           (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
            MPI_Op op, MPI_Win win),
           (origin_addr, result_addr, datatype, target_rank, target_disp, op, win))
__attribute__((visibility("hidden"), noinline)) int
clampi_pmpi_Fetch_and_op_entry(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                               MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    WRITE_OP(target_rank, target_disp, 1, datatype,
             PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win),
             CMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, w->self));
}

PASS_ENTRY(Compare_and_swap, 8,
           (const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype,
            int target_rank, MPI_Aint target_disp, MPI_Win win),
           (origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win))
__attribute__((visibility("hidden"), noinline)) int
clampi_pmpi_Compare_and_swap_entry(const void *origin_addr, const void *compare_addr, void *result_addr,
                                   MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
    WRITE_OP(
        target_rank, target_disp, 1, datatype,
        PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win),
        CMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, w->self));
}

/* ---- MPI-4 large-count calls (MPI_Get_c, ...), where the MPI has them ---------------
 * Wrapped so that clampi sees every operation (else no flush could ever be elided).
 * Counts that fit in an int take the int calls' path (a get is cached like any get; a
 * write drops what it may overwrite) with MPI's _c call; larger ones go to MPI and are
 * accounted for: the target is outstanding, a write drops everything cached of it. */
#ifdef CLAMPI_MPI_HAS_LARGE_COUNT_RMA
static inline int fits(MPI_Count c) { return c >= 0 && c <= INT_MAX; }

static clampi_win *big_begin(MPI_Win win, int target) {
    clampi_win *w = active ? lookup(win) : NULL;
    if (!w || target < 0 || target >= w->b.nranks || clampi_straight_op(w, target)) return NULL;
    clampi_win_enter(w);
    return w;
}
static int big_end(clampi_win *w, int target, int writes, int rc) {
    if (rc == MPI_SUCCESS) {
        clampi_win_mark_outstanding(w, target);
        if (!writes) {
            CLAMPI_WIN_COUNT(w, gets, 1);
            CLAMPI_WIN_COUNT(w, bypassed, 1);
        } else {
            const uint64_t all = (uint64_t)w->b.target_size[target];
            CLAMPI_WIN_COUNT(w, puts, 1);
            if (w->caches_data) clampi_cache_invalidate_range(&w->cache, (uint32_t)target, 0, all);
            clampi_inflight_forget_overlapping(&w->inflight, (uint32_t)target, 0, all);
        }
    }
    clampi_win_leave(w);
    return rc;
}
#define BIG_OP(target, writes, call)                                     \
    do {                                                                 \
        clampi_win *rw_ = active ? lookup(win) : NULL;                   \
        if (rw_ && rw_->cmpi_route) /* clampi's calls take int counts */ \
            return clampi_raise_win(rw_, CLAMPI_E_COUNT);                \
        clampi_win *bw = big_begin(win, target);                         \
        int brc = call;                                                  \
        return bw ? big_end(bw, target, writes, brc) : brc;              \
    } while (0)

/* A write or atomic: the int path when the target count fits, else BIG_OP. */
#define WRITE_OP_C(call, ccall)                                                                                      \
    do {                                                                                                             \
        if (fits(target_count)) WRITE_OP(target_rank, target_disp, (int)target_count, target_datatype, call, ccall); \
        BIG_OP(target_rank, 1, call);                                                                                \
    } while (0)

/* MPI_Get_c ... MPI_Rget_accumulate_c, from the entry-point table (entry_points.tsv). */
#include "pmpi/large_rma_entry.inc"

/* Windows whose displacement unit does not fit in an int are left to MPI (unmanaged). */
CLAMPI_API int MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                                MPI_Win *win) {
    if (disp_unit <= 0 || disp_unit > INT_MAX) return PMPI_Win_create_c(base, size, disp_unit, info, comm, win);
    CREATE_WINDOW(PMPI_Win_create_c(base, size, disp_unit, info, comm, win), MPI_WIN_NULL, base, size, (int)disp_unit,
                  0, 1);
}

CLAMPI_API int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                  MPI_Win *win) {
    if (disp_unit <= 0 || disp_unit > INT_MAX) return PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win);
    return allocate_entry(size, (int)disp_unit, info, comm, baseptr, win);
}

CLAMPI_API int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                         MPI_Win *win) {
    if (disp_unit <= 0 || disp_unit > INT_MAX)
        return PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win);
    CREATE_WINDOW(PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win),
                  o.shm_direct ? *win : MPI_WIN_NULL, NULL, size, (int)disp_unit, 0, 0);
}

/* Changes nothing clampi keeps: defined so that every large-count window call is accounted for. */
CLAMPI_API int MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr) {
    return PMPI_Win_shared_query_c(win, rank, size, disp_unit, baseptr);
}
#endif

/* ---- synchronization ------------------------------------------------------------------ */
/* MPI_NAME(rank, win) -> fn(w, rank);  MPI_NAME(win) -> fn(w). A synchronization that goes
 * through clampi also advances the straight path's policy (pmpi/straight.h). */
#define WRAP_RANK(NAME, fn)                                                                            \
    static __attribute__((noinline)) int NAME##_entry(int rank, MPI_Win win) {                         \
        clampi_win *w = active ? lookup(win) : NULL;                                                   \
        if (w && w->cmpi_route) /* MPI_PROC_NULL: nothing to synchronize (MPI 12.5) */                 \
            return rank == MPI_PROC_NULL ? MPI_SUCCESS : CMPI_##NAME(rank, w->self);                   \
        if (!w || rank < 0 || rank >= w->b.nranks) return PMPI_##NAME(rank, win);                      \
        int rc = clampi_straight_op(w, rank) && !clampi_inflight_pending(&w->inflight, (uint32_t)rank) \
                     ? PMPI_##NAME(rank, win)                                                          \
                     : fn(w, rank);                                                                    \
        clampi_straight_after_sync(w, rank);                                                           \
        return rc;                                                                                     \
    }                                                                                                  \
    CLAMPI_API int MPI_##NAME(int rank, MPI_Win win) {                                                 \
        if (FAST_SYNC) return PMPI_##NAME(rank, win);                                                  \
        return NAME##_entry(rank, win);                                                                \
    }
#define WRAP_WIN(NAME, fn, cfn, ...)                                             \
    static __attribute__((noinline)) int NAME##_entry(__VA_ARGS__ MPI_Win win) { \
        clampi_win *w = active ? lookup(win) : NULL;                             \
        if (w && w->cmpi_route) return cfn;                                      \
        if (!w) return PMPI_##NAME(ARGS_##NAME);                                 \
        int rc = fn;                                                             \
        clampi_straight_after_sync(w, -1);                                       \
        return rc;                                                               \
    }                                                                            \
    CLAMPI_API int MPI_##NAME(__VA_ARGS__ MPI_Win win) {                         \
        if (WAITS_FOR_PEERS_##NAME) clampi_before_blocking();                    \
        if (FAST_SYNC) return PMPI_##NAME(ARGS_##NAME);                          \
        return NAME##_entry(ARGS_##NAME);                                        \
    }
WRAP_RANK(Win_flush, clampi_win_flush)
WRAP_RANK(Win_flush_local, clampi_win_flush_local)
WRAP_RANK(Win_unlock, clampi_win_unlock)
#define ARGS_Win_flush_all win
#define ARGS_Win_flush_local_all win
#define ARGS_Win_unlock_all win
#define ARGS_Win_complete win
#define ARGS_Win_sync win
#define ARGS_Win_fence assert, win
/* Calls that wait for other processes' synchronisation calls: the message layer hands its
 * queued receives to MPI first (the MPI carrier; src/pmpi/entry_points.tsv, last section, says why). */
#define WAITS_FOR_PEERS_Win_flush_all 0
#define WAITS_FOR_PEERS_Win_flush_local_all 0
#define WAITS_FOR_PEERS_Win_unlock_all 0
#define WAITS_FOR_PEERS_Win_complete 1
#define WAITS_FOR_PEERS_Win_sync 0
#define WAITS_FOR_PEERS_Win_fence 1
WRAP_WIN(Win_flush_all, clampi_win_flush_all(w), CMPI_Win_flush_all(w->self))
WRAP_WIN(Win_flush_local_all, clampi_win_flush_local_all(w), CMPI_Win_flush_local_all(w->self))
WRAP_WIN(Win_unlock_all, clampi_win_unlock_all(w), CMPI_Win_unlock_all(w->self))
WRAP_WIN(Win_complete, clampi_win_complete(w), CMPI_Win_complete(w->self))
WRAP_WIN(Win_sync, clampi_win_sync(w), CMPI_Win_sync(w->self)) /* transparent: no in-flight sharing across it */
WRAP_WIN(Win_fence, clampi_win_fence(w, assert), CMPI_Win_fence(assert, w->self), int assert, )

/* Epoch openings and the target side of PSCW change nothing the transparent path keeps:
 * on MPI windows they go to MPI; windows served through the CMPI_ layer (UCX backend,
 * families) have them served there. */
static inline clampi_win *routed(MPI_Win win) {
    clampi_win *w = active ? lookup(win) : NULL;
    return w && w->cmpi_route ? w : NULL;
}
CLAMPI_API int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
    clampi_win *w = routed(win);
    if (w && rank == MPI_PROC_NULL) return MPI_SUCCESS;
    return w ? CMPI_Win_lock(lock_type, rank, assert, w->self) : PMPI_Win_lock(lock_type, rank, assert, win);
}
CLAMPI_API int MPI_Win_lock_all(int assert, MPI_Win win) {
    clampi_win *w = routed(win);
    return w ? CMPI_Win_lock_all(assert, w->self) : PMPI_Win_lock_all(assert, win);
}
CLAMPI_API int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
    clampi_before_blocking(); /* may wait for the targets' MPI_Win_post */
    clampi_win *w = routed(win);
    return w ? CMPI_Win_start(group, assert, w->self) : PMPI_Win_start(group, assert, win);
}
CLAMPI_API int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
    clampi_win *w = routed(win);
    return w ? CMPI_Win_post(group, assert, w->self) : PMPI_Win_post(group, assert, win);
}
CLAMPI_API int MPI_Win_wait(MPI_Win win) {
    clampi_before_blocking();
    clampi_win *w = routed(win);
    return w ? CMPI_Win_wait(w->self) : PMPI_Win_wait(win);
}
CLAMPI_API int MPI_Win_test(MPI_Win win, int *flag) {
    clampi_win *w = routed(win);
    return w ? clampi_win_test(w, flag) : PMPI_Win_test(win, flag);
}

/* ---- info and names: clampi's keys, CLAMPI_WINDOW_MODES ------------------------------ */
/* Keys fixed at creation (clampi_backend, clampi_progress, mpi_win_scope) keep their
 * creation value; mpi_win_order and mpi_assert_accumulate_intrinsic exist only on UCX
 * windows: MPI_Win_get_info reports what is in effect. */
CLAMPI_API int MPI_Win_set_info(MPI_Win win, MPI_Info info) {
    clampi_win *w = active ? find(win) : NULL;
    if (w && w->cmpi_route) return CMPI_Win_set_info(w->self, info);
    int rc = PMPI_Win_set_info(win, info);
    if (!w || rc != MPI_SUCCESS) return rc;
    clampi_win_options o = w->opts;
    const char *bad_key = NULL;
    if (clampi_options_update(info, &o, &bad_key) != MPI_SUCCESS) return clampi_raise_win(w, CLAMPI_E_INFO);
    o.backend = w->opts.backend;
    o.progress = w->opts.progress;
    o.thread_scope = w->opts.thread_scope;
    o.ordered = o.acc_intrinsic = 0;
    if (memcmp(&o, &w->opts, sizeof o)) {
        clampi_win_reconfigure(w, &o);
        clampi_straight_refresh(w);
    }
    return MPI_SUCCESS;
}

CLAMPI_API int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used) {
    clampi_win *rw = active ? find(win) : NULL;
    if (rw && rw->cmpi_route) return CMPI_Win_get_info(rw->self, info_used);
    int rc = PMPI_Win_get_info(win, info_used);
    clampi_win *w = active && rc == MPI_SUCCESS ? find(win) : NULL;
    if (w) clampi_options_to_info(&w->opts, *info_used);
    return rc;
}

int clampi_pmpi_flavor_asked(MPI_Win win) {
    clampi_win *w = active ? find(win) : NULL;
    return w ? w->preload_flavor : 0;
}

/* MPI_WIN_CREATE_FLAVOR of a window MPI made another way than the program asked (the
 * Fortran entries: fortran_support.c). */
CLAMPI_API int MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag) {
    static const int allocate_flavor = MPI_WIN_FLAVOR_ALLOCATE;
    int rc = PMPI_Win_get_attr(win, keyval, attribute_val, flag);
    if (rc == MPI_SUCCESS && keyval == MPI_WIN_CREATE_FLAVOR && flag && *flag && attribute_val &&
        clampi_pmpi_flavor_asked(win) == MPI_WIN_FLAVOR_ALLOCATE)
        *(const int **)attribute_val = &allocate_flavor;
    return rc;
}

CLAMPI_API int MPI_Win_set_name(MPI_Win win, const char *win_name) {
    int rc = PMPI_Win_set_name(win, win_name);
    clampi_win *w = active && rc == MPI_SUCCESS ? find(win) : NULL;
    clampi_mode mode;
    if (w && !w->b.thread_scope && clampi_options_window_mode(win_name, &mode) == 1 && mode != w->opts.mode) {
        clampi_win_options o = w->opts;
        o.mode = mode;
        clampi_win_reconfigure(w, &o);
        clampi_straight_refresh(w);
    }
    return rc;
}

/* ---- shared heap and collectives (src/coll), switchable: CLAMPI_SHMEM_ALLOC, CLAMPI_COLL */
/* The heap is created at initialisation, where every process is present: MPI_Alloc_mem
 * is local in MPI, and creating the heap later would make it collective. */
void clampi_pmpi_after_init(void) {
    /* once: an MPI's Fortran MPI_INIT may call the C MPI_Init, which is clampi's too */
    static atomic_int done;
    if (atomic_exchange(&done, 1)) return;
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    thread_multiple = provided == MPI_THREAD_MULTIPLE;
    clampi_errors_as_mpi();
    clampi_finalize_arm(); /* now: the program's later MPI_COMM_SELF attributes go first */
    clampi_win_set_free_routed(free_routed);
    if (active && clampi_heap_alloc_enabled()) clampi_heap_ensure(0);
    clampi_pm_after_init(); /* CLAMPI_MATCH: MPI_COMM_WORLD on clampi's matching (match_comm.c) */
}

CLAMPI_API int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) clampi_pmpi_after_init();
    return rc;
}

CLAMPI_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) clampi_pmpi_after_init();
    return rc;
}

CLAMPI_API int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr) {
    if (active && baseptr && clampi_heap_ready()) {
        int handled = 0;
        int rc = clampi_heap_alloc_mem(size, info, baseptr, &handled);
        if (rc == MPI_SUCCESS && handled) return rc;
    }
    return PMPI_Alloc_mem(size, info, baseptr);
}

CLAMPI_API int MPI_Free_mem(void *base) {
    if (active && clampi_heap_ready()) {
        int handled = 0;
        int rc = clampi_heap_free_mem(base, &handled);
        if (handled) {
            if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(MPI_COMM_WORLD, rc);
            return rc;
        }
    }
    return PMPI_Free_mem(base);
}

/* The shared-heap collectives keep per-communicator state that is not built for
 * concurrent collectives from several threads: under MPI_THREAD_MULTIPLE they are MPI's. */
CLAMPI_API int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
    if (active && !thread_multiple && !clampi_pm_revoked(comm)) {
        int handled = 0;
        int rc = clampi_coll_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, CMPIX_COLL_AUTO,
                                      &handled);
        if (handled) return rc;
    }
    return clampi_pm_alltoall_unblocked(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

CLAMPI_API int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
    if (active && !thread_multiple && !clampi_pm_revoked(comm)) {
        int handled = 0;
        int rc = clampi_coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                       CMPIX_COLL_AUTO, &handled);
        if (handled) return rc;
    }
    return clampi_pm_allgather_unblocked(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

/* ---- finalize ------------------------------------------------------------------------ */
/* Windows the program never freed still get their stats line. */
CLAMPI_API int MPI_Finalize(void) {
    clampi_match_profile_finalize(); /* CLAMPI_MATCH_PROFILE (match_profile.c) */
    clampi_pm_finalize();            /* CLAMPI_MATCH: stats lines (match_comm.c) */
    /* UCX-backend windows never freed are freed in clampi's first step of MPI_Finalize
     * (rma/unfreed.c, through free_routed), and print their stats line then. */
    if (active && clampi_stats_enabled()) {
        clampi_registry_for_each_mapped(stats_print_unless_ucx);
        clampi_coll_stats_print();
    }
    return PMPI_Finalize();
}
