/* Completion and progress of clampi's matched requests, whichever carrier moves them.
 *
 * How MPI's own waits reach this progress (so MPI's waits on other requests, and on clampi's
 * generalized requests, progress clampi's transfers without a progress thread):
 *  - MPICH: requests are made with MPIX_Grequest_start, whose poll function is
 *    clampi_msg_progress; MPICH calls it from MPI_Wait/MPI_Test on such requests.
 *  - Open MPI: clampi_msg_progress is one of the callbacks common/progress_hook.c runs from
 *    Open MPI's progress engine, which every MPI wait and test loop runs.
 *  - Elsewhere the UCX carrier's worker is progressed by the process's UCX progress service
 *    (transport_ucx.c).
 * A transfer that finishes inside UCX's callbacks only queues the request; clampi_msg_progress
 * marks it finished (and calls MPI_Grequest_complete for a generalized handle) outside them. */
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/flatten.h"
#include "common/options.h"
#include "common/progress_hook.h"
#include "common/stats.h"
#include "msg/msg_internal.h"
#include "services/finalize.h"
#include "topo/node.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static clampi_mreq *done_head, *done_tail;
static _Atomic long done_count; /* queued in done_head: progress skips the lock when 0 */
static _Thread_local CLAMPI_MSG_TLS int in_progress;

static _Atomic long sends_in_flight;
long clampi_msg_sends_in_flight(void) { return atomic_load(&sends_in_flight); }
void clampi_msg_send_started(void) { atomic_fetch_add(&sends_in_flight, 1); }

/* ---- completion ------------------------------------------------------------------ */
void clampi_msg_finish(clampi_mreq *r) {
    if (!r->is_recv) {
        free(r->tmp);
        r->tmp = NULL;
        atomic_fetch_sub(&sends_in_flight, 1);
    }
    if (r->internal) { /* its caller waits on `finished` (and may free r at once) */
        atomic_store_explicit(&r->finished, 1, memory_order_release);
        return;
    }
    if (r->shell) {                    /* no MPI call to make: finished now, no queue, unless ... */
        atomic_fetch_add(&r->refs, 1); /* r stays while this call touches it */
        atomic_store_explicit(&r->finished, 1, memory_order_release);
        if (atomic_fetch_add(&r->handoff, 1) == 1)
            r->done_kind = CLAMPI_DONE_RELEASE; /* ... the program freed it: its handle too */
        else if (atomic_fetch_sub(&r->refs, 1) == 1)
            r->done_kind = CLAMPI_DONE_UNPIN; /* ... a waiter took it meanwhile: the last reference */
        else
            return;
        /* Both release memory (MPI_Type_free, pools): not inside UCX's callbacks. */
    } else {
        r->done_kind = CLAMPI_DONE_GREQ;
    }
    r->done_next = NULL;
    pthread_mutex_lock(&done_lock);
    if (done_tail)
        done_tail->done_next = r;
    else
        done_head = r;
    done_tail = r;
    atomic_fetch_add_explicit(&done_count, 1, memory_order_relaxed);
    pthread_mutex_unlock(&done_lock);
}

/* Finished requests queued by UCX's callbacks: marked finished (generalized handles:
 * MPI_Grequest_complete first), their handles released if the program freed them. */
static void drain_done(void) {
    while (atomic_load_explicit(&done_count, memory_order_relaxed)) { /* a missed one: next progress */
        pthread_mutex_lock(&done_lock);
        clampi_mreq *r = done_head;
        if (r) {
            done_head = r->done_next;
            if (!done_head) done_tail = NULL;
            atomic_fetch_sub_explicit(&done_count, 1, memory_order_relaxed);
        }
        pthread_mutex_unlock(&done_lock);
        if (!r) break;
        if (r->done_kind == CLAMPI_DONE_UNPIN) { /* finish's own reference, the last */
            atomic_fetch_add(&r->refs, 1);
            clampi_mreq_unpin(r);
            continue;
        }
        if (r->done_kind == CLAMPI_DONE_RELEASE) { /* finish's reference kept for this */
            clampi_mreq_freed_and_finished(r);
            clampi_mreq_unpin(r);
            continue;
        }
        /* A generalized handle. Pinned: another thread's wait may free the request as soon
         * as MPI sees it complete; `finished` (MPICH's wait_fn) only after MPI knows. */
        atomic_fetch_add(&r->refs, 1);
        PMPI_Grequest_complete(r->mpi);
        atomic_store(&r->finished, 1);
        if (atomic_fetch_add(&r->handoff, 1) == 1) /* the program freed it (clampi_msg_request_free) */
            clampi_mreq_freed_and_finished(r);
        clampi_mreq_unpin(r);
    }
}

/* Inside MPI's own progress (Open MPI's hook, MPICH's generalized-request poll): no MPI
 * call may be made there, so the MPI carrier's pulls wait for clampi's own calls. */
static _Thread_local CLAMPI_MSG_TLS int in_mpi_hook;

void clampi_msg_progress(void) {
    if (in_progress) return;
    in_progress = 1;
    clampi_msg_ucx_progress();
    if (!in_mpi_hook && clampi_carrier_active()) clampi_carrier_progress();
    drain_done();
    /* Letting a retired communicator go frees MPI objects: not inside MPI's own progress. */
    if (!in_mpi_hook && atomic_load_explicit(&clampi_msg_retired_n, memory_order_relaxed)) clampi_msg_retired_sweep();
    in_progress = 0;
    /* Watched requests' conditions make MPI calls (progress again): not inside MPI's progress. */
    if (!in_mpi_hook && atomic_load_explicit(&clampi_msg_watches_n, memory_order_relaxed)) clampi_msg_watches_poll();
}

void clampi_msg_progress_from_mpi(void) {
    in_mpi_hook = 1;
    clampi_msg_progress();
    in_mpi_hook = 0;
}

void clampi_msg_reap(void) {
    if (in_progress || !atomic_load_explicit(&done_count, memory_order_relaxed)) return;
    in_progress = 1;
    drain_done();
    in_progress = 0;
}

/* ---- receiving ------------------------------------------------------------------- */
/* The first `bytes` (< one element) of a packed element into the element at dst, piece
 * by piece: MPI_Unpack cannot unpack part of an element. Nothing if the type has no
 * flattening (overlapping or huge typemap). */
static void unpack_partial(MPI_Datatype type, const char *data, size_t bytes, char *dst) {
    const clampi_flat *f = clampi_flat_get(type);
    for (size_t i = 0; f && i < f->n; i++) {
        const clampi_piece p = clampi_flat_piece(f, i);
        if (p.packed >= bytes) continue;
        size_t len = p.packed + p.len <= bytes ? p.len : bytes - p.packed;
        memcpy(dst + p.offset, data + p.packed, len);
    }
}

/* MPI_Pack / MPI_Unpack for any number of bytes: above INT_MAX, MPI-4's large-count forms
 * (an element of more than 2 GiB: the preload's MPI_Send_c of a derived type). Without
 * them the MPI's own call refuses the size. */
int clampi_msg_pack(const void *buf, int count, MPI_Datatype type, void *out, size_t bytes, MPI_Comm comm) {
#ifdef CLAMPI_MPI_HAS_PACK_C
    if (bytes > INT_MAX) {
        MPI_Count pos = 0;
        return PMPI_Pack_c(buf, count, type, out, (MPI_Count)bytes, &pos, comm);
    }
#endif
    int pos = 0;
    return PMPI_Pack(buf, count, type, out, bytes > INT_MAX ? -1 : (int)bytes, &pos, comm);
}

static int unpack(const void *data, size_t bytes, void *buf, int count, MPI_Datatype type) {
#ifdef CLAMPI_MPI_HAS_PACK_C
    if (bytes > INT_MAX) {
        MPI_Count pos = 0;
        return PMPI_Unpack_c(data, (MPI_Count)bytes, &pos, buf, count, type, MPI_COMM_SELF);
    }
#endif
    int pos = 0;
    return PMPI_Unpack(data, bytes > INT_MAX ? -1 : (int)bytes, &pos, buf, count, type, MPI_COMM_SELF);
}

/* Receive bytes from `data` (packed) into r's buffer: at most r->capacity (truncation). */
void clampi_msg_unpack_into(clampi_mreq *r, const void *data, size_t bytes) {
    size_t n = bytes < r->capacity ? bytes : r->capacity;
    if (r->contig) {
        if (n) memcpy((char *)r->buf + r->contig_offset, data, n);
        return;
    }
    MPI_Count tsize = 0;
    MPI_Aint lb, extent;
    PMPI_Type_size_x(r->type, &tsize);
    PMPI_Type_get_extent(r->type, &lb, &extent);
    int whole = tsize > 0 ? (int)(n / (size_t)tsize) : 0;
    if (whole && r->buf) {
        unpack(data, n, r->buf, whole, r->type);
    } else if (whole) { /* MPI_BOTTOM */
        MPI_Datatype shifted;
        void *base;
        clampi_msg_bottom_type(whole, r->type, &shifted, &base);
        unpack(data, n, base, 1, shifted);
        PMPI_Type_free(&shifted);
    }
    size_t rest = n - (size_t)whole * (size_t)tsize; /* a part of the next element */
    if (rest)
        unpack_partial(r->type, (const char *)data + (size_t)whole * (size_t)tsize, rest,
                       (char *)r->buf + (MPI_Aint)whole * extent);
}

void clampi_msg_free(clampi_msg *m) {
    if (m->carried)
        clampi_carrier_discard(m);
    else
        clampi_msg_ucx_free(m);
}

/* ---- set-up and teardown ---------------------------------------------------------- */
/* A step of MPI_Finalize (services/finalize.h), before the UCX context goes. */
static void at_finalize(void) {
    clampi_msg_ucx_stop(); /* first: its AM handler must not meet a communicator being freed */
    clampi_msg_disable_all_local();
    clampi_msg_progress();
    if (clampi_stats_enabled()) { /* clampi: msg rank=R endpoints=N (the peers it sent to) */
        int me = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &me);
        clampi_stats_line line;
        clampi_stats_begin(&line, "msg", me);
        clampi_stats_u64(&line, "endpoints", clampi_msg_eps_made());
        clampi_stats_emit(&line);
    }
    pthread_mutex_lock(&init_lock);
    clampi_msg_ucx_fini(); /* the UCX carrier's endpoints and worker */
    pthread_mutex_unlock(&init_lock);
    clampi_progress_hook_remove(clampi_msg_progress_from_mpi);
    clampi_mreq_shells_free();
}

unsigned clampi_msg_spin = 64; /* until clampi_msg_transport_init */

/* Oversubscribed (more of this job's processes on the node than CPUs, topo/node.h): the
 * process a waiting one waits for may need its CPU, so it yields sooner. */
/* once: process options and the node's CPUs (a file read) do not change per communicator */
static void spin_init(void) {
    static int done;
    if (done) return;
    done = 1;
    int local = clampi_node_launcher_local_ranks(), over = local > 0 && clampi_node_oversubscribed(local);
    clampi_msg_spin = (unsigned)clampi_opt_process(over ? CLAMPI_OPT_MATCH_SPIN_OVERSUB : CLAMPI_OPT_MATCH_SPIN).u;
}

int clampi_msg_transport_init(int ucx) {
    pthread_mutex_lock(&init_lock);
    spin_init();
    int err = ucx ? clampi_msg_ucx_init() : MPI_SUCCESS; /* the UCX carrier: its worker, once */
    if (err == MPI_SUCCESS) clampi_finalize_at(CLAMPI_FINALIZE_MSG, at_finalize);
    pthread_mutex_unlock(&init_lock);
    return err;
}

#if !CLAMPI_HAVE_UCX
void clampi_msg_no_ucx(const char *call) {
    fprintf(stderr, "clampi: internal error: %s reached in a build without UCX\n", call);
    abort();
}
#endif
