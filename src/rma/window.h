/* Internal state of a clampi window (one per CMPI_Win, per rank). */
#ifndef CLAMPI_RMA_WINDOW_H
#define CLAMPI_RMA_WINDOW_H
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

#include "cache/adapt.h"
#include "cache/cache.h"
#include "cache/inflight.h"
#include "clampi/rma.h"
#include "backends/backend.h"
#include "common/datatype.h"
#include "rma/options.h"

/* Counters kept by the MPI-facing layer; the engine keeps its own (cache.c). Both are
 * merged into CMPI_Win_stats in stats.c. */
typedef struct clampi_win_counters {
    uint64_t gets, inflight_hits, misses, bypassed, direct;
    uint64_t bytes_saved, bytes_fetched;
    uint64_t flushes, flushes_elided, puts;
} clampi_win_counters;

/* When a flush with nothing outstanding may skip MPI. CMPI windows: always (clampi sees
 * every operation). Preload: only while the window caches (always-cache, user-defined:
 * read-only phases, so no flush there is needed to drive MPI progress for incoming
 * writes) and only if every RMA call of the MPI is wrapped; never in transparent mode. */
enum { CLAMPI_ELIDE_NEVER, CLAMPI_ELIDE_ALWAYS, CLAMPI_ELIDE_WHILE_CACHING };

typedef struct clampi_win {
    /* The window as its backend sees it (src/backends/backend.h): MPI handles (b.win is the
     * user's window, CMPI_Win.win), group geometry, semantics, the backend's table (b.ops)
     * and its opaque state. The window layer reaches the backend only through b.ops. */
    clampi_bwin b;
    uint32_t serial; /* matches CMPI_Win.serial while the window lives */
    clampi_win_options opts;
    int caches_data;   /* mode keeps completed gets (always-cache, user-defined) */
    int elide_flushes; /* flushes with nothing outstanding skip MPI: CLAMPI_ELIDE_* */
    int mt;            /* MPI_THREAD_MULTIPLE */
    int lock_ops;      /* operations take `lock`: mt and not thread scope (clampi_win_set_thread_scope) */
    int atomic_counts; /* counters of operations are atomic: mt and thread scope */
    /* The window layer keeps books: gets in flight, targets with writes outstanding, the
     * cache, flushes elided when nothing is outstanding. Every window but a thread-scope
     * one (clampi_win_set_thread_scope): its operations and flushes are the calling
     * thread's alone and go to the backend without the window lock, so there is nothing
     * shared to keep (caching is off on it) and no flush may be skipped (another thread's
     * flush says nothing about this thread's lane). Each bookkeeping step checks it. */
    int keeps_books;
    int passthrough; /* mode off: the preload sends gets straight to MPI (atomic:
                                 read without the lock, changed by clampi_win_reconfigure) */
    /* The preload's straight path (src/pmpi/straight.h): per target, nonzero while its
     * operations go to MPI with no clampi bookkeeping (1: its syncs too); all_straight:
     * every entry is 1. Zero unless the preload sets them; read without the lock. */
    unsigned char *straight;
    int all_straight;
    struct clampi_straight_policy *straight_policy; /* the preload's, freed with the window */
    pthread_mutex_t lock;
    uint64_t locks_taken; /* acquisitions of `lock` (under it; tests: clampi_win_test_locks_taken) */

    unsigned char **target_shm; /* per target: base for load/store, or NULL (whole array NULL if none) */

    uint32_t *outstanding;   /* per target: MPI operations issued since its last completion */
    uint32_t *dirty_targets; /* targets with outstanding > 0 */
    uint32_t ndirty;

    clampi_cache cache;
    clampi_adapt adapt; /* sizing policy state (used when opts.adaptive) */
    clampi_inflight inflight;
    clampi_win_counters n;
    struct clampi_rmax *rmax; /* RMA extensions (src/rmax/family.h): dups, memory handles; usually NULL */
    /* The preload (src/pmpi): the window's CMPI_ handle (serial 0: none) and whether its MPI_
     * calls are served through the CMPI_ layer (UCX backend, duplicates, memory-handle
     * windows, parents of those) instead of the transparent path on w->b.win. */
    CMPI_Win self;
    int cmpi_route;
    /* MPI_WIN_CREATE_FLAVOR the program asked for when the preload made the MPI window
     * another way (MPI_Win_allocate on UCX: MPI_Win_create over UCX memory); 0: MPI's. */
    int preload_flavor;
    /* Cold, so last (the fields above are on every operation's path): the registry's list
     * of windows in the order they were made (registry.c). */
    struct clampi_win *older, *newer;
    uint64_t made; /* its number in that order, from 1 */
    uint32_t slot; /* CMPI_Win.slot */
} clampi_win;

/* The window of a backend view (an op of a table defined above the backends, src/rmax). */
static inline clampi_win *clampi_win_of(clampi_bwin *b) {
    return (clampi_win *)(void *)((char *)b - __builtin_offsetof(clampi_win, b));
}

/* The window lock guards the cache, the gets in flight and the flush bookkeeping; it is
 * only taken under MPI_THREAD_MULTIPLE (one predictable branch else). A thread-scope window
 * (mpi_win_scope=thread) has none of these: its mode is off (nothing cached, no get in
 * flight shared), its flushes are never elided (each thread flushes its own lane, which
 * knows what it has pending), and its counters are atomic. So its operations and
 * synchronizations take no lock shared between threads, as the Quo Vadis paper asks:
 * the backend's per-thread lanes are all their state. (The window lock there serialized
 * every thread's put behind one mutex: RMA-MT with 4 threads on 2 cores lost a whole
 * scheduler slice, ~4 ms, in 2-3 % of its puts.) clampi_win_enter_always: changes to
 * the window itself (MPI_Win_set_info), which a program makes between operations. */
static inline int clampi_win_locks(const clampi_win *w) { return w->lock_ops; }
static inline void clampi_win_set_thread_scope(clampi_win *w, int on) {
    w->b.thread_scope = on;
    w->keeps_books = !on;
    w->lock_ops = w->mt && !on;
    w->atomic_counts = w->mt && on;
}
static inline void clampi_win_enter(clampi_win *w) {
    if (__builtin_expect(clampi_win_locks(w), 0)) {
        pthread_mutex_lock(&w->lock);
        w->locks_taken++;
    }
}
static inline void clampi_win_leave(clampi_win *w) {
    if (__builtin_expect(clampi_win_locks(w), 0)) pthread_mutex_unlock(&w->lock);
}
static inline void clampi_win_enter_always(clampi_win *w) {
    if (w->mt) {
        pthread_mutex_lock(&w->lock);
        w->locks_taken++;
    }
}
static inline void clampi_win_leave_always(clampi_win *w) {
    if (w->mt) pthread_mutex_unlock(&w->lock);
}
/* w->n.FIELD += k: atomic where threads do not take the window lock. */
#define CLAMPI_WIN_COUNT(w, field, k)                                           \
    do {                                                                        \
        if (__builtin_expect((w)->atomic_counts, 0))                            \
            __atomic_fetch_add(&(w)->n.field, (uint64_t)(k), __ATOMIC_RELAXED); \
        else                                                                    \
            (w)->n.field += (uint64_t)(k);                                      \
    } while (0)

/* The registry: CMPI_Win handle -> state; NULL for null, freed or foreign handles.
 * Inline: it is on every call's path. */
#define CLAMPI_REGISTRY_CHUNK_BITS 8
#define CLAMPI_REGISTRY_MAX_CHUNKS 1024 /* 262144 windows alive at once */
extern clampi_win **clampi_registry_chunks[CLAMPI_REGISTRY_MAX_CHUNKS];
static inline clampi_win *clampi_registry_find(CMPI_Win h) {
    uint32_t chunk = h.slot >> CLAMPI_REGISTRY_CHUNK_BITS;
    if (h.serial == 0 || chunk >= CLAMPI_REGISTRY_MAX_CHUNKS || !clampi_registry_chunks[chunk]) return NULL;
    clampi_win *w = clampi_registry_chunks[chunk][h.slot & ((1u << CLAMPI_REGISTRY_CHUNK_BITS) - 1)];
    return (w && w->serial == h.serial && w->b.win == h.win) ? w : NULL;
}
/* Registers w; fills h. Returns MPI_SUCCESS or MPI_ERR_NO_MEM. */
int clampi_registry_add(clampi_win *w, CMPI_Win *h);
void clampi_registry_remove(CMPI_Win h);
/* unfreed.c: at MPI_Finalize, free the UCX-backend windows the program left (call after
 * such a window is made; the first call arms it). Windows whose MPI_ calls the preload
 * routes (w->cmpi_route) are freed through free_routed, which the preload sets (its MPI_Win
 * and stats go with them); the others with CMPI_Win_free. */
void clampi_win_free_unfreed_at_finalize(void);
void clampi_win_set_free_routed(int (*free_routed)(clampi_win *w));
/* A place in the order MPI_Finalize frees windows in: the backend's agreed finalize_order,
 * then the window's number (newest first among windows of one order: a duplicate before
 * its parent). */
typedef struct clampi_registry_place {
    uint64_t order, made;
} clampi_registry_place;
/* The highest registered window below *below ({UINT64_MAX, UINT64_MAX}: any) for which pred
 * is true (called under the registry's lock): its handle in *h, its place in *below, 1; 0 if
 * there is none. No allocation (a walk of the registry per call): a caller freeing windows
 * passes *below back each time. */
int clampi_registry_next_to_finalize(int (*pred)(const clampi_win *w), clampi_registry_place *below, CMPI_Win *h);

/* MPI_Win -> state, for the preload and CMPI_Invalidate(MPI_Win): a fixed open-addressing
 * table read without locks (a seqlock guards against concurrent creation/free of other
 * windows). Windows that do not fit are found through the window attribute instead. */
int clampi_registry_map(clampi_win *w); /* 0, or -1 if the table is full */
void clampi_registry_unmap(clampi_win *w);
#define CLAMPI_MAP_CAP 4096u
typedef struct clampi_map_slot {
    uint64_t key;
    clampi_win *w;
} clampi_map_slot;
extern clampi_map_slot clampi_registry_map_slots[CLAMPI_MAP_CAP];
extern unsigned clampi_registry_map_seq;
static inline uint64_t clampi_registry_win_key(MPI_Win win) {
    uint64_t k = 0;
    __builtin_memcpy(&k, &win, sizeof win < sizeof k ? sizeof win : sizeof k);
    return k;
}
static inline uint32_t clampi_registry_map_home(uint64_t k) {
    return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> 52) & (CLAMPI_MAP_CAP - 1);
}
/* Inline: it is on the preload's path of every call. */
static inline clampi_win *clampi_registry_lookup_mpi(MPI_Win win) {
    const uint64_t k = clampi_registry_win_key(win);
    for (;;) {
        unsigned seq = __atomic_load_n(&clampi_registry_map_seq, __ATOMIC_ACQUIRE);
        clampi_win *found = NULL;
        if (!(seq & 1)) {
            for (uint32_t i = clampi_registry_map_home(k), n = 0; n < CLAMPI_MAP_CAP;
                 i = (i + 1) & (CLAMPI_MAP_CAP - 1), n++) {
                uint64_t cur = __atomic_load_n(&clampi_registry_map_slots[i].key, __ATOMIC_RELAXED);
                if (cur == 0) break; /* empty */
                if (cur == k) {
                    found = __atomic_load_n(&clampi_registry_map_slots[i].w, __ATOMIC_RELAXED);
                    break;
                }
            }
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            if (__atomic_load_n(&clampi_registry_map_seq, __ATOMIC_RELAXED) == seq) return found;
        }
    }
}
/* Tests: how often win's lock was taken (MPI_ERR_WIN for no window). */
int clampi_win_test_locks_taken(CMPI_Win win, uint64_t *out);
/* Calls fn on every mapped window (MPI_Finalize's stats lines). */
void clampi_registry_for_each_mapped(void (*fn)(const clampi_win *w));

/* An MPI operation to target was issued (flush elision bookkeeping). */
static inline void clampi_win_mark_outstanding(clampi_win *w, int target) {
    if (!w->keeps_books) return;
    if (w->outstanding[target]++ == 0) w->dirty_targets[w->ndirty++] = (uint32_t)target;
}

/* ---- window life cycle (window.c), shared by CMPI_Win_* and the preload -------------- */
/* Reads options (info > environment > defaults) and agrees on them over comm. Returns 1
 * if every rank read valid values. */
int clampi_win_read_options(MPI_Info info, MPI_Comm comm, clampi_win_options *opts);
/* Builds clampi state for an existing MPI window (collective over comm). shm_win: the
 * node-shared window behind it (may be win itself) or MPI_WIN_NULL. size < 0 with
 * dynamic: a dynamic window. Returns MPI_SUCCESS or MPI_ERR_NO_MEM (on every rank). */
int clampi_win_attach(MPI_Win win, MPI_Win shm_win, MPI_Comm comm, MPI_Aint size, int disp_unit, int dynamic,
                      const clampi_win_options *opts, clampi_win **out);
/* Frees the state (no MPI call). */
void clampi_win_release(clampi_win *w);
/* First in a free: the backend's quiesce (everyone's operations complete); MPI_SUCCESS, or
 * the failure, raised on the window, which stays whole. */
int clampi_win_quiesce(clampi_win *w);
/* A new window state for a duplicate of parent (window duplication, memory-handle
 * windows): same identity, options, MPI handles and backend; its own empty cache, gets in
 * flight, counters and per-target arrays. NULL when out of memory. Local. */
clampi_win *clampi_win_clone(const clampi_win *parent);
/* The backend the options ask for (collective over comm), on a window made by
 * clampi_win_attach (memh: memory from clampi_win_allocate_backend). If the backend cannot
 * be set up on every rank the window stays on MPI, unchanged (w->opts says what is in
 * effect). Returns an MPI code (the same on every rank). */
int clampi_win_setup_backend(clampi_win *w, MPI_Comm comm, void *base, MPI_Aint size, const clampi_win_options *opts,
                             void *memh);
/* Collective: back to the MPI backend (the backend's state goes, the MPI window stays). */
void clampi_win_teardown_backend(clampi_win *w);
/* Memory from the backend of that kind with an MPI window over it (collective): 1 with
 * *base, *mpi_win and *memh set, or 0 on every rank (nothing allocated). */
int clampi_win_allocate_backend(clampi_backend_kind kind, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                void **base, MPI_Win *mpi_win, void **memh);
void clampi_win_free_backend_memory(clampi_backend_kind kind, void *memh);
/* Extensions (src/rmax) hook into a window's life here: the window layer never calls them
 * by name. on_free and on_release run on windows with extension state (w->rmax);
 * on_backend when a backend other than MPI took a window over; on_set_info always. */
typedef struct clampi_win_hooks {
    int (*on_backend)(clampi_win *w, MPI_Comm comm); /* collective, at creation; an MPI code */
    int (*on_free)(clampi_win *w, CMPI_Win *handle); /* freed w itself: its MPI code; -1: go on */
    void (*on_set_info)(clampi_win *w);              /* after CMPI_Win_set_info changed w->opts */
    void (*on_release)(clampi_win *w);               /* clampi_win_release: free the extension state */
} clampi_win_hooks;
void clampi_win_set_hooks(const clampi_win_hooks *h);
/* Changes the window's options at run time (mode, sizes): drops what is cached. Local. */
void clampi_win_reconfigure(clampi_win *w, const clampi_win_options *opts);

/* ---- operations (get.c, write.c, sync.c) ----------------------------------------------
 * They take the window lock themselves. A return value below 0 is CLAMPI_ARG_ERROR(e):
 * the arguments are invalid and nothing was done (CMPI_ raises e, the preload hands the
 * call to MPI unchanged so that MPI reports it). */
#define CLAMPI_ARG_ERROR(e) (-1 - (int)(e))
#define CLAMPI_ARG_ERROR_CODE(rc) ((clampi_error)(-1 - (rc)))
/* MPI_Get. */
int clampi_win_get(clampi_win *w, void *origin_addr, int origin_count, MPI_Datatype origin_type, int target,
                   MPI_Aint disp, int target_count, MPI_Datatype target_type);
/* MPI_Rget: *served = 1 when the data was copied locally (cache or shared memory; no
 * request was started), else *rreq is MPI's request. */
int clampi_win_rget(clampi_win *w, void *origin_addr, int origin_count, MPI_Datatype origin_type, int target,
                    MPI_Aint disp, int target_count, MPI_Datatype target_type, MPI_Request *rreq, int *served);
/* A write or atomic: clampi_win_write_begin checks the target range and locks the window
 * (returns -1, or CLAMPI_ARG_ERROR unlocked); the caller issues the MPI call, then
 * clampi_win_write_end drops the cached bytes it may overwrite and unlocks. */
struct clampi_access;
int clampi_win_write_begin(clampi_win *w, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                           int target_count, MPI_Datatype target_type, struct clampi_access *a);
int clampi_win_write_end(clampi_win *w, int target, const struct clampi_access *a, int rc);
/* Synchronization: MPI call plus clampi's bookkeeping (rank already checked). */
int clampi_win_flush(clampi_win *w, int rank);
int clampi_win_flush_all(clampi_win *w);
int clampi_win_flush_local(clampi_win *w, int rank);
int clampi_win_flush_local_all(clampi_win *w);
int clampi_win_unlock(clampi_win *w, int rank);
int clampi_win_unlock_all(clampi_win *w);
int clampi_win_fence(clampi_win *w, int assert);
int clampi_win_complete(clampi_win *w);
int clampi_win_sync(clampi_win *w);
/* MPI_Win_test through the backend (rank-free; no clampi bookkeeping needed). */
int clampi_win_test(clampi_win *w, int *flag);
void clampi_win_invalidate(clampi_win *w);
/* MPI_Raccumulate / MPI_Rget_accumulate for the preload's windows served through the
 * CMPI_ layer (atomics.c): the operation, locally complete, and a complete request. */
int clampi_win_raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                           CMPI_Win win, MPI_Request *request);
int clampi_win_rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                               void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                               CMPI_Win win, MPI_Request *request);
#endif
