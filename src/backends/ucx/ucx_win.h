/* Internal state of a UCX-backed window (see docs/ucx-backend.md for the design).
 *
 * One clampi_ucx_win per window per rank, possibly shared by duplicates (refs). It holds:
 *  - the process lane: the process worker (the target side of every endpoint, progressed
 *    by the progress thread if there is one; one per process, shared by every UCX window:
 *    services/ucx/process_worker.h) and its endpoints, one per peer process, shared with
 *    every other UCX window (services/ucx/peers.h);
 *  - per-thread lanes (mpi_win_scope=thread): a worker per thread created on first use,
 *    with endpoints to the targets' process workers (addresses kept by the process
 *    worker's endpoint table), so no collective is needed to create them;
 *  - the window memory registration (static windows) and a control block per rank that
 *    origins reach with UCX: the window lock word, the accumulate lock, and for dynamic
 *    windows the attached-region table (base, size, packed rkey) behind a version number;
 *  - the epoch state (locks held, lock_all, fence, PSCW groups) for RMA_SYNC checks.
 *
 * Locking: a thread lane is used by its owner thread under the lane's own mutex (taken
 * by another thread only in unlock/fence/complete/free, which complete everyone's ops, and
 * by the progress thread with trylock, to progress the lane's worker: progress.c);
 * the process lane's worker is UCS_THREAD_MODE_MULTI when several threads may use it,
 * its counters are atomics. */
#ifndef CLAMPI_BACKENDS_UCX_UCX_WIN_H
#define CLAMPI_BACKENDS_UCX_UCX_WIN_H
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "clampi/rma.h"
#include "backends/backend.h"
#include "services/ucx/process_worker.h"
#include "services/ucx/service.h"

#define CLAMPI_UCX_EXCL (1ull << 32) /* lock word: exclusive holder bit; low 32 bits: readers */
#define CLAMPI_UCX_REGIONS_FIRST 32  /* dynamic windows: first region table size (it doubles) */
#define CLAMPI_UCX_RKEY_MAX 256      /* bytes of a packed rkey in the region table */
#define CLAMPI_UCX_MH_SUBS 64        /* control block: peers keeping liveness copies of this rank's handles */
#define CLAMPI_UCX_MH_MIRRORS 64     /* control block: liveness copies of peers' handles (a 64-bit mask) */

typedef struct clampi_ucx_region {
    uint64_t base, size;
    uint64_t id; /* unique per rank and window (origins keep their unpacked rkey by it) */
    uint32_t rkey_len, pad;
    unsigned char rkey[CLAMPI_UCX_RKEY_MAX];
} clampi_ucx_region;

/* The per-rank control block, registered and read/written by origins through UCX.
 * Dynamic windows: the attached regions are in a table of table_cap entries at table_addr
 * (memory of this rank, UCX-allocated, rkey below); it is replaced by one twice as large
 * when full, the old one kept (mapped) until the window is freed, so an origin reading a
 * stale table reads valid memory and the version check sends it back. */
typedef struct clampi_ucx_ctl {
    uint64_t lock_word; /* MPI_Win_lock: CLAMPI_UCX_EXCL | number of shared holders */
    uint64_t acc_lock;  /* accumulate-type ops: 0 free, else holder's rank + 1 */
    uint64_t version;   /* dynamic: region table version, odd while it (or where it is) changes */
    uint64_t nregions;
    uint64_t table_addr, table_cap, table_rkey_len;
    unsigned char table_rkey[CLAMPI_UCX_RKEY_MAX];
    /* Memory handles between nodes (mh_invalidate.c): mh_sub, the peers that keep a copy of
     * the liveness of one of this rank's handles; mh_mirror, those copies here, of the peers'
     * handles this rank uses, which their owners clear at release. */
    uint64_t mh_sub[CLAMPI_UCX_MH_SUBS];
    uint64_t mh_mirror[CLAMPI_UCX_MH_MIRRORS];
} clampi_ucx_ctl;

/* An origin's copy of one target's region table, with rkeys unpacked for its lane. */
typedef struct clampi_ucx_dyncache {
    uint64_t version;
    int n, cap, check;   /* check: verify the version before the next use (new epoch) */
    uint64_t table_addr; /* the target's table this lane has an rkey for */
    ucp_rkey_h table_rkey;
    struct clampi_ucx_dynregion {
        uint64_t base, size, id;
        ucp_rkey_h rkey;
    } * r;
} clampi_ucx_dyncache;

/* A worker and its view of every target. */
typedef struct clampi_ucx_lane {
    ucp_worker_h worker;
    ucp_ep_h *eps;                        /* per target, taken or made at first use (lane.c) */
    ucp_rkey_h *rkeys;                    /* per target: window memory (static windows; NULL if 0 bytes) */
    ucp_rkey_h *ctl_rkeys;                /* per target: control block */
    clampi_ucx_dyncache *dyn;             /* per target (dynamic windows) */
    uint64_t *pending;                    /* per target: operations issued and not yet driven by a flush */
    unsigned char *dirty;                 /* per target: something was handed to UCX since the lane's last
                               * flush of it (clampi_ucx_lane_mark); a flush of a clean target has
                               * nothing in UCX to complete and skips UCX's flush */
    unsigned flushing;                    /* flushes of this lane asking UCX right now (lane.c) */
    void **amo_base;                      /* per target: its window memory mapped here for CPU atomics
                               * (target.c), CLAMPI_UCX_NO_AMO_BASE if not; NULL: not looked up */
    pthread_mutex_t mutex;                /* see the file comment */
    int is_thread;                        /* a per-thread lane (else the process lane) */
    ucs_thread_mode_t mode;               /* of its worker */
    struct clampi_ucx_win *u;             /* the window state it belongs to */
    clampi_ucx_poller *poller;            /* the process lane: its worker's (application waits keep the
                                * service away); NULL on thread lanes */
    struct clampi_ucx_process_worker *pw; /* the process lane: the shared worker it holds */
    unsigned held;                        /* the process lane: endpoints of the worker's table it took */
} clampi_ucx_lane;

/* The lane's endpoint to target if it has one yet (NULL: never used); another thread of a
 * process lane may be storing it right now (clampi_ucx_lane_ep_peek). */
static inline ucp_ep_h clampi_ucx_lane_ep_if_any(const clampi_ucx_lane *l, int target) {
    return __atomic_load_n(&l->eps[target], __ATOMIC_ACQUIRE);
}

/* What a thread's flushes (flush, flush_all, flush_local, flush_local_all) actually
 * flushed, counted inside clampi_ucx_lane_flush for every lane a flush call visits: read
 * with clampi_ucx_test_flush_probe (tests). "own" operations were issued by the flushing
 * thread, "foreign" ones by other threads: on a thread lane, by the lane's owner; on the
 * process lane, each thread counts per target what it issued there (main_own) and a flush
 * takes its own count back (capped at what the flush drove; another thread's flush that
 * drove our operations does not reset our count, so on the process lane "own" can be
 * over-attributed later: never "foreign" that was own). */
typedef struct clampi_ucx_flush_probe {
    uint64_t flushes;              /* flush calls of this thread */
    uint64_t workers, eps;         /* distinct workers its flushes flushed or progressed (every
                                      lane flush and lane wait), endpoints flushed, in all */
    uint64_t own_ops, foreign_ops; /* operations they drove: issued by this thread / by others */
    uint64_t last_workers, last_eps, last_own_ops, last_foreign_ops; /* the same, last flush */
} clampi_ucx_flush_probe;

/* Per-thread record: the thread's lane (thread scope) and its flush statistics. */
typedef struct clampi_ucx_thread {
    clampi_ucx_lane lane; /* used only with thread scope */
    int lane_ready;
    CMPIX_Win_thread_stats stats;
    clampi_ucx_flush_probe probe;
    int in_flush; /* inside a flush call: clampi_ucx_lane_flush fills probe */
    struct {      /* distinct workers the current flush call touched (lane.c) */
        int n, overflow;
        ucp_worker_h w[256];
    } visit;
    uint64_t *main_own; /* per target: operations issued on the process lane, not yet flushed by us */
    struct clampi_ucx_thread *next;
} clampi_ucx_thread;

/* Backend counters of a window (all threads; read with clampi_ucx_test_counters). */
typedef struct clampi_ucx_counters {
    uint64_t put_copies;  /* small puts UCX could not complete at once: sent from a private copy */
    uint64_t put_waits;   /* small puts UCX returned a request for anyway: completed locally */
    uint64_t serviced;    /* passes in which the progress service progressed the process worker
                           * (shared: every window's on it, since it was created) */
    uint64_t takeovers;   /* times the service took that worker over after the application left it */
    uint64_t cpu_amos;    /* intrinsic atomics done as CPU atomics on the mapped target memory */
    uint64_t ucx_flushes; /* lane flushes that asked UCX (the others had nothing handed to it) */
    uint64_t direct_ops;  /* puts and gets (pieces of them) done as loads and stores (u->direct) */
    /* operations handed to the process worker while the service was inside its progress
     * (they take turns on the worker's lock: clampi_ucx_lane_count) */
    uint64_t issued_beside_service;
} clampi_ucx_counters;

typedef struct clampi_ucx_win {
    int refs;                       /* duplicates sharing this state (CMPIX_Win_dup_with_info) */
    uint64_t serial;                /* unique in the process (never reused): per-thread caches check it */
    MPI_Comm comm;                  /* a duplicate of the window's communicator: fence, PSCW, free (win_comm.c) */
    struct clampi_ucx_wcomm *wcomm; /* the duplicate shared by the communicator's windows, or NULL: the window's own */
    int slot;                       /* the window's place on the shared duplicate: its PSCW tags */
    int rank, nranks, dynamic, mt;
    ucp_context_h ctx;
    clampi_ucx_lane main; /* the process lane */
    int *world;           /* the communicator's ranks in MPI_COMM_WORLD: the process lane's endpoints are
                           * the process worker's (peers.h), thread lanes connect with its addresses */
    void *addr_blob;      /* no world (a member outside MPI_COMM_WORLD): every rank's process worker
                           * address, for endpoints of the window's own ... */
    size_t *addr_off;     /* ... at these offsets */
    /* memory */
    void *base;
    size_t size;
    ucp_mem_h memh, ctl_memh;
    int mem_one_sided;              /* the window memory was allocated by UCX, is empty, or is all_direct: progress.c */
    int auto_thread;                /* clampi_progress=auto: the window's processes agreed they need the thread */
    clampi_ucx_ctl *ctl;            /* this rank's control block */
    uint64_t *peer_base, *peer_ctl; /* per target: remote addresses */
    /* per target: its window memory mapped here through the node-shared heap (setup.c
     * exchange_places): puts, gets and accumulates are loads and stores; NULL: through UCX */
    char **direct;
    int all_direct;                  /* every rank's memory is reached so: intrinsic atomics are CPU atomics too */
    char *rkey_blob, *ctl_rkey_blob; /* packed rkeys of every rank */
    size_t *rkey_off, *ctl_rkey_off;
    /* dynamic: this rank's region table (ctl->nregions entries used, table_cap allocated),
     * the memory handle of each region, earlier tables (freed with the window) */
    clampi_ucx_region *table;
    void *table_memh;
    uint64_t table_cap, next_region_id;
    ucp_mem_h *region_memh;
    void **retired;
    int nretired;
    /* threads */
    pthread_key_t thread_key;
    int have_key;
    pthread_mutex_t threads_lock;
    clampi_ucx_thread *threads;
    /* progress */
    struct clampi_ucx_client *progress_client; /* registered with the UCX progress service, or NULL */
    int watching;                              /* asked the service to progress the process worker (progress.c) */
    clampi_ucx_counters counters;
    /* epoch state (touched by the calling threads under the window lock, read atomically) */
    int *lock_type;                       /* per target: 0, MPI_LOCK_SHARED, MPI_LOCK_EXCLUSIVE (+ nocheck flag) */
    int nlocks;                           /* targets locked */
    int lock_all;                         /* lock_all epoch open */
    int fence_open;                       /* inside a fence epoch */
    int *start_ranks, nstart, start_open; /* PSCW access epoch */
    int *post_ranks, npost, post_open;    /* PSCW exposure epoch */
    int post_done;                        /* origins whose complete notice arrived */
    uint64_t mh_mirrors_used;             /* ctl->mh_mirror entries taken (mh_invalidate.c) */
    int quiesced; /* the free's quiesce passed: everyone's operations are done, teardown needs no first barrier */
} clampi_ucx_win;

/* The UCX state of a window (clampi_bwin.state). */
static inline clampi_ucx_win *clampi_ucx_of(const clampi_bwin *b) { return (clampi_ucx_win *)b->state; }

#define CLAMPI_UCX_NO_AMO_BASE ((void *)1) /* clampi_ucx_lane.amo_base: no direct atomics to that target */
#define CLAMPI_UCX_LOCK_NOCHECK 0x100      /* lock_type flag: taken with MPI_MODE_NOCHECK (no lock word) */

/* ---- lanes (lane.c) ---- */
/* The lane the calling thread issues on: its own (thread scope) or the process lane.
 * Returns NULL (out of memory / UCX failure) rarely. */
clampi_ucx_lane *clampi_ucx_lane_current(clampi_bwin *w);
/* Stats record of the calling thread (created on first use; NULL only without memory). */
clampi_ucx_thread *clampi_ucx_thread_current(clampi_ucx_win *u);
/* Lock/unlock a lane for use (no-op for the process lane). */
void clampi_ucx_lane_enter(clampi_ucx_lane *l);
void clampi_ucx_lane_leave(clampi_ucx_lane *l);
/* Endpoint to target on lane (created on first use for thread lanes), NULL on failure. */
ucp_ep_h clampi_ucx_lane_ep(clampi_ucx_win *u, clampi_ucx_lane *l, int target);
/* The endpoint without marking the target for the next flush: for looking, not issuing. */
ucp_ep_h clampi_ucx_lane_ep_peek(clampi_ucx_win *u, clampi_ucx_lane *l, int target);
/* Marks target: something was handed to UCX that the next flush of it must complete. */
void clampi_ucx_lane_mark(clampi_ucx_lane *l, int target);
/* Remote address + rkey of [offset, offset + len) of target's window (offset: from the
 * window base; dynamic windows: an absolute address). UCS_OK or an error (not attached,
 * or, dynamic, spread over more than one attached region). */
ucs_status_t clampi_ucx_lane_remote(clampi_ucx_win *u, clampi_ucx_lane *l, int target, uint64_t offset, uint64_t len,
                                    uint64_t *raddr, ucp_rkey_h *rkey);
/* The same for the first part of the range that one rkey reaches: *part bytes from offset.
 * Only a dynamic window has parts (an access may run over adjacent attached regions, as
 * MPICH allows); elsewhere *part == len. UCS_ERR_INVALID_ADDR: offset is not attached. */
ucs_status_t clampi_ucx_lane_remote_part(clampi_ucx_win *u, clampi_ucx_lane *l, int target, uint64_t offset,
                                         uint64_t len, uint64_t *raddr, ucp_rkey_h *rkey, uint64_t *part);
/* UCS_OK when every byte of the range is reachable (attached, for a dynamic window). */
ucs_status_t clampi_ucx_lane_covered(clampi_ucx_win *u, clampi_ucx_lane *l, int target, uint64_t offset, uint64_t len);
/* One put (is_put) or get per piece of tcount elements of a flattened target type
 * (src/common/flatten.h) at base (the target displacement in bytes; dynamic: the address),
 * buf holding the packed data. Every piece is checked before any is issued. ordered: a
 * worker fence before each. complete: all pieces complete before it returns (else the
 * next flush completes them). Caller holds the lane (clampi_ucx_lane_enter). */
struct clampi_flat;
ucs_status_t clampi_ucx_pieces(clampi_ucx_win *u, clampi_ucx_lane *l, ucp_ep_h ep, int is_put, char *buf, int target,
                               uint64_t base, int tcount, const struct clampi_flat *f, int ordered, int complete);
/* One put or get of len contiguous bytes at addr of target, buf holding them, as
 * clampi_ucx_pieces does it (checked first; one operation per clampi_ucx_lane_remote_part). */
ucs_status_t clampi_ucx_range(clampi_ucx_win *u, clampi_ucx_lane *l, ucp_ep_h ep, int is_put, char *buf, int target,
                              uint64_t addr, uint64_t len, int ordered, int complete);
/* Control block of target: remote address of a field + rkey. */
ucs_status_t clampi_ucx_lane_ctl(clampi_ucx_win *u, clampi_ucx_lane *l, int target, size_t field_offset,
                                 uint64_t *raddr, ucp_rkey_h *rkey);
/* Sets up / tears down a lane (worker, arrays). connect_all: create every endpoint now. */
int clampi_ucx_lane_init(clampi_ucx_win *u, clampi_ucx_lane *l, ucs_thread_mode_t mode, int is_thread);
void clampi_ucx_lane_fini(clampi_ucx_win *u, clampi_ucx_lane *l);
/* Destroys the lane's rkeys and closes its endpoints (the worker stays). */
void clampi_ucx_lane_close(clampi_ucx_win *u, clampi_ucx_lane *l);
/* Counts an operation issued to target: for "what each flush drives" (the lane, and on the
 * process lane whose it is) and the calling thread's stats. */
void clampi_ucx_lane_count(clampi_ucx_lane *l, int target);
/* After handing the nth operation of a run (any count that advances) to UCX on lane l: on
 * the process lane, keeps the progress service away and drives the worker every 16th
 * (lane.c). clampi_ucx_lane_count does it; a call issuing many pieces does it per piece. */
void clampi_ucx_lane_issued(clampi_ucx_lane *l, uint64_t nth);
/* The same for an operation that completed without UCX (a load/store copy, u->direct): the
 * counts, without marking the target (its next flush has nothing in UCX to complete). */
void clampi_ucx_lane_tally(clampi_ucx_lane *l, int target);
/* Before an operation that bypasses UCX (a load/store copy): what the lane handed UCX for
 * target and has not flushed (it is marked, or another thread's flush of the lane is under
 * way) completes first, with a flush of ep. */
ucs_status_t clampi_ucx_lane_settle(clampi_ucx_lane *l, ucp_ep_h ep, int target);
/* Flushes lane to target (target < 0: all targets), waiting with progress; returns the
 * number of operations it drove through *driven. */
ucs_status_t clampi_ucx_lane_flush(clampi_ucx_win *u, clampi_ucx_lane *l, int target, uint64_t *driven);
/* Flushes every lane (process + all threads) to target (< 0: all): epoch ends. */
ucs_status_t clampi_ucx_flush_everything(clampi_ucx_win *u, int target);
/* Flush probe (clampi_ucx_flush_probe) of the calling thread me around one flush call
 * whose own lane is own: begin arms it, end stores what was visited/driven. */
void clampi_ucx_probe_begin(clampi_ucx_thread *me);
void clampi_ucx_probe_end(clampi_ucx_win *u, clampi_ucx_thread *me, clampi_ucx_lane *own);
/* Invalidates dynamic region caches' versions (new epoch). */
void clampi_ucx_dyn_epoch(clampi_ucx_win *u);
/* Wait for a request on lane's worker, progressing it. */
ucs_status_t clampi_ucx_lane_wait(clampi_ucx_lane *l, void *req);

/* ---- atomics on the control block (sync.c) ---- */
/* 64-bit atomic on target's control block field; result may be NULL (post). cas: for
 * UCP_ATOMIC_OP_CSWAP, value is the compare and *result holds the swap value on entry. */
ucs_status_t clampi_ucx_ctl_atomic(clampi_ucx_win *u, clampi_ucx_lane *l, int target, size_t field, ucp_atomic_op_t op,
                                   uint64_t value, uint64_t *result);
/* Backoff step for lock retries: progresses the lane's worker, then yields. */
void clampi_ucx_backoff(clampi_ucx_lane *l, unsigned *round);

/* ---- setup.c / progress.c ---- */
int clampi_ucx_progress_start(clampi_ucx_win *u, clampi_progress_kind kind);
void clampi_ucx_progress_stop(clampi_ucx_win *u);
/* The auto progress rule, this process's part: 1 if the window's memory or a peer it asked
 * about (making endpoints to them) needs the target CPU, 0 if not, -1 if an endpoint could
 * not be made. The window's processes then agree (setup.c). */
int clampi_ucx_auto_wants_thread(clampi_ucx_win *u);

/* ---- the window's communicator (win_comm.c) ---- */
typedef struct clampi_ucx_wcomm clampi_ucx_wcomm;
/* Sets u->comm, u->wcomm, u->slot: the duplicate of parent shared by its windows, or one of
 * the window's own (u->mt, slots taken, processes disagreeing). Collective over parent. */
int clampi_ucx_win_comm_open(clampi_ucx_win *u, MPI_Comm parent);
/* Collective over u->comm: the window leaves it; the last window frees it. */
void clampi_ucx_win_comm_close(clampi_ucx_win *u);
/* The window's tag for notice kind which (1, 2, ...: less than 3) on u->comm. */
int clampi_ucx_win_comm_tag(const clampi_ucx_win *u, int which);

/* ---- epoch checks (sync.c) ---- */
/* An RMA operation to target is allowed now (passive lock held, lock_all, fence or PSCW). */
int clampi_ucx_in_access_epoch(const clampi_ucx_win *u, int target);

/* ---- diagnostics: read by the tests through tests/common/ucx_probe.h ---- */
/* The window's backend counters (all threads). */
void clampi_ucx_counters_of(const clampi_bwin *b, clampi_ucx_counters *out);
/* The calling thread's flush probe (zero if it never flushed). */
void clampi_ucx_flush_probe_of(const clampi_bwin *b, clampi_ucx_flush_probe *out);
/* Life cycle entries of the table (setup.c, lane.c). */
int clampi_ucx_win_setup(clampi_bwin *w, MPI_Comm comm, void *base, MPI_Aint size, void *memh);
void clampi_ucx_win_teardown(clampi_bwin *w);
int clampi_ucx_mem_alloc(size_t size, void **base, void **handle);
void clampi_ucx_mem_free(void *handle);
void clampi_ucx_thread_stats(clampi_bwin *w, struct CMPIX_Win_thread_stats *stats);
/* The lane the calling thread issues b's operations on (memory-handle windows: the
 * parent's process lane, where their rkeys were unpacked); NULL if none could be made. */
clampi_ucx_lane *clampi_ucx_issue_lane(clampi_bwin *b);

/* The extensions' rows (ext.c), which every UCX table points to; notify.c and rflush.c. */
extern const clampi_backend_ext clampi_backend_ucx_ext;
void *clampi_ucx_notify_listen(clampi_bwin *b, uint64_t win_id, void (*arrived)(void *arg, int id, int origin),
                               void *arg);
void clampi_ucx_notify_stop(clampi_bwin *b, void *listener);
void clampi_ucx_notify_progress(void *listener);
void clampi_ucx_notify_free(void *listener);
int clampi_ucx_notify_send(clampi_bwin *b, int target, uint64_t win_id, int id);
int clampi_ucx_rflush(clampi_bwin *b, int target, MPI_Request *request);
#endif
