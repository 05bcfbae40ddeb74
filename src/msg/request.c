/* clampi requests, and the MPI handles the program gets for them:
 *  - persistent (default): a pooled inactive persistent MPI request (MPI_Recv_init from
 *    MPI_PROC_NULL on MPI_COMM_SELF). No MPI call per message: clampi's completion calls
 *    (complete.c, the preload's and libclampi's MPI_Wait...) recognise the handle and
 *    complete the request themselves; the handle goes back to the pool.
 *  - generalized: an MPI generalized request, which MPI's own waits complete too (for code
 *    that calls PMPI_Wait directly, e.g. MPI's Fortran bindings); auto picks it when those
 *    bindings are in the process and clampi's own Fortran entry points are not
 *    (CLAMPI_MATCH_HANDLES).
 * Internal requests (blocking calls) have no handle at all: the caller waits on `finished`.
 * All come from pool.c's free list. */
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "msg/msg_internal.h"

/* MPI_Request handle -> clampi_mreq (the completion calls need the request's
 * communicator and error before MPI frees it). Chained hash under one lock. */
#define TABLE_SIZE 4096
static clampi_mreq *table[TABLE_SIZE];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic long clampi_mreq_nlive; /* requests MPI still has: the completion calls' fast path */

static unsigned slot_of(MPI_Request h) { return (unsigned)(clampi_msg_handle_mix(h) >> 52) & (TABLE_SIZE - 1); }

static void table_insert(clampi_mreq *r) {
    unsigned s = slot_of(r->mpi);
    pthread_mutex_lock(&table_lock);
    r->table_next = table[s];
    table[s] = r;
    pthread_mutex_unlock(&table_lock);
}

static void table_remove(clampi_mreq *r) {
    unsigned s = slot_of(r->mpi);
    pthread_mutex_lock(&table_lock);
    for (clampi_mreq **p = &table[s]; *p; p = &(*p)->table_next)
        if (*p == r) {
            *p = r->table_next;
            break;
        }
    pthread_mutex_unlock(&table_lock);
}

/* ---- handles ------------------------------------------------------------------------- */
static _Atomic int handle_kind; /* 0: not decided yet, 1: persistent, 2: generalized */
static pthread_once_t kind_once = PTHREAD_ONCE_INIT;

/* An MPI's own Fortran binding is loaded (a Fortran MPI_WAIT defined outside clampi's
 * library): it waits with PMPI_Wait, past clampi's MPI_Wait. The preload defines the
 * Fortran entry points itself (pmpi/fortran_support.h), which wait through clampi's. */
static int foreign_fortran_wait(void) {
    static const char *const names[] = {"mpi_wait_", "MPI_WAIT"};
    Dl_info self, found;
    if (!dladdr((void *)foreign_fortran_wait, &self)) return 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *p = dlsym(RTLD_DEFAULT, names[i]);
        if (p && dladdr(p, &found) && found.dli_fbase != self.dli_fbase) return 1;
    }
    return 0;
}

static void decide_kind(void) {
    unsigned long long v = clampi_opt_process(CLAMPI_OPT_MATCH_HANDLES).u; /* auto|persistent|generalized */
    if (v == 0) v = foreign_fortran_wait() ? 2 : 1;
    atomic_store_explicit(&handle_kind, (int)v, memory_order_release);
}

int clampi_mreq_handles_persistent(void) {
    int k = atomic_load_explicit(&handle_kind, memory_order_acquire); /* decided: no pthread_once call */
    if (__builtin_expect(k == 0, 0)) {
        pthread_once(&kind_once, decide_kind);
        k = atomic_load_explicit(&handle_kind, memory_order_acquire);
    }
    return k == 1;
}

/* Inactive persistent requests to MPI_PROC_NULL: real MPI handles (MPI_Request_c2f, a
 * stray PMPI_Wait return at once), made once and reused. */
static struct {
    pthread_mutex_t lock;
    MPI_Request *h;
    int n, cap;
} shells = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

/* Each thread keeps a few without a lock (a handle is a value: any thread may return it). */
#define SHELLS_LOCAL 32
static _Thread_local CLAMPI_MSG_TLS struct {
    MPI_Request h[SHELLS_LOCAL];
    int n;
} my_shells;

static int shell_get(MPI_Request *h) {
    if (my_shells.n > 0) {
        *h = my_shells.h[--my_shells.n];
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&shells.lock);
    int have = shells.n > 0;
    if (have) *h = shells.h[--shells.n];
    pthread_mutex_unlock(&shells.lock);
    return have ? MPI_SUCCESS : PMPI_Recv_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, h);
}

static void shell_put(MPI_Request h) {
    if (my_shells.n < SHELLS_LOCAL) {
        my_shells.h[my_shells.n++] = h;
        return;
    }
    pthread_mutex_lock(&shells.lock);
    if (shells.n == shells.cap) {
        int cap = shells.cap ? 2 * shells.cap : 64;
        MPI_Request *g = realloc(shells.h, sizeof *g * (size_t)cap);
        if (g) shells.h = g, shells.cap = cap;
    }
    if (shells.n < shells.cap) h = (shells.h[shells.n++] = h, MPI_REQUEST_NULL);
    pthread_mutex_unlock(&shells.lock);
    if (h != MPI_REQUEST_NULL) PMPI_Request_free(&h); /* no memory to keep it */
}

/* The pool and this thread's cache (other threads' few stay: inactive, harmless). */
void clampi_mreq_shells_free(void) {
    while (my_shells.n > 0) PMPI_Request_free(&my_shells.h[--my_shells.n]);
    pthread_mutex_lock(&shells.lock);
    for (int i = 0; i < shells.n; i++) PMPI_Request_free(&shells.h[i]);
    free(shells.h);
    shells.h = NULL;
    shells.n = shells.cap = 0;
    pthread_mutex_unlock(&shells.lock);
}

/* The handle of a finished request is done with: back to the pool (persistent) or freed by
 * MPI (generalized: complete already; free_fn does the bookkeeping). Drops MPI's reference. */
static void release_handle(clampi_mreq *r) {
    MPI_Request h = r->mpi;
    if (!r->shell) {
        PMPI_Request_free(&h);
        return;
    }
    table_remove(r);
    atomic_fetch_sub(&clampi_mreq_nlive, 1);
    shell_put(h);
    clampi_mreq_unpin(r);
}

void clampi_mreq_complete(clampi_mreq *r, MPI_Request *handle) {
    *handle = MPI_REQUEST_NULL;
    release_handle(r);
}

void clampi_mreq_freed_and_finished(clampi_mreq *r) { release_handle(r); }

clampi_mreq *clampi_mreq_pin(MPI_Request req) {
    if (req == MPI_REQUEST_NULL) return NULL;
    unsigned s = slot_of(req);
    pthread_mutex_lock(&table_lock);
    clampi_mreq *r = table[s];
    while (r && r->mpi != req) r = r->table_next;
    if (r) atomic_fetch_add(&r->refs, 1);
    pthread_mutex_unlock(&table_lock);
    return r;
}

/* clampi_mreq_pin of n handles under one lock. The lookups' cache misses (a wait's
 * requests, cold after the program's own work) overlap: the table slots and the requests
 * are prefetched in passes that make no locked access between the loads. */
int clampi_mreq_pin_many(int n, const MPI_Request *reqs, clampi_mreq **out) {
    for (int i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL) __builtin_prefetch(&table[slot_of(reqs[i])]);
    int found = 0;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL && table[slot_of(reqs[i])]) __builtin_prefetch(table[slot_of(reqs[i])]);
    for (int i = 0; i < n; i++) {
        clampi_mreq *r = NULL;
        if (reqs[i] != MPI_REQUEST_NULL) {
            r = table[slot_of(reqs[i])];
            while (r && r->mpi != reqs[i]) r = r->table_next;
        }
        out[i] = r;
    }
    for (int i = 0; i < n; i++)
        if (out[i]) atomic_fetch_add(&out[i]->refs, 1), found++;
    pthread_mutex_unlock(&table_lock);
    return found;
}

void clampi_mreq_unpin(clampi_mreq *r) {
    if (atomic_fetch_sub(&r->refs, 1) == 1) {
        clampi_mcomm *mc = r->internal ? NULL : r->mc;
        if (r->type_dup) PMPI_Type_free(&r->type);
        free(r->tmp);
        clampi_pool_put(CLAMPI_POOL_MREQ, r);
        if (mc) clampi_msg_comm_unref(mc); /* a freed communicator may go now (retire.c) */
    }
}

void clampi_mreq_detach(clampi_mreq *r) {
    if (r->mc && !r->internal) clampi_msg_comm_unref(r->mc);
    r->mc = NULL;
}

void clampi_msg_bottom_type(int count, MPI_Datatype type, MPI_Datatype *shifted, void **base) {
    MPI_Aint tlb, textent, disp;
    PMPI_Type_get_true_extent(type, &tlb, &textent);
    disp = -tlb;
    PMPI_Type_create_struct(1, &count, &disp, &type, shifted);
    PMPI_Type_commit(shifted);
    *base = (void *)tlb;
}

int clampi_mreq_query(void *extra, MPI_Status *status) {
    clampi_mreq *r = extra;
    status->MPI_SOURCE = r->is_recv ? r->source : MPI_ANY_SOURCE;
    status->MPI_TAG = r->is_recv ? r->tag : MPI_ANY_TAG;
    /* Success to MPI, whatever r->error: MPI would raise it on MPI_COMM_WORLD (complete.c
     * raises it on the request's communicator and sets MPI_ERROR itself). */
    status->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_cancelled(status, r->cancelled);
    PMPI_Status_set_elements_x(status, MPI_BYTE, r->is_recv ? (MPI_Count)r->bytes : 0);
    return MPI_SUCCESS;
}

static int free_fn(void *extra) {
    clampi_mreq *r = extra;
    table_remove(r);
    atomic_fetch_sub(&clampi_mreq_nlive, 1);
    clampi_mreq_unpin(r);
    return MPI_SUCCESS;
}

/* MPI_Cancel on a clampi request: a receive still in the posted queue is taken out and
 * completes as cancelled (at the next progress); anything else is left to complete. */
static int cancel_fn(void *extra, int complete) {
    clampi_mreq *r = extra;
    if (complete || !r->is_recv || !r->mc) return MPI_SUCCESS;
    if (r->mc->ops->cancel(r) == 1) {
        r->cancelled = 1;
        r->bytes = 0;
        clampi_msg_finish(r);
    }
    return MPI_SUCCESS;
}

#ifdef MPICH
static int poll_fn(void *extra, MPI_Status *status) {
    clampi_msg_progress_from_mpi();
    return MPI_SUCCESS;
}

/* MPICH's blocking wait on clampi requests: progress until all are complete. */
static int wait_fn(int count, void **states, double timeout, MPI_Status *status) {
    for (int i = 0; i < count; i++)
        while (!atomic_load(&((clampi_mreq *)states[i])->finished)) clampi_msg_progress();
    return MPI_SUCCESS;
}
#endif

/* MPICH invalidates a generalized request's handle when MPI_Request_free frees it before
 * it is complete (without running free_fn), and clampi then completed a dead handle
 * (MPI_Grequest_complete: MPI_ERR_REQUEST; MPICH's rqfree). So the handle is freed by the
 * later of the two: this call or the completion (clampi_msg_progress). */
int clampi_msg_request_free(MPI_Request *request) {
    clampi_mreq *r = request && clampi_mreq_live() ? clampi_mreq_pin(*request) : NULL;
    if (!r) {
        if (request && clampi_carrier_tracking()) clampi_carrier_forget(*request);
        return PMPI_Request_free(request);
    }
    *request = MPI_REQUEST_NULL;
    if (atomic_fetch_add(&r->handoff, 1) == 1) release_handle(r); /* complete already */
    clampi_mreq_unpin(r);
    return MPI_SUCCESS;
}

int clampi_mreq_create_ex(clampi_mcomm *mc, int is_recv, int internal, void *buf, int count, MPI_Datatype type,
                          const clampi_type_info *tf, clampi_mreq **out) {
    clampi_mreq *r = clampi_pool_get(CLAMPI_POOL_MREQ);
    if (!r) return MPI_ERR_NO_MEM;
    atomic_init(&r->refs, 1);
    r->is_recv = is_recv;
    r->internal = internal;
    r->mc = mc;
    r->comm = mc ? mc->comm : MPI_COMM_NULL;
    r->buf = buf;
    r->count = count;
    r->type = type;
    /* A nonblocking receive's derived type: clampi's duplicate (the program may free its
     * own before the receive completes). A blocking call's caller holds the type throughout. */
    if (is_recv && !internal && type != MPI_DATATYPE_NULL) {
        clampi_type_info q;
        if (!tf && clampi_msg_type_facts(type, &q) == 0) tf = &q;
        if (tf && !tf->predefined && PMPI_Type_dup(type, &r->type) == MPI_SUCCESS)
            r->type_dup = 1;
        else
            r->type = type;
    }
    r->source = MPI_ANY_SOURCE;
    r->tag = MPI_ANY_TAG;
    r->mpi = MPI_REQUEST_NULL;
    if (!internal && clampi_mreq_handles_persistent()) {
        int err = shell_get(&r->mpi);
        if (err != MPI_SUCCESS) {
            if (r->type_dup) PMPI_Type_free(&r->type);
            clampi_pool_put(CLAMPI_POOL_MREQ, r);
            return err;
        }
        r->shell = 1;
        atomic_fetch_add(&clampi_mreq_nlive, 1);
    } else if (!internal) {
#ifdef MPICH
        int err = MPIX_Grequest_start(clampi_mreq_query, free_fn, cancel_fn, poll_fn, wait_fn, r, &r->mpi);
#else
        int err = PMPI_Grequest_start(clampi_mreq_query, free_fn, cancel_fn, r, &r->mpi);
#endif
        if (err != MPI_SUCCESS) {
            if (r->type_dup) PMPI_Type_free(&r->type);
            clampi_pool_put(CLAMPI_POOL_MREQ, r);
            return err;
        }
        atomic_fetch_add(&clampi_mreq_nlive, 1);
    }
    if (!is_recv) clampi_msg_send_started();
    if (mc && !internal) clampi_msg_comm_ref(mc); /* a blocking call's own ends before any free */
    if (!internal) table_insert(r);
    *out = r;
    return MPI_SUCCESS;
}

int clampi_mreq_create(clampi_mcomm *mc, int is_recv, void *buf, int count, MPI_Datatype type, clampi_mreq **out) {
    return clampi_mreq_create_ex(mc, is_recv, 0, buf, count, type, NULL, out);
}

/* On MPI_COMM_WORLD: MPICH 4 and 5 answer a probe on MPI_COMM_SELF without entering their
 * progress engine, so a peer's passive-target lock on this process never got its answer
 * while this process waited in clampi (preload_match_carrier_ucx_recv_lets_peer_lock_through:
 * a blocking receive against a peer's lock/fetch-and-op/unlock). Rank 0 and tag 0, not the
 * wildcards, which a program may have asserted away (mpi_assert_no_any_source/_tag); a
 * probe only looks. A program without MPI_COMM_WORLD (sessions only) probes MPI_COMM_SELF. */
void clampi_msg_poke_mpi(void) {
    static int world = -1; /* read and set by any thread: atomically */
    int w = __atomic_load_n(&world, __ATOMIC_RELAXED);
    if (w < 0) {
        PMPI_Initialized(&w);
        __atomic_store_n(&world, w, __ATOMIC_RELAXED);
    }
    int flag;
    PMPI_Iprobe(0, 0, w ? MPI_COMM_WORLD : MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    clampi_msg_revocation_poll(); /* what that progress may have brought */
}

int clampi_mreq_wait_internal(clampi_mreq *r, MPI_Status *status) {
    unsigned spins = 0;
    while (!atomic_load_explicit(&r->finished, memory_order_acquire)) {
        clampi_msg_pause(&spins);
        if (spins % 16 == 0) clampi_msg_poke_mpi(); /* a peer's RMA on this process may need MPI's progress */
        clampi_msg_progress();
    }
    int e = r->error;
    if (status != MPI_STATUS_IGNORE) {
        clampi_mreq_query(r, status);
        if (e != MPI_SUCCESS) status->MPI_ERROR = e; /* as complete.c's single completions */
    }
    clampi_mreq_unpin(r);
    return e;
}
