/* clampi RMA get cache: the CLaMPI interface (CMPI_*).
 *
 * The paper's signatures are kept exactly. A CMPI_Win is a small handle whose first
 * member is the underlying MPI_Win, so code written for the original CLaMPI release,
 * which passes `w.win` to other MPI calls, compiles unchanged.
 *
 * Every function returns MPI_SUCCESS or an MPI error code. Errors are raised through
 * the window's error handler (through MPI_COMM_WORLD's for a null or freed window, and
 * through the communicator's at creation), so with MPI_ERRORS_RETURN the call returns
 * the code and changes nothing.
 *
 * Synchronization: clampi completes cached gets, elides empty flushes and applies the
 * window mode's invalidation rule only in the CMPI_ synchronization calls. RMA issued
 * directly on `w.win` (MPI_Put, MPI_Get, ...) must be completed with the MPI
 * synchronization calls on `w.win`, and does not invalidate the cache.
 */
#ifndef CLAMPI_RMA_H
#define CLAMPI_RMA_H

#include <mpi.h>
#include <stdint.h>

#include "clampi/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLAMPI_VERSION_MAJOR 0
#define CLAMPI_VERSION_MINOR 1

/* ---- window modes: MPI_Info_set(info, CLAMPI_MODE, CLAMPI_ALWAYS_CACHE) ---------- */
#define CLAMPI_MODE "clampi_mode"
#define CLAMPI_TRANSPARENT "transparent"   /* default: cache lives until the next flush or epoch end */
#define CLAMPI_ALWAYS_CACHE "always_cache" /* window is read-only: never invalidated */
#define CLAMPI_USER_DEFINED "user_defined" /* invalidated only by CMPI_Win_invalidate */
#define CLAMPI_OFF "off"                   /* no caching: every get goes to MPI */

/* ---- other info keys (strongest source; then CLAMPI_* environment, then defaults) - */
#define CLAMPI_INDEX_SIZE "clampi_index_size"       /* index entries, e.g. "65536" */
#define CLAMPI_BUFFER_SIZE "clampi_buffer_size"     /* cache bytes, e.g. "64M" (K, M, G suffixes) */
#define CLAMPI_SHM_DIRECT "clampi_shm_direct"       /* "true"/"false": load/store for same-node targets */
#define CLAMPI_DYNAMIC_CACHE "clampi_dynamic_cache" /* "true": allow caching modes on a dynamic window */
#define CLAMPI_ADAPTIVE "clampi_adaptive"           /* "true"/"false": adapt index and buffer sizes at run time */
/* Backend and the Quo Vadis RMA paper's semantics keys (creation time; docs/ucx-backend.md) */
#define CLAMPI_BACKEND "clampi_backend"   /* "mpi" (default) | "ucx": how the bytes move */
#define CLAMPI_PROGRESS "clampi_progress" /* "auto" (default) | "thread" | "none" (UCX windows) */
#define CLAMPI_WIN_SCOPE "mpi_win_scope" /* "process" (default) | "thread": flushes complete the calling thread's ops */
#define CLAMPI_WIN_ORDER "mpi_win_order" /* "false" (default) | "true": ops to a target complete in issue order */

/* The CLaMPI window handle. `win` is the MPI window and stays valid for raw MPI calls. */
typedef struct CMPI_Win {
    MPI_Win win;
    uint32_t slot;   /* clampi's registry slot for this window */
    uint32_t serial; /* detects use of a freed window through a stale copy */
} CMPI_Win;

/* Per-window statistics (this rank only). */
typedef struct CMPI_Win_stats {
    uint64_t gets;               /* CMPI_Get calls that were valid */
    uint64_t hits;               /* served from the cache (including sub-range hits) */
    uint64_t subrange_hits;      /* of hits: the get lay strictly inside a cached range */
    uint64_t inflight_hits;      /* duplicates of a get still in flight: filled at flush, no network get */
    uint64_t misses;             /* cacheable gets that went to the network */
    uint64_t bypassed;           /* not cacheable (non-contiguous type, too large, uncached window) */
    uint64_t direct;             /* served by load/store from a same-node target's shared memory */
    uint64_t bytes_saved;        /* bytes not moved over the network thanks to hits and in-flight hits */
    uint64_t bytes_fetched;      /* bytes the window's gets moved over the network */
    uint64_t evictions;          /* entries evicted (capacity + conflict) */
    uint64_t conflict_evictions; /* of evictions: the index had no room (cuckoo cycle) */
    uint64_t capacity_evictions; /* of evictions: the buffer had no room */
    uint64_t failed_inserts;     /* completed gets that could not be cached */
    uint64_t invalidations;      /* whole-cache invalidations */
    uint64_t adaptations;        /* index/buffer resizes */
    uint64_t flushes;            /* CMPI flush / flush_all calls */
    uint64_t flushes_elided;     /* of flushes: nothing outstanding, no MPI call made */
    uint64_t puts;               /* CMPI_Put and CMPI_Accumulate calls */
    uint64_t index_entries;      /* current index size (entries) */
    uint64_t buffer_bytes;       /* current cache buffer size (bytes); 0 if uncached */
    uint64_t cached_entries;     /* entries in the cache now */
    uint64_t cached_bytes;       /* bytes of data in the cache now */
    uint64_t adapt_grows;        /* of adaptations: the adaptive scheme grew index and/or buffer */
    uint64_t adapt_shrinks;      /* of adaptations: the adaptive scheme shrank them */
} CMPI_Win_stats;

/* Per-thread statistics of a UCX window (what the calling thread's flushes drove). */
typedef struct CMPIX_Win_thread_stats {
    uint64_t ops;              /* RMA operations the calling thread issued on the window */
    uint64_t flushes;          /* flush calls (flush, flush_all, flush_local, flush_local_all) it made */
    uint64_t flush_ops_driven; /* operations those flushes completed, in all */
    uint64_t last_flush_ops;   /* operations its last flush completed */
} CMPIX_Win_thread_stats;

/* ---- window creation and destruction (collective) ------------------------------ */
/* Like MPI_Win_create; the info may carry CLAMPI_MODE and the size keys. */
CLAMPI_API int CMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, CMPI_Win *win);
/* Like MPI_Win_allocate. Same-node ranks' memory is allocated in node-shared memory
 * where the MPI allows it, so gets to those ranks are served by a direct copy. */
CLAMPI_API int CMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                 CMPI_Win *win);
/* Like MPI_Win_create_dynamic; memory is added with CMPI_Win_attach (displacements are
 * absolute addresses, MPI_Get_address). Caching modes need clampi_dynamic_cache=true. */
CLAMPI_API int CMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, CMPI_Win *win);
CLAMPI_API int CMPI_Win_attach(CMPI_Win win, void *base, MPI_Aint size);
CLAMPI_API int CMPI_Win_detach(CMPI_Win win, const void *base);
/* Like MPI_Win_get_info / MPI_Win_set_info, including clampi's keys (values in effect). */
CLAMPI_API int CMPI_Win_get_info(CMPI_Win win, MPI_Info *info_used);
CLAMPI_API int CMPI_Win_set_info(CMPI_Win win, MPI_Info info);
/* Frees the window and its cache; prints the stats line if CLAMPI_STATS is set. */
CLAMPI_API int CMPI_Win_free(CMPI_Win *win);

/* ---- communication ------------------------------------------------------------- */
/* Like MPI_Get; served from the cache when the bytes are cached (exact or sub-range),
 * from a get already in flight in this epoch (filled at flush), or from the network. */
CLAMPI_API int CMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, CMPI_Win win);
/* Like MPI_Put / MPI_Accumulate; the cached bytes they may overwrite are invalidated. */
CLAMPI_API int CMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, CMPI_Win win);
CLAMPI_API int CMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                               CMPI_Win win);

/* Like MPI_Rput / MPI_Rget (requests completed with MPI_Wait / MPI_Test). */
CLAMPI_API int CMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, CMPI_Win win,
                         MPI_Request *request);
CLAMPI_API int CMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, CMPI_Win win,
                         MPI_Request *request);
/* Like MPI_Get_accumulate / MPI_Fetch_and_op / MPI_Compare_and_swap (the cached bytes they
 * may change are invalidated). */
CLAMPI_API int CMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                   void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                   CMPI_Win win);
CLAMPI_API int CMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Op op, CMPI_Win win);
CLAMPI_API int CMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                     MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, CMPI_Win win);

/* ---- synchronization ----------------------------------------------------------- */
/* Completes this rank's operations to `rank` (all ranks); returns at once, without a
 * network round trip, when none are outstanding. Transparent mode invalidates here. */
CLAMPI_API int CMPI_Win_flush(int rank, CMPI_Win win);
CLAMPI_API int CMPI_Win_flush_all(CMPI_Win win);
CLAMPI_API int CMPI_Win_flush_local(int rank, CMPI_Win win);
CLAMPI_API int CMPI_Win_flush_local_all(CMPI_Win win);
CLAMPI_API int CMPI_Win_lock(int lock_type, int rank, int assert, CMPI_Win win);
CLAMPI_API int CMPI_Win_unlock(int rank, CMPI_Win win);
CLAMPI_API int CMPI_Win_lock_all(int assert, CMPI_Win win);
CLAMPI_API int CMPI_Win_unlock_all(CMPI_Win win);
CLAMPI_API int CMPI_Win_fence(int assert, CMPI_Win win);
CLAMPI_API int CMPI_Win_start(MPI_Group group, int assert, CMPI_Win win);
CLAMPI_API int CMPI_Win_complete(CMPI_Win win);
CLAMPI_API int CMPI_Win_post(MPI_Group group, int assert, CMPI_Win win);
CLAMPI_API int CMPI_Win_wait(CMPI_Win win);
/* Like MPI_Win_sync: this process's view of its window memory and remote writes agree. */
CLAMPI_API int CMPI_Win_sync(CMPI_Win win);

/* Drops every cached entry of the window (any mode; the only invalidation point of
 * CLAMPI_USER_DEFINED windows). Gets in flight complete normally but are not cached. */
CLAMPI_API int CMPI_Win_invalidate(CMPI_Win win);

/* Drops every cached entry of an MPI window managed by the transparent preload
 * (libclampi_pmpi) or created with CMPI_Win_*: the invalidation call of user-defined
 * windows in programs that use plain MPI_Win handles. A no-op returning MPI_SUCCESS for
 * any other window, so the program also runs without the preload. */
CLAMPI_API int CMPI_Invalidate(MPI_Win win);

/* ---- statistics ---------------------------------------------------------------- */
CLAMPI_API int CMPI_Win_get_stats(CMPI_Win win, CMPI_Win_stats *stats);
/* The calling thread's counters on a UCX window (all zero on an MPI-backend window). */
CLAMPI_API int CMPIX_Win_get_thread_stats(CMPI_Win win, CMPIX_Win_thread_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
