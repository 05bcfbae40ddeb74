/* The MPI carrier (clampi_match_carrier=mpi): the MPI library's own point-to-point messages,
 * on a duplicate of the communicator (the "wire"), carry the data; clampi matches only the
 * receives that would sit deep in MPI's posted-receive queue.
 *
 * A short queue costs MPI little; a long one is what the semi-permanent cache occupancy
 * paper speeds up. So a receive goes to MPI's own queue while clampi holds no receive and
 * no probed message of this communicator and fewer than the native depth of MPI's own are
 * pending; otherwise it goes to clampi's queue, and clampi takes MPI's unexpected messages
 * with MPI_Improbe (MPI_ANY_SOURCE, MPI_ANY_TAG) and matches each against its queue, then
 * receives it with MPI_Imrecv straight into the program's buffer.
 *
 * Why the order stays MPI's: every receive in MPI's own queue was posted before every
 * receive in clampi's (a receive goes to MPI only while clampi's queue is empty). An
 * arriving message meets MPI's queue first -- the older receives -- and reaches clampi only
 * if none of them matches it; clampi then offers it to its receives in posting order. A
 * message clampi took (its unexpected queue) is older than any message of the same sender
 * still inside MPI, so receives and probes look at clampi's unexpected queue first. A probe
 * first lets clampi's receives take what has arrived (a posted receive wins over a probe).
 *
 * The native depth (how many of MPI's own): MPI's queue is a list, so a receive deep in it
 * costs every arrival that passes it -- unless arrivals match in posting order, when each
 * takes the head. A window of receives whose messages come in order (osu_bw, a halo
 * exchange) is then cheaper in MPI's queue than in clampi's (MPI_Improbe + matcher +
 * MPI_Imrecv per message). So the depth starts at native_base, doubles (up to native_cap)
 * after a run of clampi matches as long as the depth, each at the head of clampi's queue,
 * and falls back to native_base at the first match that skipped an older receive: in
 * clampi's queue (the matcher's depth) or in MPI's (a tracked receive completing before an
 * older one). Changing the depth never reorders: it applies only while clampi's queue is
 * empty, like every hand to MPI.
 *
 * Progress: a sender's large message (rendezvous) completes only when the receiver takes
 * it. While clampi holds receives (clampi_carrier_pending), clampi's waits and blocking
 * calls never block inside MPI; they test and pull. A blocking MPI call clampi does not
 * intercept (a collective) does not pull: see docs/matching.md. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clampi/match.h"
#include "common/errors.h"
#include "common/options.h"
#include "common/progress_hook.h"
#include "msg/msg_internal.h"

#define MAX_CARRIERS 256
#define PULL_BATCH 64     /* messages taken from MPI per communicator per progress */
#define NATIVE_SLOTS 4096 /* the set of MPI's receives: at most half full */

static pthread_mutex_t carriers_lock = PTHREAD_MUTEX_INITIALIZER;
static clampi_mcomm *carriers[MAX_CARRIERS];
clampi_carrier_counts clampi_carrier_n;

static pthread_mutex_t flight_lock = PTHREAD_MUTEX_INITIALIZER;
static clampi_mreq *flight; /* MPI_Imrecv not complete at once */

static void lock(clampi_mcomm *mc) {
    if (mc->threaded) pthread_mutex_lock(&mc->recv_lock);
}
static void unlock(clampi_mcomm *mc) {
    if (mc->threaded) pthread_mutex_unlock(&mc->recv_lock);
}

/* ---- receives handed to MPI's own queue: an open-addressing set of their handles ---- */
static struct {
    MPI_Request h;
    clampi_mcomm *mc; /* NULL: empty slot */
    unsigned seq;     /* mc's tracking order */
} native[NATIVE_SLOTS];
static pthread_mutex_t native_lock = PTHREAD_MUTEX_INITIALIZER;
static int native_threads; /* MPI_THREAD_MULTIPLE: the set is locked (else one thread uses it) */

static void native_acquire(void) {
    if (native_threads) pthread_mutex_lock(&native_lock);
}
static void native_release(void) {
    if (native_threads) pthread_mutex_unlock(&native_lock);
}

/* Room in MPI's own queue for one more of mc's nonblocking receives: fewer than native_max
 * of them there, and the set of tracked handles stays at most half full. */
static inline int clampi_carrier_native_room(const clampi_mcomm *mc) {
    return (unsigned)atomic_load_explicit(&mc->native_live, memory_order_relaxed) <
               atomic_load_explicit(&mc->native_max, memory_order_relaxed) &&
           atomic_load_explicit(&clampi_carrier_n.nnative, memory_order_relaxed) < NATIVE_SLOTS / 2 - 64;
}
static unsigned slot_of(MPI_Request h) { return (unsigned)(clampi_msg_handle_mix(h) >> 40) & (NATIVE_SLOTS - 1); }

/* The counts change only under native_lock (or in the one thread that uses the set), so
 * they are plain loads and stores: no locked read-modify-write on a receive's path. */
static void count_add(_Atomic int *c, int d) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + d, memory_order_relaxed);
}

/* Inline (with slot_find, slot_remove): on every receive MPI's queue takes at depth 0. */
static inline __attribute__((always_inline)) void clampi_carrier_track(MPI_Request h, clampi_mcomm *mc) {
    native_acquire();
    /* a few threads may pass clampi_carrier_native_room at once */
    if (atomic_load_explicit(&clampi_carrier_n.nnative, memory_order_relaxed) < NATIVE_SLOTS / 2) {
        unsigned i = slot_of(h);
        while (native[i].mc) i = (i + 1) & (NATIVE_SLOTS - 1);
        native[i].h = h;
        native[i].mc = mc;
        native[i].seq = mc->native_seq++;
        count_add(&clampi_carrier_n.nnative, 1);
        count_add(&mc->native_live, 1);
    } else {
        atomic_store_explicit(&mc->wire_in_doubt, 1, memory_order_relaxed);
    }
    native_release();
}

/* ---- the native depth (see the top) ---- */
static void native_fall_back(clampi_mcomm *mc) {
    if (atomic_load_explicit(&mc->native_max, memory_order_relaxed) != mc->native_base)
        atomic_store_explicit(&mc->native_max, mc->native_base, memory_order_relaxed);
}

/* A clampi receive matched an arrival `depth` entries into clampi's queue (recv_lock held:
 * the run of in-order matches is this side's). */
static void native_adapt(clampi_mcomm *mc, size_t depth) {
    if (mc->native_cap <= mc->native_base) return; /* fixed */
    if (depth) {
        mc->fifo_run = 0;
        native_fall_back(mc);
        return;
    }
    unsigned gen = atomic_load_explicit(&mc->native_gen, memory_order_relaxed);
    if (gen != mc->fifo_gen) { /* fell back since: the run starts again */
        mc->fifo_gen = gen;
        mc->fifo_run = 0;
    }
    unsigned cur = atomic_load_explicit(&mc->native_max, memory_order_relaxed);
    if (++mc->fifo_run < cur || cur >= mc->native_cap) return;
    mc->fifo_run = 0;
    /* a fall-back between the load and here wins */
    atomic_compare_exchange_strong_explicit(&mc->native_max, &cur, cur > mc->native_cap / 2 ? mc->native_cap : 2 * cur,
                                            memory_order_relaxed, memory_order_relaxed);
}

/* MPI's receive number seq of mc leaves the set (native_lock held). Leaving while an older
 * one stays: MPI's queue was searched past that one; the older ones are then forgotten, so
 * one receive that never completes (a long-lived control receive) costs one fall-back, not
 * one per later receive. */
static void native_left(clampi_mcomm *mc, unsigned seq) {
    if ((int)(seq - mc->native_done) > 0) {
        /* the run of in-order matches ends too; it is the receive side's (recv_lock), so
         * signal it (native_gen only has to change: a racing bump may count as one) */
        atomic_store_explicit(&mc->native_gen, atomic_load_explicit(&mc->native_gen, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        native_fall_back(mc);
        mc->native_done = seq + 1;
    } else if (seq == mc->native_done) {
        mc->native_done++;
    } /* else: one of the forgotten older ones, late */
}

/* A receive MPI matched, counted for the stats line (msg.h). One thread per communicator
 * unless threaded: a plain load and store then, no locked instruction on the depth-0 path. */
static inline void native_count(clampi_mcomm *mc) {
    if (mc->threaded)
        atomic_fetch_add_explicit(&mc->native_matched, 1, memory_order_relaxed);
    else
        atomic_store_explicit(&mc->native_matched, atomic_load_explicit(&mc->native_matched, memory_order_relaxed) + 1,
                              memory_order_relaxed);
}

static inline int native_counted(clampi_mcomm *mc, int source, int err) {
    if (err == MPI_SUCCESS && source != MPI_PROC_NULL) native_count(mc);
    return err;
}

/* Removes slot i (linear probing: later entries of its run move back). native_lock held. */
static inline __attribute__((always_inline)) void slot_remove(unsigned i, int completed) {
    if (completed) native_count(native[i].mc);
    native_left(native[i].mc, native[i].seq);
    count_add(&native[i].mc->native_live, -1);
    if (native[i].mc->native_hold) atomic_fetch_sub(&native[i].mc->live, 1); /* retired: see native_hold */
    native[i].mc = NULL;
    count_add(&clampi_carrier_n.nnative, -1);
    for (unsigned j = (i + 1) & (NATIVE_SLOTS - 1); native[j].mc; j = (j + 1) & (NATIVE_SLOTS - 1)) {
        unsigned home = slot_of(native[j].h);
        /* j's entry may move to the hole at i if its home is not in (i, j] (cyclically) */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            native[i] = native[j];
            native[j].mc = NULL;
            i = j;
        }
    }
}

static inline __attribute__((always_inline)) int slot_find(MPI_Request h) {
    for (unsigned i = slot_of(h); native[i].mc; i = (i + 1) & (NATIVE_SLOTS - 1))
        if (native[i].h == h) return (int)i;
    return -1;
}

int clampi_carrier_tracked(MPI_Request h) {
    if (!clampi_carrier_tracking()) return 0;
    native_acquire();
    int i = slot_find(h);
    native_release();
    return i >= 0;
}

void clampi_carrier_untrack_one(MPI_Request h) {
    native_acquire();
    int i = slot_find(h);
    if (i >= 0) slot_remove((unsigned)i, 1);
    native_release();
}

/* all: the call finished every request (a persistent one keeps its handle). */
static void untrack(const MPI_Request *before, const MPI_Request *after, int n, int completed, int all) {
    if (!clampi_carrier_tracking()) return;
    native_acquire();
    for (int k = 0; k < n; k++) {
        if (before[k] == MPI_REQUEST_NULL || (after[k] != MPI_REQUEST_NULL && !(all && after[k] == before[k])))
            continue;
        int i = slot_find(before[k]);
        if (i >= 0 && !completed) atomic_store(&native[i].mc->wire_in_doubt, 1); /* MPI_Request_free */
        if (i >= 0) slot_remove((unsigned)i, completed);
    }
    native_release();
}

void clampi_carrier_untrack(const MPI_Request *before, const MPI_Request *after, int n, int all) {
    untrack(before, after, n, 1, all);
}

void clampi_carrier_forget(MPI_Request req) {
    MPI_Request none = MPI_REQUEST_NULL;
    untrack(&req, &none, 1, 0, 0);
}

/* ---- errors on the wire go to the program's communicator's handler ---------------------- */
static int wire_keyval = MPI_KEYVAL_INVALID;
static MPI_Errhandler wire_errhandler = MPI_ERRHANDLER_NULL;

/* The code the wire's error handler saw during the last wrapped call on the wire, or 0. MPICH
 * 5 returns MPI_SUCCESS from a call whose error went to a user-defined handler, as the wire's
 * is: when the program's communicator has MPI_ERRORS_RETURN, CLAMPI_WIRE returns the code, as
 * plain MPI does; when the program's own handler ran under the preload, what the MPI
 * returned, as plain MPI does after that handler (MPI_SUCCESS on MPICH 5, the code on the
 * others; common/errors.h). */
_Thread_local CLAMPI_MSG_TLS int clampi_wire_code;
_Thread_local CLAMPI_MSG_TLS int clampi_wire_handled;
_Thread_local CLAMPI_MSG_TLS int clampi_wire_quiet;
/* The common case (no error anywhere) reads one thread-local word. */
static inline int clampi_wire_rc(int err) {
    return err != MPI_SUCCESS || !clampi_wire_code || clampi_wire_handled ? err : clampi_wire_code;
}
#define CLAMPI_WIRE(call) (clampi_wire_code = 0, clampi_wire_rc(call))

/* A handler of the program's making (not a predefined one): after it, MPI's call returns what
 * that MPI returns after a user-defined handler. */
static int program_handles(MPI_Comm comm) {
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (PMPI_Comm_get_errhandler(comm, &eh) != MPI_SUCCESS) return 0;
    int own = clampi_errhandler_is_programs(eh);
    if (eh != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&eh);
    return own;
}

static void wire_error(MPI_Comm *wire, int *code, ...) {
    clampi_wire_code = *code;
    clampi_wire_handled = 0;
    if (clampi_wire_quiet) return;
    clampi_mcomm *mc = NULL;
    int flag = 0;
    if (wire_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_get_attr(*wire, wire_keyval, &mc, &flag);
    /* A retired communicator's handle is gone: the error stays with its request, raised
     * where the request completes (clampi_mreq_err_comm). */
    if (flag && mc && mc->comm != MPI_COMM_NULL) {
        clampi_wire_handled = clampi_errors_follow_mpi() && program_handles(mc->comm);
        PMPI_Comm_call_errhandler(mc->comm, *code);
    }
}

/* ---- spare wires -------------------------------------------------------------------------
 * A duplicate's wire is a duplicate of its parent's wire. Freed, it waits in the parent's
 * pool (WIRE_SLOTS per parent, SPARES_MAX per process) for the parent's next MPI_Comm_dup,
 * which then makes no wire: enabling's one agreement also finds a slot whose wire is spare
 * on every process. A slot names the same wire on every process: given to a new wire by an
 * agreement (free everywhere), taken by one (spare everywhere), and used or spare on a
 * process until that process frees it; a spare is never dropped while its parent lives. So
 * a slot the last agreement saw spare everywhere and left is still there at the next: the
 * agreed hint says so, and only then does a duplicate ask the pool (comm.c), so a program
 * that keeps its duplicates pays nothing for it. Reusing a wire is what MPI does when it
 * reuses a freed communicator's context id: a message sent on the freed communicator and
 * never received could meet a receive of the new one (the program's error either way). */
#define WIRE_SLOTS 32
#define SPARES_MAX 16

static void drop(MPI_Message *wire, size_t n);

typedef struct clampi_wire_pool {
    uint32_t used, spare; /* slots taken here (spare or a live duplicate's); spare ones */
    int hint;             /* agreed: a slot was spare everywhere at the last agreement */
    int refs;             /* the parent, while it lives, and each duplicate holding a slot */
    int orphan;           /* the parent was released: nothing goes into the pool any more */
    MPI_Comm wire[WIRE_SLOTS];
} clampi_wire_pool;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static int spares; /* in all pools (pool_lock) */

static clampi_wire_pool *pool_new(void) {
    clampi_wire_pool *p = calloc(1, sizeof *p);
    if (p) p->refs = 1;
    return p;
}

static void pool_unref(clampi_wire_pool *p) { /* pool_lock held */
    if (--p->refs == 0) free(p);
}

static void wire_slots(const clampi_mcomm *parent, uint32_t *spare, uint32_t *used, int *hint) {
    pthread_mutex_lock(&pool_lock);
    *spare = parent->pool->spare;
    *used = parent->pool->used;
    *hint = parent->pool->hint;
    pthread_mutex_unlock(&pool_lock);
}

static void wire_close(MPI_Comm *wire);
static void native_forget(clampi_mcomm *mc);

static void wire_agreed(const clampi_mcomm *parent, clampi_mcomm *mc, uint32_t spare, uint32_t free,
                        uint32_t unused_somewhere, int take) {
    clampi_wire_pool *p = parent->pool;
    MPI_Comm stale[WIRE_SLOTS];
    int nstale = 0;
    pthread_mutex_lock(&pool_lock);
    /* spare here, freed by another process (its cap was full, or the wire in doubt there):
     * never spare everywhere, so it goes, and its place under the cap with it */
    for (uint32_t s = p->spare & unused_somewhere; s; s &= s - 1) {
        int i = __builtin_ctz(s);
        stale[nstale++] = p->wire[i];
        p->wire[i] = MPI_COMM_NULL;
        p->spare &= ~(1u << i);
        p->used &= ~(1u << i);
        spares--;
    }
    int slot = -1;
    if (take && spare) {
        slot = __builtin_ctz(spare);
        p->spare &= ~(1u << slot);
        spares--;
        spare &= ~(1u << slot);
        mc->wire = p->wire[slot];
        p->wire[slot] = MPI_COMM_NULL;
    } else if (!take && free) {
        slot = __builtin_ctz(free);
        p->used |= 1u << slot;
    }
    if (slot >= 0) {
        mc->wire_pool = p;
        mc->wire_slot = slot;
        p->refs++;
    }
    p->hint = spare != 0; /* left spare everywhere: the next duplicate finds one */
    pthread_mutex_unlock(&pool_lock);
    for (int i = 0; i < nstale; i++) wire_close(&stale[i]);
}

/* Messages still in MPI's queue could only be received through the freed communicator:
 * dropped first (MPICH 5 refuses to free a communicator that holds any). */
static void wire_drain(MPI_Comm wire) {
    for (;;) {
        int flag = 0;
        MPI_Message m;
        MPI_Status st;
        if (PMPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, wire, &flag, &m, &st) != MPI_SUCCESS || !flag) break;
        MPI_Count n = 0;
        PMPI_Get_elements_x(&st, MPI_BYTE, &n);
        drop(&m, (size_t)n);
    }
}

/* A refusal returns instead of aborting the program. */
static void wire_close(MPI_Comm *wire) {
    wire_drain(*wire);
    PMPI_Comm_set_errhandler(*wire, MPI_ERRORS_RETURN);
    PMPI_Comm_free(wire);
}

/* mc's wire into its parent's pool, if it has a slot there, its parent lives, it was not
 * revoked, no receive of the program may still be posted on it (wire_in_doubt) and the
 * process keeps fewer than SPARES_MAX; else freed. Then mc's own pool
 * lets go of its spares. */
static void clampi_carrier_wire_free(clampi_mcomm *mc) {
    MPI_Comm gone[WIRE_SLOTS + 1];
    int ngone = 0;
    if (atomic_load(&mc->native_live) > 0) native_forget(mc);
    if (mc->wire != MPI_COMM_NULL) {
        wire_drain(mc->wire);
        if (wire_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_set_attr(mc->wire, wire_keyval, NULL);
    }
    pthread_mutex_lock(&pool_lock);
    clampi_wire_pool *p = mc->wire_pool;
    if (p) {
        if (mc->wire != MPI_COMM_NULL && !p->orphan && !atomic_load(&mc->revoked) && !atomic_load(&mc->wire_in_doubt) &&
            spares < SPARES_MAX && !(p->spare & 1u << mc->wire_slot)) {
            p->wire[mc->wire_slot] = mc->wire;
            p->spare |= 1u << mc->wire_slot;
            spares++;
            mc->wire = MPI_COMM_NULL;
        } else {
            p->used &= ~(1u << mc->wire_slot);
        }
        pool_unref(p);
        mc->wire_pool = NULL;
    }
    if (mc->pool) { /* the children's spares go with the parent */
        for (int i = 0; i < WIRE_SLOTS; i++)
            if (mc->pool->spare & 1u << i) {
                gone[ngone++] = mc->pool->wire[i];
                spares--;
            }
        mc->pool->used &= ~mc->pool->spare;
        mc->pool->spare = 0;
        mc->pool->orphan = 1;
        pool_unref(mc->pool);
        mc->pool = NULL;
    }
    pthread_mutex_unlock(&pool_lock);
    if (mc->wire != MPI_COMM_NULL) gone[ngone++] = mc->wire;
    mc->wire = MPI_COMM_NULL;
    for (int i = 0; i < ngone; i++) wire_close(&gone[i]);
}

/* ---- enable / disable --------------------------------------------------------------- */
/* A place in the table of communicators (progress and the hand-over walk it); the table
 * ignores mc until it has receives posted, which needs it enabled. */
static int prepare(clampi_mcomm *mc) {
    int err = MPI_SUCCESS, provided = MPI_THREAD_SINGLE;
    /* before mc is in the table: lock(mc) there reads it */
    PMPI_Query_thread(&provided);
    mc->threaded = provided == MPI_THREAD_MULTIPLE;
    if (!(mc->pool = pool_new())) return MPI_ERR_NO_MEM;
    pthread_mutex_lock(&carriers_lock);
    if (mc->threaded) native_threads = 1;
    int n = atomic_load(&clampi_carrier_n.ncarriers);
    if (n < MAX_CARRIERS) {
        carriers[n] = mc;
        atomic_store(&clampi_carrier_n.ncarriers, n + 1);
    } else {
        err = MPI_ERR_OTHER;
    }
    pthread_mutex_unlock(&carriers_lock);
    return err;
}

/* The wire made before enabling's agreement (carrier_ops.h, start), from the parent's wire
 * as the program made its communicator from the parent (msg.h, clampi_wire_recipe): the
 * parent's wire has none of the program's attributes, so none of its callbacks run. A
 * duplicate takes an empty info, so that no hint (mpi_assert_no_any_source,
 * ...) reaches the wire, which clampi probes with MPI_ANY_SOURCE. A failure is this
 * process's result, agreed on next, never the program's handler's (errors on the parent's
 * wire go to wire_error). */
static int start(const clampi_mcomm *parent, const clampi_wire_recipe *how, MPI_Comm *wire) {
    static MPI_Info no_hints = MPI_INFO_NULL;
    pthread_mutex_lock(&carriers_lock);
    if (no_hints == MPI_INFO_NULL) PMPI_Info_create(&no_hints);
    pthread_mutex_unlock(&carriers_lock);
    clampi_carrier_release();
    *wire = MPI_COMM_NULL;
    MPI_Comm from = parent->wire;
    if (from == MPI_COMM_NULL) return MPI_ERR_OTHER; /* the same on every process */
    clampi_wire_quiet = 1;
    int err;
    switch (how->kind) {
    case CLAMPI_WIRE_SPLIT: err = CLAMPI_WIRE(PMPI_Comm_split(from, how->color, how->key, wire)); break;
    case CLAMPI_WIRE_CREATE: err = CLAMPI_WIRE(PMPI_Comm_create(from, how->group, wire)); break;
    case CLAMPI_WIRE_COPY: err = CLAMPI_WIRE(clampi_carrier_dup(how->made, wire)); break;
    default: err = CLAMPI_WIRE(PMPI_Comm_dup_with_info(from, no_hints, wire)); break;
    }
    clampi_wire_quiet = 0;
    return err;
}

static int clampi_carrier_enable(clampi_mcomm *mc, unsigned native_base, unsigned native_cap) {
    mc->native_base = native_base;
    /* bins search one source's bin: a match there at depth 0 may have skipped older receives
     * of other sources, which MPI's one list would walk; so with bins the depth is fixed */
    mc->native_cap = mc->cfg.kind == CLAMPI_MATCH_BINS ? native_base : native_cap;
    atomic_store(&mc->native_max, native_base);
    /* clampi's shared-memory collectives take messages while they wait for a peer, and
     * hand clampi's queued receives to MPI before they block inside MPI */
    __atomic_store_n(&clampi_idle_hooks[CLAMPI_IDLE_MSG], clampi_carrier_progress, __ATOMIC_RELEASE);
    __atomic_store_n(&clampi_before_blocking_hook, clampi_carrier_release, __ATOMIC_RELEASE);
    if (mc->wire == MPI_COMM_NULL) { /* collective: not made by start */
        int err = clampi_carrier_dup(mc->comm, &mc->wire);
        if (err != MPI_SUCCESS) return err;
    }
    pthread_mutex_lock(&carriers_lock);
    if (wire_keyval == MPI_KEYVAL_INVALID) {
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &wire_keyval, NULL);
        PMPI_Comm_create_errhandler(wire_error, &wire_errhandler);
    }
    pthread_mutex_unlock(&carriers_lock);
    /* MPI raises errors on the wire through the program's communicator's handler. */
    PMPI_Comm_set_attr(mc->wire, wire_keyval, mc);
    PMPI_Comm_set_errhandler(mc->wire, wire_errhandler);
    return MPI_SUCCESS;
}

static void flight_add(clampi_mreq *r);

/* A receive left clampi's posted queue (matched, handed to MPI, cancelled or failed; mc locked). */
static inline void left_queue(clampi_mcomm *mc) {
    mc->posted--;
    atomic_fetch_sub(&clampi_carrier_n.pending, 1);
}

/* A receive still in clampi's queue at MPI_Comm_free: MPI's own from now on. */
static void hand_to_mpi(uintptr_t cookie, void *arg) {
    clampi_mreq *r = (clampi_mreq *)cookie;
    clampi_mcomm *mc = arg;
    r->wire_fill = 1;
    int err = CLAMPI_WIRE(PMPI_Irecv(r->buf, r->count, r->type, r->post_source, r->post_tag, mc->wire, &r->wire_req));
    left_queue(mc);
    if (err != MPI_SUCCESS) {
        r->error = err;
        clampi_msg_finish(r);
        return;
    }
    flight_add(r);
}

static void drop_unexpected(uintptr_t cookie, void *arg) { clampi_carrier_discard((clampi_msg *)cookie); }

void clampi_carrier_release(void) {
    if (!clampi_carrier_pending()) return;
    pthread_mutex_lock(&carriers_lock);
    int n = atomic_load(&clampi_carrier_n.ncarriers);
    for (int i = 0; i < n; i++) {
        clampi_mcomm *mc = carriers[i];
        lock(mc);
        if (mc->posted && mc->matcher) clampi_matcher_drain(mc->matcher, 0, hand_to_mpi, mc); /* in posting order */
        unlock(mc);
    }
    pthread_mutex_unlock(&carriers_lock);
}

/* mc's receives still in MPI's queue leave the set: the wire is then in doubt (a later
 * duplicate's message could meet one of them there). */
static void native_forget(clampi_mcomm *mc) {
    pthread_mutex_lock(&native_lock);
    if (atomic_load(&mc->native_live) > 0) atomic_store(&mc->wire_in_doubt, 1);
    /* native_live counts mc's slots (changed where native[] is): most communicators have
     * none at their free, and the walk over all slots is what a free would cost */
    for (unsigned i = 0; atomic_load(&mc->native_live) > 0 && i < NATIVE_SLOTS; i++)
        while (native[i].mc == mc) slot_remove(i, 0); /* a moved-in entry may be mc's too */
    pthread_mutex_unlock(&native_lock);
}

/* MPI_Comm_free with mc's receives still in MPI's queue: each names mc (mc->live) until the
 * program completes it, so the wire stays, and no later communicator can meet them there
 * (MPICH would reuse a freed wire's context id at once; a kept spare would be reused too).
 * Once they completed the wire may go into the pool. */
static void native_hold(clampi_mcomm *mc) {
    pthread_mutex_lock(&native_lock);
    int n = atomic_load(&mc->native_live);
    if (n > 0) {
        atomic_fetch_add(&mc->live, n);
        mc->native_hold = 1;
    }
    pthread_mutex_unlock(&native_lock);
}

static void carrier_leave(clampi_mcomm *mc, int retiring) {
    pthread_mutex_lock(&carriers_lock); /* progress iterates under it: mc is out of reach after */
    int n = atomic_load(&clampi_carrier_n.ncarriers);
    for (int i = 0; i < n; i++)
        if (carriers[i] == mc) {
            carriers[i] = carriers[n - 1];
            atomic_store(&clampi_carrier_n.ncarriers, n - 1);
            break;
        }
    pthread_mutex_unlock(&carriers_lock);
    if (retiring)
        native_hold(mc);
    else
        native_forget(mc);
    if (mc->wire == MPI_COMM_NULL) return;
    lock(mc);
    if (mc->matcher) {
        clampi_matcher_drain(mc->matcher, 0, hand_to_mpi, mc); /* in posting order */
        clampi_matcher_drain(mc->matcher, 1, drop_unexpected, NULL);
    }
    mc->unexpected = 0;
    unlock(mc);
    /* The wire stays until nothing names mc (clampi_carrier_wire_free): MPI_Comm_free with
     * receives pending is legal, but Intel MPI 2021 crashes when such a receive's message
     * arrives (tests/mpi_bugs/impi2021_irecv_on_freed_comm.c). */
}

static void clampi_carrier_retire(clampi_mcomm *mc) { carrier_leave(mc, 1); }
static void clampi_carrier_disable(clampi_mcomm *mc) { carrier_leave(mc, 0); }

/* ---- matched receives ------------------------------------------------------------------ */
static void wire_done(clampi_mreq *r, int err) {
    if (r->tmp) { /* truncated: the part that fits */
        clampi_msg_unpack_into(r, r->tmp, r->staged);
        free(r->tmp);
        r->tmp = NULL;
    }
    if (err != MPI_SUCCESS && r->error == MPI_SUCCESS) r->error = err;
    clampi_msg_finish(r);
}

/* A message taken from MPI that nobody will receive: received and thrown away. */
static void drop(MPI_Message *wire, size_t n) {
    void *tmp = malloc(n ? n : 1);
    if (tmp) PMPI_Mrecv(tmp, (int)n, MPI_BYTE, wire, MPI_STATUS_IGNORE);
    free(tmp);
}

void clampi_carrier_discard(clampi_msg *m) {
    drop(&m->wire, m->hdr.bytes);
    clampi_pool_put(CLAMPI_POOL_MSG, m);
}

static void clampi_carrier_mrecv(clampi_mreq *r, clampi_msg *m) {
    size_t total = m->hdr.bytes;
    MPI_Message wire = m->wire;
    r->source = m->hdr.source;
    r->tag = m->hdr.tag;
    r->bytes = total;
    clampi_pool_put(CLAMPI_POOL_MSG, m);
    int err;
    if (total > r->capacity) { /* MPI would raise on the wire: take it all, keep what fits */
        r->error = MPI_ERR_TRUNCATE;
        r->bytes = r->capacity;
        r->staged = total;
        r->tmp = malloc(total);
        err = r->tmp ? PMPI_Imrecv(r->tmp, (int)total, MPI_BYTE, &wire, &r->wire_req)
                     : PMPI_Imrecv(r->buf, r->count, r->type, &wire, &r->wire_req);
    } else {
        err = PMPI_Imrecv(r->buf, r->count, r->type, &wire, &r->wire_req);
    }
    int flag = 0;
    if (err == MPI_SUCCESS) err = PMPI_Test(&r->wire_req, &flag, MPI_STATUS_IGNORE);
    if (err != MPI_SUCCESS || flag) {
        wire_done(r, err);
        return;
    }
    flight_add(r);
}

static void flight_add(clampi_mreq *r) {
    pthread_mutex_lock(&flight_lock);
    r->wire_next = flight;
    flight = r;
    atomic_fetch_add(&clampi_carrier_n.nflight, 1);
    atomic_fetch_add(&clampi_carrier_n.pending, 1);
    pthread_mutex_unlock(&flight_lock);
}

static void test_flight(void) {
    if (!atomic_load_explicit(&clampi_carrier_n.nflight, memory_order_relaxed) || pthread_mutex_trylock(&flight_lock))
        return;
    clampi_mreq *done = NULL;
    for (clampi_mreq **p = &flight; *p;) {
        clampi_mreq *r = *p;
        MPI_Status st;
        int flag = 0, err = PMPI_Test(&r->wire_req, &flag, &st);
        if (err == MPI_SUCCESS && !flag) {
            p = &r->wire_next;
            continue;
        }
        if (flag && r->wire_fill) { /* a receive handed to MPI: MPI's status */
            MPI_Count n = 0;
            PMPI_Get_elements_x(&st, MPI_BYTE, &n);
            r->source = st.MPI_SOURCE;
            r->tag = st.MPI_TAG;
            r->bytes = (size_t)n;
            PMPI_Test_cancelled(&st, &r->cancelled);
            if (!r->cancelled && r->mc) native_count(r->mc);
        }
        *p = r->wire_next;
        r->error = r->error != MPI_SUCCESS ? r->error : err;
        r->wire_next = done;
        done = r;
        atomic_fetch_sub(&clampi_carrier_n.nflight, 1);
        atomic_fetch_sub(&clampi_carrier_n.pending, 1);
    }
    pthread_mutex_unlock(&flight_lock);
    while (done) {
        clampi_mreq *r = done;
        done = r->wire_next;
        wire_done(r, MPI_SUCCESS);
    }
}

/* ---- taking MPI's unexpected messages for clampi's posted receives ------------------------ */
typedef struct matched {
    clampi_mreq *r;
    clampi_msg *m;
} matched;

/* Up to PULL_BATCH messages out of MPI into clampi's queues (mc locked); the ones that met a
 * posted receive in out[] (received by the caller, unlocked). Returns how many; *drained:
 * MPI had no message left. */
static int pull(clampi_mcomm *mc, matched out[PULL_BATCH], int *drained) {
    int nout = 0;
    *drained = 0;
    for (int i = 0; i < PULL_BATCH; i++) {
        int flag = 0;
        MPI_Message wire;
        MPI_Status st;
        if (PMPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, mc->wire, &flag, &wire, &st) != MPI_SUCCESS || !flag) {
            *drained = 1;
            break;
        }
        MPI_Count n = 0;
        PMPI_Get_elements_x(&st, MPI_BYTE, &n);
        clampi_msg *m = clampi_pool_get(CLAMPI_POOL_MSG);
        if (!m) { /* no memory: the message cannot wait anywhere; dropped */
            drop(&wire, (size_t)n);
            continue;
        }
        m->hdr.context = mc->context;
        m->hdr.source = st.MPI_SOURCE;
        m->hdr.tag = st.MPI_TAG;
        m->hdr.bytes = (uint64_t)n;
        m->wire = wire;
        m->carried = 1;
        clampi_match_key k = {mc->context, st.MPI_SOURCE, st.MPI_TAG};
        uintptr_t got;
        int rc = clampi_matcher_arrive(mc->matcher, k, (uintptr_t)m, &got);
        if (rc == 1) {
            left_queue(mc);
            native_adapt(mc, clampi_matcher_last_depth(mc->matcher));
            out[nout++] = (matched){(clampi_mreq *)got, m};
        } else if (rc == 0) {
            mc->unexpected++;
        } else {
            clampi_carrier_discard(m);
        }
    }
    return nout;
}

/* One batch; returns 1 if MPI may hold more (the batch was full). */
static int pull_and_receive(clampi_mcomm *mc) {
    matched got[PULL_BATCH];
    int drained = 1;
    lock(mc);
    int n = mc->posted ? pull(mc, got, &drained) : 0;
    clampi_matcher_progress(mc->matcher); /* hot caching */
    unlock(mc);
    for (int i = 0; i < n; i++) clampi_carrier_mrecv(got[i].r, got[i].m);
    return !drained;
}

void clampi_carrier_progress(void) {
    if (!clampi_carrier_pending()) return; /* counts receives in flight too */
    if (pthread_mutex_trylock(&carriers_lock) == 0) {
        int n = atomic_load(&clampi_carrier_n.ncarriers);
        for (int i = 0; i < n; i++)
            if (carriers[i]->posted) pull_and_receive(carriers[i]);
        pthread_mutex_unlock(&carriers_lock);
    }
    test_flight();
}

/* ---- the calls -------------------------------------------------------------------------- */
/* A blocking MPI operation on request q, made without blocking inside MPI while clampi
 * holds receives. */
int clampi_carrier_spin(MPI_Request *q, MPI_Status *status) {
    /* nothing of clampi's waits for a peer (a collective every process entered in its
     * nonblocking form, a barrier's message): MPI's own wait, a test loop only otherwise */
    if (!clampi_carrier_pending()) return PMPI_Wait(q, status);
    for (unsigned spins = 0;;) {
        int flag = 0, err = PMPI_Test(q, &flag, status);
        if (err != MPI_SUCCESS || flag) return err;
        clampi_msg_progress();
        clampi_msg_pause(&spins);
    }
}

int clampi_msg_mpi_send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, int mode,
                        MPI_Request *request) {
    if (request || !clampi_carrier_pending()) switch (mode) {
        case CLAMPI_SEND_SYNC:
            return request ? PMPI_Issend(buf, count, type, dest, tag, comm, request)
                           : PMPI_Ssend(buf, count, type, dest, tag, comm);
        case CLAMPI_SEND_READY:
            return request ? PMPI_Irsend(buf, count, type, dest, tag, comm, request)
                           : PMPI_Rsend(buf, count, type, dest, tag, comm);
        default:
            return request ? PMPI_Isend(buf, count, type, dest, tag, comm, request)
                           : PMPI_Send(buf, count, type, dest, tag, comm);
        }
    MPI_Request q;
    int err = mode == CLAMPI_SEND_SYNC    ? PMPI_Issend(buf, count, type, dest, tag, comm, &q)
              : mode == CLAMPI_SEND_READY ? PMPI_Irsend(buf, count, type, dest, tag, comm, &q)
                                          : PMPI_Isend(buf, count, type, dest, tag, comm, &q);
    return err != MPI_SUCCESS ? err : clampi_carrier_spin(&q, MPI_STATUS_IGNORE);
}

int clampi_msg_mpi_recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                        MPI_Request *request, MPI_Status *status) {
    if (request) return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    if (!clampi_carrier_pending()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
    MPI_Request q;
    int err = PMPI_Irecv(buf, count, type, source, tag, comm, &q);
    return err != MPI_SUCCESS ? err : clampi_carrier_spin(&q, status);
}

/* A blocking send while clampi holds receives: MPI_Isend, tested while clampi takes messages. */
static int clampi_carrier_send_spin(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                                    int sync) {
    MPI_Request q;
    int err = sync ? CLAMPI_WIRE(PMPI_Issend(buf, count, type, dest, tag, mc->wire, &q))
                   : CLAMPI_WIRE(PMPI_Isend(buf, count, type, dest, tag, mc->wire, &q));
    return err != MPI_SUCCESS ? err : clampi_carrier_spin(&q, MPI_STATUS_IGNORE);
}

/* ---- collectives clampi makes (enabling, disabling) and the preload's wrappers ---------- */
static _Atomic int carrier_job = -1; /* not decided yet */
static _Atomic int auto_preload;     /* the preload turned matching on from the environment */

void clampi_carrier_auto_preload(void) {
    atomic_store(&auto_preload, 1);
    atomic_store(&carrier_job, -1);
}

/* auto in the job: MPI under the preload's CLAMPI_MATCH, with persistent handles */
static int auto_job_is_mpi(void) { return atomic_load(&auto_preload) && clampi_mreq_handles_persistent(); }

int clampi_carrier_job(void) {
    int s = atomic_load_explicit(&carrier_job, memory_order_relaxed);
    if (s < 0) {
        s = clampi_carrier_choice_is_mpi(clampi_opt_process(CLAMPI_OPT_MATCH_CARRIER).u, auto_job_is_mpi);
        atomic_store(&carrier_job, s);
    }
    return s;
}

/* MPI_Barrier on an intracommunicator the MPI carrier holds: a dissemination barrier of
 * empty messages (tag tag_ub) on the program's own communicator, whose point-to-point space
 * is otherwise unused (the program's messages travel on the wire; the preload carries every
 * point-to-point call, MPI-4's large-count forms and MPI_Isendrecv included). Like the MPI's
 * nonblocking barrier it lets clampi take messages while it waits, and it costs what a
 * blocking barrier does: 2 ranks, Open MPI 4.1 0.13 us (MPI_Ibarrier + wait 0.21, MPI_Barrier
 * 0.13). Every process of comm decides alike (the carrier and the communicator's kind are
 * the same on all), so its messages never meet a barrier of the MPI's. */
int clampi_carrier_barrier_msgs(clampi_mcomm *mc) {
    const int P = mc->size, me = mc->rank;
    for (int d = 1; d < P; d <<= 1) {
        MPI_Request q[2];
        int err = PMPI_Irecv(NULL, 0, MPI_BYTE, (me - d + P) % P, mc->tag_ub, mc->comm, &q[0]);
        if (err != MPI_SUCCESS) return err;
        err = PMPI_Isend(NULL, 0, MPI_BYTE, (me + d) % P, mc->tag_ub, mc->comm, &q[1]);
        if (err == MPI_SUCCESS) err = clampi_carrier_spin(&q[1], MPI_STATUS_IGNORE);
        /* the peer's message is taken even after a failed send: none is left for a later barrier */
        int rerr = clampi_carrier_spin(&q[0], MPI_STATUS_IGNORE);
        if (err == MPI_SUCCESS) err = rerr;
        if (err != MPI_SUCCESS) return err;
    }
    return MPI_SUCCESS;
}

int clampi_carrier_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
    if (!clampi_carrier_job()) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    MPI_Request r;
    int err = PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &r);
    return err != MPI_SUCCESS ? err : clampi_carrier_spin(&r, MPI_STATUS_IGNORE);
}

/* clampi's private copy of comm (the wire), WITHOUT the program's attributes: MPI_Comm_dup /
 * MPI_Comm_idup copy them, running the program's copy callbacks on clampi's communicator, and
 * its delete callbacks when the wire is freed -- inside CMPIX_Comm_disable, under enable_lock,
 * where a callback's own MPI_Comm_free of a clampi communicator deadlocks (mpi4py's
 * test_attributes). MPI_Comm_split copies no attributes; it blocks, so clampi's queued
 * receives go to MPI first, as for every blocking communicator creation. */
int clampi_carrier_dup(MPI_Comm comm, MPI_Comm *out) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    clampi_carrier_release();
    return PMPI_Comm_split(comm, 0, rank, out);
}

static clampi_match_key key_of(const clampi_mcomm *mc, int source, int tag) {
    return (clampi_match_key){mc->context, source == MPI_ANY_SOURCE ? CLAMPI_MATCH_ANY_SOURCE : source,
                              tag == MPI_ANY_TAG ? CLAMPI_MATCH_ANY_TAG : tag};
}

/* The first message clampi took that matches (mc locked), removed; NULL if none. */
static clampi_msg *take_unexpected(clampi_mcomm *mc, clampi_match_key k) {
    uintptr_t found;
    if (!mc->unexpected || !clampi_matcher_probe(mc->matcher, k, 1, &found)) return NULL;
    mc->unexpected--;
    return (clampi_msg *)found;
}

/* A receive into MPI's own queue (mc locked on entry, unlocked on return). */
static int native_recv(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                       MPI_Request *request, MPI_Status *status) {
    int err;
    if (request) {
        err = CLAMPI_WIRE(PMPI_Irecv(buf, count, type, source, tag, mc->wire, request));
        if (err == MPI_SUCCESS && source != MPI_PROC_NULL) clampi_carrier_track(*request, mc);
        unlock(mc);
        return err;
    }
    if (source == MPI_PROC_NULL) { /* completes at once: MPI's blocking call, no spin */
        unlock(mc);
        return CLAMPI_WIRE(PMPI_Recv(buf, count, type, source, tag, mc->wire, status));
    }
    if (!mc->threaded) {
        unlock(mc);
        if (!clampi_carrier_pending())
            return native_counted(mc, source, CLAMPI_WIRE(PMPI_Recv(buf, count, type, source, tag, mc->wire, status)));
    }
    /* posted before the lock goes: another thread's progress must not take its message */
    MPI_Request q;
    err = CLAMPI_WIRE(PMPI_Irecv(buf, count, type, source, tag, mc->wire, &q));
    if (mc->threaded) unlock(mc);
    if (err != MPI_SUCCESS) return err;
    return native_counted(mc, source,
                          clampi_carrier_pending() ? clampi_carrier_spin(&q, status) : PMPI_Wait(&q, status));
}

/* Arguments clampi's queue can hold (MPI checks the rest when the receive goes to it). */
static int queueable(const clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int source, int tag,
                     clampi_type_info *tf) {
    if (count < 0 || type == MPI_DATATYPE_NULL || clampi_msg_type_facts(type, tf) != 0) return 0;
    if (!buf && count && tf->size && tf->true_lb == 0) return 0;
    return (source == MPI_ANY_SOURCE || (source >= 0 && source < mc->size)) &&
           (tag == MPI_ANY_TAG || (tag >= 0 && tag <= mc->tag_ub));
}

static int clampi_carrier_recv_any(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                                   MPI_Request *request, MPI_Status *status) {
    clampi_match_key k = key_of(mc, source, tag);
    clampi_type_info tf;
    int checked = 0;
    lock(mc);
    if (source != MPI_PROC_NULL && mc->unexpected) { /* a bad receive must not take a message */
        if (!queueable(mc, buf, count, type, source, tag, &tf))
            return native_recv(mc, buf, count, type, source, tag, request, status); /* MPI says what */
        checked = 1;
    }
    clampi_msg *m = source == MPI_PROC_NULL ? NULL : take_unexpected(mc, k);
    if (!m && (source == MPI_PROC_NULL || (!mc->posted && (!request || clampi_carrier_native_room(mc)))))
        return native_recv(mc, buf, count, type, source, tag, request, status);
    if (!checked && !queueable(mc, buf, count, type, source, tag, &tf))
        return native_recv(mc, buf, count, type, source, tag, request, status); /* MPI says what is wrong */
    clampi_mreq *r;
    int err = clampi_mreq_create_ex(mc, 1, request == NULL, buf, count, type, &tf, &r);
    if (err == MPI_SUCCESS) {
        r->post_source = source;
        r->post_tag = tag;
    }
    if (err != MPI_SUCCESS) {
        unlock(mc);
        if (m) clampi_carrier_discard(m); /* lost: reported */
        return clampi_msg_raise(mc->comm, err, NULL);
    }
    clampi_msg_layout(r, count, &tf);
    int queued = 0;
    if (!m) {
        uintptr_t got;
        int rc = clampi_matcher_post(mc->matcher, k, (uintptr_t)r, &got);
        if (rc == 1) {
            mc->unexpected--;
            m = (clampi_msg *)got;
        } else if (rc == 0) {
            mc->posted++;
            atomic_fetch_add(&clampi_carrier_n.pending, 1);
            queued = 1;
        } else {
            r->error = MPI_ERR_NO_MEM;
            clampi_msg_finish(r);
        }
    }
    unlock(mc);
    if (queued) clampi_msg_queued_recv(mc);
    if (m) clampi_carrier_mrecv(r, m);
    if (request) { /* no progress here: see docs/matching.md, "Windows of large messages" */
        *request = r->mpi;
        return MPI_SUCCESS;
    }
    int e = clampi_mreq_wait_internal(r, status);
    return e == MPI_SUCCESS ? MPI_SUCCESS : clampi_msg_raise(mc->comm, e, "receive failed");
}

static int clampi_carrier_probe(clampi_mcomm *mc, int source, int tag, int remove, int *flag, clampi_msg **out,
                                MPI_Status *status) {
    clampi_match_key k = key_of(mc, source, tag);
    clampi_msg_progress();
    /* clampi's posted receives take what has arrived before a probe sees it: all of it */
    while (pull_and_receive(mc)) {}
    lock(mc);
    uintptr_t found;
    *flag = mc->unexpected && clampi_matcher_probe(mc->matcher, k, remove, &found);
    if (*flag) {
        clampi_msg *m = (clampi_msg *)found;
        if (remove) {
            mc->unexpected--;
            *out = m;
        }
        status->MPI_SOURCE = m->hdr.source;
        status->MPI_TAG = m->hdr.tag;
        PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)m->hdr.bytes);
        PMPI_Status_set_cancelled(status, 0);
        unlock(mc);
        return MPI_SUCCESS;
    }
    int err;
    if (mc->posted) { /* a message MPI got since would be a posted receive's first: next time */
        unlock(mc);
        return MPI_SUCCESS;
    }
    if (!remove) {
        err = CLAMPI_WIRE(PMPI_Iprobe(source, tag, mc->wire, flag, status));
    } else {
        MPI_Message wire;
        err = CLAMPI_WIRE(PMPI_Improbe(source, tag, mc->wire, flag, &wire, status));
        if (err == MPI_SUCCESS && *flag) {
            clampi_msg *m = clampi_pool_get(CLAMPI_POOL_MSG);
            MPI_Count n = 0;
            PMPI_Get_elements_x(status, MPI_BYTE, &n);
            if (m) {
                m->hdr.context = mc->context;
                m->hdr.source = status->MPI_SOURCE;
                m->hdr.tag = status->MPI_TAG;
                m->hdr.bytes = (uint64_t)n;
                m->wire = wire;
                m->carried = 1;
                *out = m;
                native_count(mc);
            } else {
                drop(&wire, (size_t)n);
                *flag = 0;
                err = MPI_ERR_NO_MEM;
            }
        }
    }
    unlock(mc);
    return err;
}

static int clampi_carrier_cancel(clampi_mreq *r) {
    clampi_mcomm *mc = r->mc;
    lock(mc);
    int rc = clampi_matcher_cancel(mc->matcher, (uintptr_t)r);
    if (rc == 1) { left_queue(mc); }
    unlock(mc);
    if (rc != 1 && r->wire_fill) { /* handed to MPI (release, MPI_Comm_free): MPI cancels it */
        pthread_mutex_lock(&flight_lock);
        if (r->wire_req != MPI_REQUEST_NULL) PMPI_Cancel(&r->wire_req); /* completes cancelled in test_flight */
        pthread_mutex_unlock(&flight_lock);
    }
    return rc;
}

/* A receive in clampi's queue on a revoked communicator (revoke.c): it fails. */
static void fail_one(uintptr_t cookie, void *arg) {
    clampi_mreq *r = (clampi_mreq *)cookie;
    clampi_mcomm *mc = r->mc;
    left_queue(mc);
    r->error = *(const int *)arg;
    clampi_msg_finish(r);
}

static void clampi_carrier_fail_posted(clampi_mcomm *mc, int code) {
    lock(mc);
    if (mc->matcher) clampi_matcher_drain(mc->matcher, 0, fail_one, &code);
    unlock(mc);
}

/* ---- the carrier's table (carrier_ops.h) -------------------------------------------- */
/* A send on the wire: MPI's own send, unless blocking while clampi holds receives. */
static inline int carrier_send(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                               int sync, MPI_Request *request) {
    if (request)
        return sync ? CLAMPI_WIRE(PMPI_Issend(buf, count, type, dest, tag, mc->wire, request))
                    : CLAMPI_WIRE(PMPI_Isend(buf, count, type, dest, tag, mc->wire, request));
    if (!clampi_carrier_pending())
        return sync ? CLAMPI_WIRE(PMPI_Ssend(buf, count, type, dest, tag, mc->wire))
                    : CLAMPI_WIRE(PMPI_Send(buf, count, type, dest, tag, mc->wire));
    return clampi_carrier_send_spin(mc, buf, count, type, dest, tag, sync);
}
/* Depth 0: one thread, and clampi holds no receive and no taken message of mc, so MPI's
 * own call on the wire keeps MPI's order (receives, probes, exchanges). */
static inline int holds_nothing(const clampi_mcomm *mc) { return !mc->threaded && !mc->posted && !mc->unexpected; }

/* A receive; request NULL: blocking, status filled. Any arguments: what clampi's queue
 * cannot hold (MPI_PROC_NULL, bad input) goes to MPI, errors raised on mc->comm. Inline:
 * at depth 0 in one thread (nothing of clampi's ahead, room in MPI's queue) it is MPI's
 * own receive after a few loads. */
static inline int carrier_recv(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                               MPI_Request *request, MPI_Status *status) {
    if (holds_nothing(mc)) {
        if (request) {
            if (clampi_carrier_native_room(mc)) {
                int err = CLAMPI_WIRE(PMPI_Irecv(buf, count, type, source, tag, mc->wire, request));
                if (err == MPI_SUCCESS && source != MPI_PROC_NULL) clampi_carrier_track(*request, mc);
                return err;
            }
        } else if (!clampi_carrier_pending()) {
            return native_counted(mc, source, CLAMPI_WIRE(PMPI_Recv(buf, count, type, source, tag, mc->wire, status)));
        }
    }
    return clampi_carrier_recv_any(mc, buf, count, type, source, tag, request, status);
}

/* The preload's sends and receives: any arguments; MPI checks them on the wire (its errors
 * reach the program's communicator through the wire's handler). Ready mode: the receive is
 * posted (the program's promise); a standard send serves. */
static int entry_send(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag) {
    return carrier_send(mc, buf, count, type, dest, tag, 0, NULL);
}

static int entry_isend(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                       MPI_Request *request) {
    return carrier_send(mc, buf, count, type, dest, tag, 0, request);
}

static int entry_send_mode(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag, int mode,
                           MPI_Request *request) {
    return carrier_send(mc, buf, count, type, dest, tag, mode == CLAMPI_SEND_SYNC, request);
}

static int entry_recv(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                      MPI_Status *status) {
    return carrier_recv(mc, buf, count, type, source, tag, NULL, status);
}

static int entry_irecv(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                       MPI_Request *request) {
    return carrier_recv(mc, buf, count, type, source, tag, request, MPI_STATUS_IGNORE);
}

/* A probe while clampi holds nothing of mc (the depth-0 receive's condition, as
 * carrier_recv): MPI's own on the wire; a matched one's message is then MPI's, which
 * MPI_Mrecv receives. Otherwise clampi's probe serves (its progress first; a matched
 * probe's message taken into a handle of clampi's, received through a request of clampi's):
 * 1.5-2.3x a plain round trip at depth 0. */
static int entry_probe(clampi_mcomm *mc, int source, int tag, int *flag, MPI_Message *message, MPI_Status *status) {
    if (!holds_nothing(mc)) return CLAMPI_CARRIER_NOT_NATIVE;
    int err;
    if (flag) {
        err = CLAMPI_WIRE(message ? PMPI_Improbe(source, tag, mc->wire, flag, message, status)
                                  : PMPI_Iprobe(source, tag, mc->wire, flag, status));
        if (err == MPI_SUCCESS && *flag && message && source != MPI_PROC_NULL) native_count(mc);
        return err;
    }
    if (clampi_carrier_pending()) return CLAMPI_CARRIER_NOT_NATIVE; /* clampi's waits must pull */
    if (!message) return CLAMPI_WIRE(PMPI_Probe(source, tag, mc->wire, status));
    return native_counted(mc, source, CLAMPI_WIRE(PMPI_Mprobe(source, tag, mc->wire, message, status)));
}

/* An exchange while clampi holds nothing of mc and no receive anywhere: MPI's own on the
 * wire (clampi's receive and send, then its wait: 1.5-1.85x a plain exchange at depth 0). */
static int entry_sendrecv(clampi_mcomm *mc, const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                          int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                          int replace, MPI_Status *status) {
    if (!holds_nothing(mc) || clampi_carrier_pending()) return CLAMPI_CARRIER_NOT_NATIVE;
    int err = CLAMPI_WIRE(replace ? PMPI_Sendrecv_replace((void *)sendbuf, sendcount, sendtype, dest, sendtag, source,
                                                          recvtag, mc->wire, status)
                                  : PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                                                  recvtype, source, recvtag, mc->wire, status));
    return native_counted(mc, source, err);
}

/* A persistent request on the wire may be started after the program freed its communicator
 * (MPI keeps the wire for it): the wire never becomes a spare another duplicate would use. */
static int wire_persistent(clampi_mcomm *mc, int err) {
    if (err == MPI_SUCCESS) atomic_store(&mc->wire_in_doubt, 1);
    return err;
}

/* A persistent send: MPI's own on the wire, as every send of this carrier (a ready send a
 * standard one: the receive may wait in clampi's queue, not MPI's). */
static int entry_send_init(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, int dest, int tag, int mode,
                           MPI_Request *request) {
    return wire_persistent(mc, CLAMPI_WIRE(mode == CLAMPI_SEND_SYNC
                                               ? PMPI_Ssend_init(buf, count, type, dest, tag, mc->wire, request)
                                               : PMPI_Send_init(buf, count, type, dest, tag, mc->wire, request)));
}

/* A persistent receive: MPI's own on the wire, started there while a receive would go to
 * MPI's queue (carrier_recv's depth-0 condition) and tracked as MPI_Irecv's are; otherwise
 * clampi's receive serves that start (persist.c). */
static int entry_recv_init(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, int source, int tag,
                           MPI_Request *request) {
    return wire_persistent(mc, CLAMPI_WIRE(PMPI_Recv_init(buf, count, type, source, tag, mc->wire, request)));
}

static int entry_start_recv(clampi_mcomm *mc, MPI_Request *request) {
    if (!holds_nothing(mc) || !clampi_carrier_native_room(mc)) return CLAMPI_CARRIER_NOT_NATIVE;
    int err = CLAMPI_WIRE(PMPI_Start(request));
    if (err == MPI_SUCCESS) clampi_carrier_track(*request, mc);
    return err;
}

static int checked_send(clampi_mcomm *mc, const void *buf, int count, MPI_Datatype type, const clampi_type_info *tf,
                        size_t bytes, int dest, int tag, int sync, MPI_Request *request) {
    (void)tf, (void)bytes;
    return carrier_send(mc, buf, count, type, dest, tag, sync, request);
}

static int checked_recv(clampi_mcomm *mc, void *buf, int count, MPI_Datatype type, const clampi_type_info *tf,
                        int source, int tag, MPI_Request *request, MPI_Status *status) {
    (void)tf;
    return carrier_recv(mc, buf, count, type, source, tag, request, status);
}

static int enable(clampi_mcomm *mc, unsigned native_base, unsigned native_cap) {
    return clampi_carrier_enable(mc, native_base, native_cap); /* collective unless start made the wire */
}

static void get_info(const clampi_mcomm *mc, MPI_Info info) {
    char s[32];
    PMPI_Info_set(info, CLAMPI_MATCH_CARRIER_KEY, "mpi");
    snprintf(s, sizeof s, "%u", mc->native_base);
    PMPI_Info_set(info, CLAMPI_MATCH_NATIVE_DEPTH_KEY, s);
    snprintf(s, sizeof s, "%u", mc->native_cap);
    PMPI_Info_set(info, CLAMPI_MATCH_NATIVE_DEPTH_MAX_KEY, s);
}

const clampi_carrier_ops clampi_carrier_mpi_ops = {
    .name = "mpi",
    .prepare = prepare,
    .enable = enable,
    .start = start,
    .wire_slots = wire_slots,
    .wire_agreed = wire_agreed,
    .entry_send = entry_send,
    .entry_isend = entry_isend,
    .entry_send_mode = entry_send_mode,
    .entry_recv = entry_recv,
    .entry_irecv = entry_irecv,
    .entry_probe = entry_probe,
    .entry_sendrecv = entry_sendrecv,
    .entry_send_init = entry_send_init,
    .entry_recv_init = entry_recv_init,
    .entry_start_recv = entry_start_recv,
    .send = checked_send,
    .recv = checked_recv,
    .probe = clampi_carrier_probe,
    .mrecv = clampi_carrier_mrecv,
    .cancel = clampi_carrier_cancel,
    .fail_posted = clampi_carrier_fail_posted,
    .barrier = NULL,                 /* nothing reads the duplicate before the communicator is clampi's */
    .retire = clampi_carrier_retire, /* receives in clampi's queue go to MPI, which finishes them */
    .disable = clampi_carrier_disable,
    .release = clampi_carrier_wire_free,
    .get_info = get_info,
};
