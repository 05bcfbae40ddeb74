/* The UCX carrier of matched messages: the process's UCX worker, the active-message
 * handler (ordering, eager / rendezvous), sends, synchronous-send acknowledgements, and the
 * worker's progress.
 *
 * MPICH has no progress hook: inside any other MPI call (MPI_Barrier after a CMPIX_Isend,
 * MPICH's scancel2) nothing would progress clampi's worker, and a peer's receive that needs
 * this side (rendezvous) would hang. The process's UCX progress service
 * (services/ucx/service.h, shared with the RMA windows) does it there: one thread that
 * progresses the worker while events arrive and sleeps on its event fd otherwise. It only
 * runs UCX (and the AM handler and UCX callbacks with it); MPI_Grequest_complete stays with
 * the application's threads (progress.c). Built only with UCX. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "services/ucx/context.h"
#include "services/ucx/service.h"
#include "common/options.h"
#include "common/progress_hook.h"
#include "msg/msg_internal.h"

static ucp_worker_h worker;

ucp_worker_h clampi_msg_worker(void) { return worker; }
static void flush_acks(void); /* synchronous sends' acknowledgements, outside UCX's callbacks */

/* ---- progress on MPICH: a client of the UCX progress service ------------------------- */
/* Without Open MPI's progress hook nothing drives clampi's worker while the program waits
 * in another MPI call: the process's UCX progress service (services/ucx/service.h) does,
 * sleeping on the worker's event fd when nothing arrives. It only progresses the worker
 * (the worker is UCS_THREAD_MODE_MULTI); requests are completed with MPI by the
 * application's next MPI call (clampi_msg_progress). */
static clampi_ucx_client *prog_client;

/* While an application thread drives the worker (it calls clampi_msg_progress in a wait
 * loop) the service keeps out of its way (clampi_ucx_poller, service.h). */
static clampi_ucx_poller poller;
clampi_ucx_poller *clampi_msg_poller(void) { return &poller; }

static unsigned msg_progress_once(void *arg) {
    (void)arg;
    /* Not from inside MPICH's poll: its AM handler calls PMPI_ (unpacking) and takes the
     * receive lock, under a lock MPICH may hold (mpi_polls.h); the thread and clampi's own
     * waits progress this worker. */
    if (clampi_ucx_mpi_polls_running_here()) return 0;
    if (!clampi_ucx_poller_may_progress(&poller)) return 0;
    flush_acks(); /* acknowledgements the AM handler queued in an earlier pass */
    return clampi_ucx_poller_serviced(&poller, worker);
}
static int msg_arm(void *arg) {
    (void)arg;
    return clampi_ucx_poller_arm(&poller, worker);
}
static const clampi_ucx_client_ops msg_client = {msg_progress_once, msg_arm};

void clampi_msg_ucx_stop(void) {
    clampi_ucx_service_remove(prog_client);
    prog_client = NULL;
}

void clampi_msg_ucx_progress(void) {
    if (!worker) return;
    while (clampi_ucx_poller_progress(&poller, worker)) {}
    flush_acks();
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
/* The receiver dropped the message unmatched (its communicator was revoked): the cookie's
 * low bit (a request's address is aligned) says so, and the send fails. */
#define ACK_DROPPED 1u
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

/* A send the receiver dropped unmatched: the MPI's code for a revoked communicator, which
 * this side need not have seen yet. */
static int dropped_error(void) {
    int code = clampi_msg_revocation_error();
    return code ? code : MPI_ERR_OTHER;
}

/* One of a synchronous send's two parts (sent, acknowledged) is done. */
static void sync_part(clampi_mreq *r) {
    if (atomic_fetch_sub(&r->sync_parts, 1) == 1) clampi_msg_finish(r);
}

/* Synchronous sends waiting for their acknowledgement, per communicator. A revocation seen
 * here (this process revoked the communicator, or its waits learnt of another's) lets them
 * go at once with the revocation's code, as the MPI's own pending sends on it end, rather
 * than when the receiver next calls MPI. The acknowledgement part is claimed once, by the
 * acknowledgement or by the revocation; a late acknowledgement only drops its pin. The
 * list's lock (mc->ack_lock) is never held while calling UCX: the acknowledgement handler
 * takes it inside UCX's callback. */

static void ack_await(clampi_mcomm *mc, clampi_mreq *r) {
    r->ack_tracked = clampi_msg_revocation_error() != 0; /* elsewhere nothing to let go: no lock */
    if (!r->ack_tracked) return;
    pthread_mutex_lock(&mc->ack_lock);
    r->ack_claimed = 0;
    r->ack_prev = NULL;
    r->ack_next = mc->awaiting_ack;
    if (r->ack_next) r->ack_next->ack_prev = r;
    mc->awaiting_ack = r;
    r->ack_listed = 1;
    pthread_mutex_unlock(&mc->ack_lock);
}

static void ack_unlink_locked(clampi_mcomm *mc, clampi_mreq *r) {
    if (!r->ack_listed) return;
    if (r->ack_prev)
        r->ack_prev->ack_next = r->ack_next;
    else
        mc->awaiting_ack = r->ack_next;
    if (r->ack_next) r->ack_next->ack_prev = r->ack_prev;
    r->ack_next = r->ack_prev = NULL;
    r->ack_listed = 0;
}

/* 1 when the caller does the acknowledgement part (nobody did it before). */
static int ack_claim(clampi_mcomm *mc, clampi_mreq *r) {
    if (!r->ack_tracked) return 1;
    pthread_mutex_lock(&mc->ack_lock);
    ack_unlink_locked(mc, r);
    int mine = !r->ack_claimed;
    r->ack_claimed = 1;
    pthread_mutex_unlock(&mc->ack_lock);
    return mine;
}

void clampi_msg_ucx_release_sync_senders(clampi_mcomm *mc, int code) {
    clampi_mreq *mine = NULL;
    pthread_mutex_lock(&mc->ack_lock);
    while (mc->awaiting_ack) {
        clampi_mreq *r = mc->awaiting_ack;
        ack_unlink_locked(mc, r);
        if (!r->ack_claimed) {
            r->ack_claimed = 1;
            r->ack_next = mine;
            mine = r;
        }
    }
    pthread_mutex_unlock(&mc->ack_lock);
    while (mine) { /* each still pinned for its acknowledgement, and unfinished: alive */
        clampi_mreq *r = mine;
        mine = r->ack_next;
        r->ack_next = NULL;
        r->error = code;
        sync_part(r);
    }
}

static ucs_status_t ack_handler(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                const ucp_am_recv_param_t *param) {
    uint64_t cookie;
    if (header_length != sizeof cookie) return UCS_OK;
    memcpy(&cookie, header, sizeof cookie);
    clampi_mreq *r = (clampi_mreq *)(uintptr_t)(cookie & ~(uint64_t)ACK_DROPPED);
    (void)atomic_load_explicit(&r->handed, memory_order_acquire);
    if (ack_claim(r->mc, r)) {
        if (cookie & ACK_DROPPED) r->error = dropped_error();
        sync_part(r);
    }
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

void clampi_msg_ucx_free(clampi_msg *m) {
    if (m->rndv_desc) ucp_am_data_release(worker, m->rndv_desc);
    msg_release(m);
}

/* Arrivals of a revoked communicator, never to be received, taken out under the locks and
 * dropped after them (UCX's calls take the worker's lock, which the AM handler holds when
 * it takes recv_lock): a synchronous sender is told (its send fails), a rendezvous sender
 * is released by UCX (its send completes, as plain Open MPI 5.0's does). */
void clampi_msg_ucx_drop_revoked(clampi_mcomm *mc) {
    if (!mc->matcher) return;
    clampi_msg *list = NULL;
    /* under recv_lock: an arrival either is queued before this or sees the mark (am_handler) */
    pthread_mutex_lock(&mc->recv_lock);
    clampi_matcher_drain(mc->matcher, 1, clampi_msg_collect, &list);
    for (int s = 0; mc->stash && s < mc->size; s++)
        while (mc->stash[s]) {
            clampi_msg *n = mc->stash[s];
            mc->stash[s] = n->next;
            clampi_msg_collect((uintptr_t)n, &list);
        }
    pthread_mutex_unlock(&mc->recv_lock);
    while (list) {
        clampi_msg *m = list;
        list = m->next;
        if (m->hdr.sync) send_ack(mc, m->hdr.source, m->hdr.sync | ACK_DROPPED);
        clampi_msg_ucx_free(m);
    }
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
    if (atomic_load_explicit(&mc->revoked, memory_order_relaxed)) { /* never received: dropped */
        pthread_mutex_unlock(&mc->recv_lock);
        if (h->sync) send_ack(mc, s, h->sync | ACK_DROPPED);
        msg_release(m); /* a rendezvous: UCS_OK below has UCX release the sender */
        return UCS_OK;
    }
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
        ack_await(mc, r);
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
        if (r->sync) { /* no acknowledgement will come (a revocation meanwhile did not unpin) */
            ack_claim(mc, r);
            clampi_mreq_unpin(r);
        }
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
int clampi_msg_ucx_init(void) {
    if (worker) return MPI_SUCCESS;
    ucp_worker_h w;
    int err = clampi_ucx_worker_create(UCS_THREAD_MODE_MULTI, &w);
    if (err != MPI_SUCCESS) return err;
    ucp_am_handler_param_t hp;
    memset(&hp, 0, sizeof hp);
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = CLAMPI_MSG_AM_ID;
    hp.cb = am_handler;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    ucs_status_t st = ucp_worker_set_am_recv_handler(w, &hp);
    hp.id = CLAMPI_MSG_ACK_AM_ID;
    hp.cb = ack_handler;
    if (st == UCS_OK) st = ucp_worker_set_am_recv_handler(w, &hp);
    if (st != UCS_OK) {
        ucp_worker_destroy(w);
        return MPI_ERR_OTHER;
    }
    worker = w;
    clampi_ucx_poller_bind(w, &poller);
    int hooked = clampi_progress_hook_add(clampi_msg_progress_from_mpi); /* Open MPI */
    if (!hooked && clampi_ucx_service_add(&msg_client, NULL, &prog_client) != MPI_SUCCESS)
        prog_client = NULL; /* progress then only inside MPI calls on clampi's requests */
    return MPI_SUCCESS;
}

void clampi_msg_ucx_fini(void) {
    if (!worker) return;
    clampi_msg_eps_close_all();
    clampi_ucx_poller_bind(worker, NULL);
    ucp_worker_destroy(worker);
    worker = NULL;
}
