/* How a window's bytes move: ONE operations table, one row per capability, one table per
 * backend. This header is the whole interface between the window layer (src/rma/) and the
 * backends below it:
 *   src/backends/mpi/  the PMPI_ calls on the window's MPI window (the default)
 *   src/backends/ucx/  UCX workers, endpoints and rkeys on the process's UCX service, chosen
 *                      with the info key clampi_backend=ucx (or CLAMPI_BACKEND=ucx)
 *
 * A backend sees a window only as a clampi_bwin: the MPI handles, the group geometry, the
 * semantics it must honour and its own state (opaque to the layers above). The window layer
 * (clampi_win, src/rma/window.h) embeds one and never looks inside `state`; a backend never
 * sees clampi_win. A capability another backend needs is a new row here, never an
 * `if (backend)` in the window layer.
 *
 * Every op returns an MPI error code and reports its own errors through the window's error
 * handler (clampi_bwin_raise; the MPI backend: MPI does it on `win`). */
#ifndef CLAMPI_BACKENDS_BACKEND_H
#define CLAMPI_BACKENDS_BACKEND_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/intrinsic_ops.h"
#include "common/datatype.h"
#include "common/errors.h"

struct CMPIX_Win_thread_stats;
struct clampi_backend_ext;

/* The values of the clampi_backend option, indexes of clampi_backend_table. */
typedef enum clampi_backend_kind { CLAMPI_BACKEND_KIND_MPI, CLAMPI_BACKEND_KIND_UCX } clampi_backend_kind;

/* The values of the clampi_progress option: how a backend's target side progresses. */
typedef enum clampi_progress_kind {
    CLAMPI_PROGRESS_AUTO,   /* a progress thread where the transports need one (see backends/ucx/progress.c) */
    CLAMPI_PROGRESS_THREAD, /* always a progress thread */
    CLAMPI_PROGRESS_NONE    /* never: the target progresses only inside clampi calls */
} clampi_progress_kind;

typedef struct clampi_bwin {
    const struct clampi_backend_ops *ops; /* this window's table (a backend may switch variants) */
    void *state;                          /* the backend's own (NULL on MPI); opaque above */
    void *variant;                        /* a variant's own (UCX: a memory-handle window's handle; MPI: the lock
                      table of a window with duplicates), NULL on a plain window; opaque above */
    MPI_Win win;                          /* the MPI window (the program's, or the one under it) */
    MPI_Win shm_win;                      /* node-shared window behind win, or MPI_WIN_NULL */
    MPI_Comm shm_comm; /* shm_win's communicator, kept for its life (Intel MPI 2021 crashes in a lock on a
                          shared window whose communicator was freed), or MPI_COMM_NULL */
    MPI_Win err_win;   /* errors are raised through this window's handler */
    int rank, nranks;
    int dynamic;                   /* MPI_Win_create_dynamic: displacements are absolute addresses */
    int thread_scope;              /* mpi_win_scope=thread: flushes complete the calling thread's operations */
    int ordered;                   /* mpi_win_order: operations to a target complete in issue order */
    clampi_progress_kind progress; /* clampi_progress: read by setup */
    int shm_direct;                /* clampi_shm_direct: same-node memory by load/store where it can be (setup) */
    /* Geometry for argument checks (backends/access.h), filled by the window layer. */
    MPI_Aint *target_size; /* per target: window bytes */
    int *target_disp_unit; /* per target: displacement unit */
    /* Where MPI_Finalize frees the window if the program did not (rma/unfreed.c): agreed by
     * every member at setup, so that all processes free their windows in one global order
     * (highest first); 0 where the backend agrees none (MPI). Copied into duplicates. */
    uint64_t finalize_order;
} clampi_bwin;

/* Raise e through the window's error handler; returns the code. */
static inline int clampi_bwin_raise(const clampi_bwin *b, clampi_error e) { return clampi_raise_on_win(b->err_win, e); }
/* rc of an MPI call a backend made for the window (its own communicator's): MPI_SUCCESS, or
 * rc raised through the window's handler. */
static inline int clampi_bwin_raise_rc(const clampi_bwin *b, int rc) {
    return rc == MPI_SUCCESS ? rc : clampi_raise_mpi_on_win(b->err_win, rc);
}

/* What a backend honours beyond MPI-3 RMA (the Quo Vadis RMA paper's keys): the window layer
 * keeps a key's value only where the window's table has its capability. */
enum {
    CLAMPI_BACKEND_CAP_THREAD_SCOPE = 1u << 0, /* mpi_win_scope=thread */
    CLAMPI_BACKEND_CAP_ORDER = 1u << 1,        /* mpi_win_order */
    CLAMPI_BACKEND_CAP_ACC_INTRINSIC = 1u << 2 /* mpi_assert_accumulate_intrinsic */
};

typedef struct clampi_backend_ops {
    const char *name; /* "mpi", "ucx": the clampi_backend info value */
    unsigned caps;    /* CLAMPI_BACKEND_CAP_* */
    /* ---- life cycle (NULL: nothing to do) ----------------------------------------------
     * setup: collective over comm, after the MPI window and the window layer's state exist:
     * takes the window over (b->ops, b->state). memh: memory from mem_alloc (now the
     * window's). MPI_SUCCESS or an error code, the same on every rank; b unchanged on
     * failure. */
    int (*setup)(clampi_bwin *b, MPI_Comm comm, void *base, MPI_Aint size, void *memh);
    /* Collective: releases the backend's state only (not b->win); b is an MPI window again. */
    void (*teardown)(clampi_bwin *b);
    /* Window memory this backend reaches one-sidedly (MPI_Win_allocate); *handle goes to setup. */
    int (*mem_alloc)(size_t size, void **base, void **handle);
    void (*mem_free)(void *handle);
    /* ---- communication (arguments already checked by the window layer) ---------------- */
    int (*get)(clampi_bwin *b, void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
               MPI_Datatype ttype);
    int (*rget)(clampi_bwin *b, void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                MPI_Datatype ttype, MPI_Request *req);
    int (*put)(clampi_bwin *b, const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
               int tcount, MPI_Datatype ttype);
    int (*rput)(clampi_bwin *b, const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                int tcount, MPI_Datatype ttype, MPI_Request *req);
    int (*accumulate)(clampi_bwin *b, const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                      int tcount, MPI_Datatype ttype, MPI_Op op);
    int (*get_accumulate)(clampi_bwin *b, const void *origin, int ocount, MPI_Datatype otype, void *result, int rcount,
                          MPI_Datatype rtype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op);
    int (*fetch_and_op)(clampi_bwin *b, const void *origin, void *result, MPI_Datatype type, int target, MPI_Aint disp,
                        MPI_Op op);
    int (*compare_and_swap)(clampi_bwin *b, const void *origin, const void *compare, void *result, MPI_Datatype type,
                            int target, MPI_Aint disp);
    /* ---- passive target ----------------------------------------------------------------- */
    int (*flush)(clampi_bwin *b, int rank);
    int (*flush_all)(clampi_bwin *b);
    int (*flush_local)(clampi_bwin *b, int rank);
    int (*flush_local_all)(clampi_bwin *b);
    int (*lock)(clampi_bwin *b, int lock_type, int rank, int assert);
    int (*unlock)(clampi_bwin *b, int rank);
    int (*lock_all)(clampi_bwin *b, int assert);
    int (*unlock_all)(clampi_bwin *b);
    int (*sync)(clampi_bwin *b);
    /* ---- active target ------------------------------------------------------------------ */
    int (*fence)(clampi_bwin *b, int assert);
    int (*start)(clampi_bwin *b, MPI_Group group, int assert);
    int (*complete)(clampi_bwin *b);
    int (*post)(clampi_bwin *b, MPI_Group group, int assert);
    int (*wait)(clampi_bwin *b);
    /* MPI_Win_test: *flag = 1 and the exposure epoch ends when every origin completed.
     * NULL: not supported (MPI_ERR_RMA_SYNC). */
    int (*test)(clampi_bwin *b, int *flag);
    /* ---- dynamic windows ---------------------------------------------------------------- */
    int (*attach)(clampi_bwin *b, void *base, MPI_Aint size);
    int (*detach)(clampi_bwin *b, const void *base);
    /* Per-thread flush counters (mpi_win_scope=thread); NULL: the backend has none (zeros). */
    void (*thread_stats)(clampi_bwin *b, struct CMPIX_Win_thread_stats *stats);
    /* Collective, first in a free (before the window layer lets go of anything): everyone's
     * operations complete; a failure is raised on the window, which stays whole. NULL: none. */
    int (*quiesce)(clampi_bwin *b);
    /* Frees the backend's resources and b->win (collective). On failure the window stays usable. */
    int (*free)(clampi_bwin *b);
    /* ---- duplicates (CMPIX_Win_dup: src/rmax/family.c); NULL: nothing to track --------------
     * family_join: child becomes a duplicate of parent (both may switch tables);
     * family_empty: parent has no duplicates left; family_free: parent's release frees what
     * family_join kept. */
    void (*family_join)(clampi_bwin *parent, clampi_bwin *child);
    void (*family_empty)(clampi_bwin *parent);
    void (*family_free)(clampi_bwin *parent);
    /* The RMA extensions' rows (below); NULL: the backend has none (the MPI backend). */
    const struct clampi_backend_ext *ext;
} clampi_backend_ops;

/* A memory handle as a backend sees it (CMPIX_Memhandle_create, CMPIX_Win_from_memhandle).
 * mh_register fills the registration; mh_open reads all of it. */
typedef struct clampi_backend_mh {
    /* the owner's registration: the region's slot in the owner's generation table, the
     * value that slot holds while the handle lives, and the packed rkeys */
    uint32_t slot;
    uint64_t generation, gen_addr;
    const void *rkey, *gen_rkey;
    uint32_t rkey_len, gen_rkey_len;
    /* the region at its owner */
    int target, disp_unit;
    uint64_t base, size;
    /* Bytes [direct_lo, direct_hi) of the region are mapped in this process at direct + offset
     * (a node-shared heap: all of it; the owner's moved pages, rmax/mh_share.h: some); direct
     * NULL: none. direct_live: the handle's liveness word mapped here, or NULL.
     * direct_close(direct_ref): called once when the last window using the handle goes
     * (NULL: nothing to call); it ends the mapping's use. */
    unsigned char *direct;
    uint64_t direct_lo, direct_hi;
    const uint64_t *direct_live;
    void (*direct_close)(void *ref);
    void *direct_ref;
} clampi_backend_mh;

/* What a backend offers beyond MPI RMA, for the extensions (src/rmax/, the Quo Vadis RMA
 * paper): the only way they reach a backend. A window whose table has no `ext` answers
 * the extensions' calls as an MPI window does (MPI_ERR_WIN, or what MPI alone can do). */
typedef struct clampi_backend_ext {
    /* ---- children (CMPIX_Win_dup, memory-handle windows) over a parent's state ---------
     * share: child uses parent's state (counted); unshare: before such a child is freed.
     * variant: the table for b's options (acc_intrinsic: mpi_assert_accumulate_intrinsic). */
    void (*share)(clampi_bwin *child, const clampi_bwin *parent);
    void (*unshare)(clampi_bwin *child);
    const clampi_backend_ops *(*variant)(const clampi_bwin *b, int acc_intrinsic);
    /* ---- memory handles, owner side ---------------------------------------------------
     * attached: 1 if dynamic b has [base, base+size) attached. mh_register: registers the
     * region in *table (b's, made on first use) and fills h's registration; MPI_SUCCESS or a
     * clampi_error. mh_live: 1 if h's slot holds h's generation (release: then releases it,
     * which kills the handle for every peer; -1: released, but a peer keeping a copy of its
     * liveness could not be told). mh_table_free: the table and every region. */
    int (*attached)(const clampi_bwin *b, const void *base, size_t size);
    int (*mh_register)(const clampi_bwin *b, void **table, void *base, size_t size, clampi_backend_mh *h);
    int (*mh_live)(void *table, const clampi_backend_mh *h, int release);
    void (*mh_table_free)(void *table);
    /* ---- memory handles, peer side ----------------------------------------------------
     * mh_open: h reached through parent's endpoint to h->target (*cache: parent's owners'
     * generation tables, kept until mh_cache_free); NULL if h cannot be used. mh_adopt makes
     * b (a child sharing parent's state) a memory-handle window on it; mh_close frees one
     * never adopted. mh_is: b is a memory-handle window; mh_share: a duplicate of one uses
     * its handle; mh_release: b's use ends (the last frees it). */
    void *(*mh_open)(clampi_bwin *parent, const clampi_backend_mh *h, void **cache);
    void (*mh_adopt)(clampi_bwin *b, clampi_bwin *parent, void *handle);
    void (*mh_close)(void *handle);
    int (*mh_is)(const clampi_bwin *b);
    void (*mh_share)(clampi_bwin *b, const clampi_bwin *from);
    void (*mh_release)(clampi_bwin *b);
    void (*mh_cache_free)(const clampi_bwin *parent, void *cache);
    /* ---- notification (CMPIX_Put_notify) ----------------------------------------------
     * notify_listen: from now on arrived(arg, id, origin) runs for every notification sent
     * to this process on b's family, whose id (the same on every rank) is win_id; NULL on
     * failure. notify_stop: no more calls (b's free);
     * notify_progress: drives arrivals (valid until notify_free). notify_send: after the
     * operations issued so far to target are complete there, notification id to it. */
    void *(*notify_listen)(clampi_bwin *b, uint64_t win_id, void (*arrived)(void *arg, int id, int origin), void *arg);
    void (*notify_stop)(clampi_bwin *b, void *listener);
    void (*notify_progress)(void *listener);
    void (*notify_free)(void *listener);
    int (*notify_send)(clampi_bwin *b, int target, uint64_t win_id, int id);
    /* ---- CMPIX_Rrput and friends: a request that completes when the operations issued
     * so far to target are complete there (a flush of that target's endpoint only). ------ */
    int (*rflush)(clampi_bwin *b, int target, MPI_Request *req);
    /* ---- CMPIX_Win_op_intrinsic: 1 if (opbits, count, type) run as the transport's own
     * atomics on every target b may reach, through eps_of's endpoints (a memory-handle
     * window: its parent's). *lanes keeps the transports' answer for b (0: not asked yet,
     * 1 yes, -1 no): asking UCX parses each endpoint's description. ------------------- */
    int (*op_intrinsic)(clampi_bwin *b, clampi_bwin *eps_of, unsigned opbits, int count, MPI_Datatype type, int *lanes);
} clampi_backend_ext;

/* The backends' tables (src/backends/mpi/ops.c, src/backends/ucx/sync.c). */
extern const clampi_backend_ops clampi_backend_mpi;
extern const clampi_backend_ops clampi_backend_ucx;

/* The table of a kind (backends/backend.c). */
const clampi_backend_ops *clampi_backend_table(clampi_backend_kind kind);
#endif
