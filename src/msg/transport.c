/* The process's UCX worker for matched messages: the active-message handler, sends,
 * rendezvous receives, and progress.
 *
 * How MPI's own waits reach this progress (so MPI's waits on other requests, and on clampi's
 * generalized requests, progress clampi's transfers without a progress thread):
 *  - MPICH: requests are made with MPIX_Grequest_start, whose poll function is
 *    clampi_msg_progress; MPICH calls it from MPI_Wait/MPI_Test on such requests.
 *  - Open MPI: clampi_msg_progress is one of the callbacks common/progress_hook.c runs from
 *    Open MPI's progress engine, which every MPI wait and test loop runs.
 *  - MPICH has no such hook: inside any other MPI call (MPI_Barrier after a CMPIX_Isend,
 *    MPICH's scancel2) nothing would progress clampi's worker, and a peer's receive
 *    that needs this side (rendezvous) would hang. The process's UCX progress service
 *    (backends/ucx/service.h, shared with the RMA windows) does it there: one thread that
 *    progresses the worker while events arrive and sleeps on its event fd otherwise. It
 *    only runs UCX (and the AM handler and UCX callbacks with it); MPI_Grequest_complete
 *    stays with the application's threads.
 * A transfer that finishes inside UCX's callbacks only queues the request; clampi_msg_progress
 * marks it finished (and calls MPI_Grequest_complete for a generalized handle) outside them. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "backends/ucx/context.h"
#include "backends/ucx/service.h"
#include "common/options.h"
#include "common/progress_hook.h"
#include "common/flatten.h"
#include "common/stats.h"
#include "msg/msg.h"
#include "topo/node.h"

static ucp_worker_h worker;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int finalize_keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static clampi_mreq *done_head, *done_tail;
static _Atomic long done_count; /* queued in done_head: progress skips the lock when 0 */
static _Thread_local CLAMPI_MSG_TLS int in_progress;

ucp_worker_h clampi_msg_worker(void) { return worker; }
static void flush_acks(void); /* synchronous sends' acknowledgements, outside UCX's callbacks */

/* ---- progress on MPICH: a client of the UCX progress service ------------------------- */
/* Without Open MPI's progress hook nothing drives clampi's worker while the program waits
 * in another MPI call: the process's UCX progress service (backends/ucx/service.h) does,
 * sleeping on the worker's event fd when nothing arrives. It only progresses the worker
 * (the worker is UCS_THREAD_MODE_MULTI); requests are completed with MPI by the
 * application's next MPI call (clampi_msg_progress). */
static clampi_ucx_client *prog_client;

static _Atomic long sends_in_flight;
long clampi_msg_sends_in_flight(void) { return atomic_load(&sends_in_flight); }
void clampi_msg_send_started(void) { atomic_fetch_add(&sends_in_flight, 1); }

/* While an application thread drives the worker (it calls clampi_msg_progress in a wait
 * loop) the service keeps out of its way (clampi_ucx_poller, service.h). */
static clampi_ucx_poller poller;
clampi_ucx_poller *clampi_msg_poller(void) { return &poller; }

static unsigned msg_progress_once(void *arg) {
    (void)arg;
    if (!clampi_ucx_poller_may_progress(&poller)) return 0;
    flush_acks(); /* acknowledgements the AM handler queued in an earlier pass */
    return clampi_ucx_poller_serviced(&poller, worker);
}
static int msg_arm(void *arg) {
    (void)arg;
    return clampi_ucx_poller_arm(&poller, worker);
}
static const clampi_ucx_client_ops msg_client = {msg_progress_once, msg_arm};

static void prog_stop_thread(void) {
    clampi_ucx_service_remove(prog_client);
    prog_client = NULL;
}

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
    if (worker) {
        while (clampi_ucx_poller_progress(&poller, worker)) {}
        flush_acks();
    }
    if (!in_mpi_hook && clampi_carrier_active()) clampi_carrier_progress();
    drain_done();
    if (atomic_load_explicit(&clampi_msg_retired_n, memory_order_relaxed)) clampi_msg_retired_sweep();
    in_progress = 0;
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
        const clampi_piece *p = &f->piece[i];
        if (p->packed >= bytes) continue;
        size_t len = p->packed + p->len <= bytes ? p->len : bytes - p->packed;
        memcpy(dst + p->offset, data + p->packed, len);
    }
}

/* Receive bytes from `data` (packed) into r's buffer: at most r->capacity (truncation). */
void clampi_msg_unpack_into(clampi_mreq *r, const void *data, size_t bytes) {
    size_t n = bytes < r->capacity ? bytes : r->capacity;
    if (r->contig) {
        if (n) memcpy((char *)r->buf + r->contig_offset, data, n);
        return;
    }
    int tsize = 0, pos = 0;
    MPI_Aint lb, extent;
    PMPI_Type_size(r->type, &tsize);
    PMPI_Type_get_extent(r->type, &lb, &extent);
    int whole = tsize ? (int)(n / (size_t)tsize) : 0;
    if (whole && r->buf) {
        PMPI_Unpack(data, (int)n, &pos, r->buf, whole, r->type, MPI_COMM_SELF);
    } else if (whole) { /* MPI_BOTTOM */
        MPI_Datatype shifted;
        void *base;
        clampi_msg_bottom_type(whole, r->type, &shifted, &base);
        PMPI_Unpack(data, (int)n, &pos, base, 1, shifted, MPI_COMM_SELF);
        PMPI_Type_free(&shifted);
    }
    size_t rest = n - (size_t)whole * (size_t)tsize; /* a part of the next element */
    if (rest)
        unpack_partial(r->type, (const char *)data + (size_t)whole * (size_t)tsize, rest,
                       (char *)r->buf + (MPI_Aint)whole * extent);
}

static void rndv_done(void *request, ucs_status_t status, size_t length, void *user_data) {
    clampi_mreq *r = user_data;
    (void)atomic_load_explicit(&r->handed, memory_order_acquire);
    if (status != UCS_OK)
        r->error = MPI_ERR_OTHER;
    else if (r->tmp)
        clampi_msg_unpack_into(r, r->tmp, r->staged);
    free(r->tmp);
    r->tmp = NULL;
    if (request) ucp_request_free(request);
    clampi_msg_finish(r);
}

/* ---- synchronous sends: the acknowledgement ---------------------------------------- */
typedef struct ack_msg {
    uint64_t cookie;
    int source;       /* to whom: its rank in mc (the endpoint may not be made yet) */
    clampi_mcomm *mc; /* referenced until sent: a freed communicator keeps its endpoints */
    struct ack_msg *next;
} ack_msg;

static pthread_mutex_t ack_lock = PTHREAD_MUTEX_INITIALIZER;
static ack_msg *ack_head, **ack_tail = &ack_head;

static void ack_sent(void *request, ucs_status_t status, void *user_data) {
    free(user_data);
    ucp_request_free(request);
}

/* The receive that matched a synchronous send tells its sender (cookie = its request).
 * Queued here (this may run inside UCX's active-message callback) and sent by
 * clampi_msg_progress outside UCX's callbacks. */
static void send_ack(clampi_mcomm *mc, int source, uint64_t cookie) {
    ack_msg *a = malloc(sizeof *a);
    if (!a || !mc || source < 0 || source >= mc->size || !mc->eps) {
        free(a);
        return;
    }
    a->cookie = cookie;
    a->source = source;
    a->mc = mc;
    clampi_msg_comm_ref(mc);
    a->next = NULL;
    pthread_mutex_lock(&ack_lock);
    *ack_tail = a;
    ack_tail = &a->next;
    pthread_mutex_unlock(&ack_lock);
}

static void flush_acks(void) {
    if (!ack_head) return; /* racy peek: a missed one goes at the next progress */
    pthread_mutex_lock(&ack_lock);
    ack_msg *list = ack_head;
    ack_head = NULL;
    ack_tail = &ack_head;
    pthread_mutex_unlock(&ack_lock);
    while (list) {
        ack_msg *a = list;
        list = a->next;
        ucp_request_param_t p;
        memset(&p, 0, sizeof p);
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
        p.cb.send = ack_sent;
        p.user_data = a;
        p.flags = UCP_AM_SEND_FLAG_EAGER;
        clampi_mcomm *mc = a->mc;
        ucp_ep_h ep = clampi_msg_ep(mc, a->source);
        void *req = ep ? ucp_am_send_nbx(ep, CLAMPI_MSG_ACK_AM_ID, &a->cookie, sizeof a->cookie, NULL, 0, &p) : NULL;
        if (req == NULL || UCS_PTR_IS_ERR(req)) free(a);
        clampi_msg_comm_unref(mc); /* sent or queued on the endpoint: a flush-mode close waits for it */
    }
}

/* One of a synchronous send's two parts (sent, acknowledged) is done. */
static void sync_part(clampi_mreq *r) {
    if (atomic_fetch_sub(&r->sync_parts, 1) == 1) clampi_msg_finish(r);
}

static ucs_status_t ack_handler(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                const ucp_am_recv_param_t *param) {
    uint64_t cookie;
    if (header_length != sizeof cookie) return UCS_OK;
    memcpy(&cookie, header, sizeof cookie);
    clampi_mreq *r = (clampi_mreq *)(uintptr_t)cookie;
    (void)atomic_load_explicit(&r->handed, memory_order_acquire);
    sync_part(r);
    clampi_mreq_unpin(r); /* the pin taken for the acknowledgement (clampi_msg_send) */
    return UCS_OK;
}

/* A message descriptor back to the pool (its payload too, when it was not inline). */
static void msg_release(clampi_msg *m) {
    if (m->data && m->data != (void *)m->inline_data) free(m->data);
    clampi_pool_put(CLAMPI_POOL_MSG, m);
}

void clampi_msg_deliver(clampi_msg *m, clampi_mreq *r) {
    if (m->hdr.sync) send_ack(r->mc, m->hdr.source, m->hdr.sync);
    r->source = m->hdr.source;
    r->tag = m->hdr.tag;
    r->bytes = m->hdr.bytes;
    if (m->hdr.bytes > r->capacity) {
        r->error = MPI_ERR_TRUNCATE;
        r->bytes = r->capacity;
    }
    if (!m->rndv_desc) {
        clampi_msg_unpack_into(r, m->data, m->hdr.bytes);
        msg_release(m);
        clampi_msg_finish(r);
        return;
    }
    /* Rendezvous: straight into a contiguous buffer that holds it all, else staged and
     * unpacked (or clipped) when it is in. */
    size_t total = m->hdr.bytes;
    void *dst = (char *)r->buf + r->contig_offset;
    if (!r->contig || total > r->capacity) {
        r->tmp = malloc(total ? total : 1);
        r->staged = total;
        dst = r->tmp;
    }
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv_am = rndv_done;
    p.user_data = r;
    void *desc = m->rndv_desc;
    msg_release(m);
    atomic_store_explicit(&r->handed, 1, memory_order_release);
    void *req = dst ? ucp_am_recv_data_nbx(worker, desc, dst, total, &p) : UCS_STATUS_PTR(UCS_ERR_NO_MEMORY);
    if (UCS_PTR_IS_ERR(req)) {
        if (!dst) ucp_am_data_release(worker, desc);
        r->error = MPI_ERR_OTHER;
        free(r->tmp);
        r->tmp = NULL;
        clampi_msg_finish(r);
    } else if (req == NULL) {
        rndv_done(NULL, UCS_OK, 0, r);
    }
}

void clampi_msg_free(clampi_msg *m) {
    if (m->carried) {
        clampi_carrier_discard(m);
        return;
    }
    if (m->rndv_desc) ucp_am_data_release(worker, m->rndv_desc);
    msg_release(m);
}

/* One arrival in its sender's order: match it or queue it as unexpected. */
static void arrive(clampi_mcomm *mc, clampi_msg *m) {
    clampi_match_key k = {mc->context, m->hdr.source, m->hdr.tag};
    uintptr_t posted;
    if (clampi_matcher_arrive(mc->matcher, k, (uintptr_t)m, &posted) == 1) clampi_msg_deliver(m, (clampi_mreq *)posted);
}

static ucs_status_t am_handler(void *arg, const void *header, size_t header_length, void *data, size_t length,
                               const ucp_am_recv_param_t *param) {
    clampi_msg_hdr hdr; /* UCX's header pointer need not be aligned: copy it */
    const clampi_msg_hdr *h = &hdr;
    clampi_mcomm *mc = NULL;
    if (header_length == sizeof hdr) {
        memcpy(&hdr, header, sizeof hdr);
        mc = clampi_msg_comm_by_context(hdr.context & (CLAMPI_MSG_MAX_CONTEXTS - 1));
        if (mc && mc->epoch != hdr.context >> CLAMPI_MSG_CONTEXT_BITS) mc = NULL;
    }
    /* None: a message of a freed communicator that nobody could receive (comm.c's epochs),
     * dropped; a rendezvous sender is released. */
    if (!mc || h->source < 0 || h->source >= mc->size) {
        if (clampi_opt_process(CLAMPI_OPT_MATCH_VERBOSE).u)
            fprintf(stderr, "clampi: message for a freed or unknown communicator dropped\n");
        return UCS_OK;
    }
    clampi_msg *m = clampi_pool_get(CLAMPI_POOL_MSG);
    int rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    if (m) {
        m->hdr = *h;
        if (rndv) {
            m->rndv_desc = data;
        } else if ((m->data = length <= CLAMPI_MSG_INLINE ? (void *)m->inline_data : malloc(length))) {
            memcpy(m->data, data, length);
        }
    }
    if (!m || (!rndv && !m->data)) {
        fprintf(stderr, "clampi: out of memory receiving a message\n");
        clampi_pool_put(CLAMPI_POOL_MSG, m);
        return UCS_OK;
    }
    pthread_mutex_lock(&mc->recv_lock);
    int s = h->source;
    if (h->seq != mc->seq_in[s]) { /* ahead of its turn: keep it, sorted by seq */
        if (clampi_opt_process(CLAMPI_OPT_MATCH_VERBOSE).u)
            fprintf(stderr, "clampi: stash seq %u from %d (expect %u) rndv %d\n", h->seq, s, mc->seq_in[s], rndv);
        clampi_msg **p = &mc->stash[s];
        while (*p && (int32_t)((*p)->hdr.seq - h->seq) < 0) p = &(*p)->next;
        m->next = *p;
        *p = m;
    } else {
        arrive(mc, m);
        mc->seq_in[s]++;
        while (mc->stash[s] && mc->stash[s]->hdr.seq == mc->seq_in[s]) {
            clampi_msg *n = mc->stash[s];
            mc->stash[s] = n->next;
            arrive(mc, n);
            mc->seq_in[s]++;
        }
    }
    pthread_mutex_unlock(&mc->recv_lock);
    return rndv ? UCS_INPROGRESS : UCS_OK;
}

/* ---- sending --------------------------------------------------------------------- */
static void send_done(void *request, ucs_status_t status, void *user_data) {
    clampi_mreq *r = user_data;
    (void)atomic_load_explicit(&r->handed, memory_order_acquire);
    if (status != UCS_OK) r->error = MPI_ERR_OTHER;
    ucp_request_free(request);
    if (r->sync)
        sync_part(r);
    else
        clampi_msg_finish(r);
}

int clampi_msg_send(clampi_mreq *r, int dest, int tag, const void *data, size_t bytes) {
    clampi_mcomm *mc = r->mc;
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    p.cb.send = send_done;
    p.user_data = r;
    p.flags = bytes <= CLAMPI_MSG_EAGER_MAX ? UCP_AM_SEND_FLAG_EAGER : UCP_AM_SEND_FLAG_RNDV;
    r->hdr.context = mc->context | mc->epoch << CLAMPI_MSG_CONTEXT_BITS;
    r->hdr.source = mc->rank;
    r->hdr.tag = tag;
    r->hdr.bytes = bytes;
    r->hdr.sync = 0;
    if (r->sync) { /* finished when sent and acknowledged; pinned until the acknowledgement */
        r->hdr.sync = (uint64_t)(uintptr_t)r;
        atomic_store(&r->sync_parts, 2);
        atomic_fetch_add(&r->refs, 1);
    }
    atomic_store_explicit(&r->handed, 1, memory_order_release);
    pthread_mutex_lock(&mc->send_lock);
    r->hdr.seq = mc->seq_out[dest]++;
    ucp_ep_h ep = clampi_msg_ep(mc, dest);
    void *req = ep ? ucp_am_send_nbx(ep, CLAMPI_MSG_AM_ID, &r->hdr, sizeof r->hdr, data, bytes, &p)
                   : UCS_STATUS_PTR(UCS_ERR_UNREACHABLE);
    if (UCS_PTR_IS_ERR(req)) mc->seq_out[dest]--; /* never sent: no gap in the receiver's order */
    pthread_mutex_unlock(&mc->send_lock);
    if (UCS_PTR_IS_ERR(req)) {
        r->error = MPI_ERR_OTHER;
        if (r->sync) clampi_mreq_unpin(r); /* no acknowledgement will come */
        clampi_msg_finish(r);
    } else if (req == NULL) {
        if (r->sync)
            sync_part(r);
        else
            clampi_msg_finish(r);
    }
    return MPI_SUCCESS;
}

/* ---- set-up and teardown ---------------------------------------------------------- */
static int at_finalize(MPI_Comm comm, int kv, void *value, void *extra) {
    prog_stop_thread(); /* first: its AM handler must not meet a communicator being freed */
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
    if (worker) clampi_msg_eps_close_all();
    clampi_progress_hook_remove(clampi_msg_progress_from_mpi);
    clampi_mreq_shells_free();
    pthread_mutex_lock(&init_lock);
    if (worker) ucp_worker_destroy(worker);
    worker = NULL;
    pthread_mutex_unlock(&init_lock);
    return MPI_SUCCESS;
}

/* At MPI_Finalize (MPI_COMM_SELF's attribute, deleted before the UCX context's own:
 * attributes go LIFO), once per process. */
static void finalize_hook_once(void) {
    if (finalize_keyval != MPI_KEYVAL_INVALID) return;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &finalize_keyval, NULL);
    PMPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL);
}

unsigned clampi_msg_spin = 64; /* until clampi_msg_transport_init */

/* Oversubscribed (more of this job's processes on the node than CPUs): the process a
 * waiting one waits for may need its CPU, so it yields sooner. */
static void spin_init(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int local = clampi_node_launcher_local_ranks(), over = local > 0 && cpus > 0 && local > cpus;
    clampi_msg_spin = (unsigned)clampi_opt_process(over ? CLAMPI_OPT_MATCH_SPIN_OVERSUB : CLAMPI_OPT_MATCH_SPIN).u;
}

int clampi_msg_transport_init(int ucx) {
    pthread_mutex_lock(&init_lock);
    int err = MPI_SUCCESS;
    spin_init();
    if (!ucx) finalize_hook_once(); /* the MPI carrier: no UCX */
    if (ucx && !worker) {
        ucp_worker_h w;
        err = clampi_ucx_worker_create(UCS_THREAD_MODE_MULTI, &w);
        if (err == MPI_SUCCESS) {
            ucp_am_handler_param_t hp;
            memset(&hp, 0, sizeof hp);
            hp.field_mask =
                UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
            hp.id = CLAMPI_MSG_AM_ID;
            hp.cb = am_handler;
            hp.flags = UCP_AM_FLAG_WHOLE_MSG;
            ucs_status_t st = ucp_worker_set_am_recv_handler(w, &hp);
            hp.id = CLAMPI_MSG_ACK_AM_ID;
            hp.cb = ack_handler;
            if (st == UCS_OK) st = ucp_worker_set_am_recv_handler(w, &hp);
            if (st != UCS_OK) {
                ucp_worker_destroy(w);
                err = MPI_ERR_OTHER;
            } else {
                worker = w;
                finalize_hook_once();
                int hooked = clampi_progress_hook_add(clampi_msg_progress_from_mpi); /* Open MPI */
                if (!hooked && clampi_ucx_service_add(&msg_client, NULL, &prog_client) != MPI_SUCCESS)
                    prog_client = NULL; /* progress then only inside MPI calls on clampi's requests */
            }
        }
    }
    pthread_mutex_unlock(&init_lock);
    return err;
}
