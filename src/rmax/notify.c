/* Request-based target notification (the Quo Vadis RMA paper, §5.1): CMPIX_Put_notify and
 * CMPIX_Win_notify_request.
 *
 * Origin: the put, then a flush of the endpoint it went through (the data is at the
 * target), then a UCX active message {window id, notify id, origin rank} to the target's
 * process worker. So a notification never overtakes its data, whatever the transport.
 *
 * Target: the AM handler (run by whoever progresses the process worker: the progress
 * thread, or clampi's poll of a pending notify request inside MPI_Wait/MPI_Test) counts
 * the arrival; CMPIX_Win_notify_request returns a generalized request that completes with
 * the next arrival for its id (already there: complete at once). Arrivals and requests
 * for the same id pair up first come, first served. State lives in the family root, so
 * duplicates of a window see the same notifications. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "services/ucx/context.h"
#include "backends/ucx/ucx_win.h"
#include "clampi/rmax.h"
#include "rma/errors.h"
#include "rmax/family.h"
#include "common/greq.h"
#include "rmax/ucx_access.h"

#define CLAMPI_RMAX_AM_NOTIFY 0x6e6f /* UCX AM id ("no"): distinct from the message layer's ids */
#define QUEUE 64                     /* origins remembered per id for MPI_SOURCE */

typedef struct notify_req {
    int id, done, source;
    struct clampi_notify *n;
    struct notify_req *next;
} notify_req;

typedef struct clampi_notify {
    pthread_mutex_t lock;
    ucp_worker_h worker;
    uint32_t arrived[CMPIX_NOTIFY_MAX];   /* arrivals not yet given to a request */
    int sources[CMPIX_NOTIFY_MAX][QUEUE]; /* their origins (ring) */
    uint32_t head[CMPIX_NOTIFY_MAX];
    notify_req *waiting; /* requests without an arrival yet, oldest first */
    int refs;            /* the window + live requests */
} clampi_notify;

typedef struct {
    uint64_t win_id;
    int32_t id, origin;
} notify_msg;

static void unref(clampi_notify *n) {
    pthread_mutex_lock(&n->lock);
    int last = --n->refs == 0;
    pthread_mutex_unlock(&n->lock);
    if (last) {
        pthread_mutex_destroy(&n->lock);
        free(n);
    }
}

/* An arrival: to the oldest waiting request for id, else counted. Under n->lock. */
static void arrive(clampi_notify *n, int id, int origin) {
    for (notify_req **p = &n->waiting; *p; p = &(*p)->next)
        if ((*p)->id == id) {
            notify_req *r = *p;
            *p = r->next;
            r->source = origin;
            __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
            return;
        }
    n->sources[id][(n->head[id] + n->arrived[id]) % QUEUE] = origin;
    n->arrived[id]++;
}

static ucs_status_t on_notify(void *arg, const void *header, size_t header_length, void *data, size_t length,
                              const ucp_am_recv_param_t *param) {
    (void)data, (void)length, (void)param;
    clampi_notify *n = arg;
    notify_msg m;
    if (header_length != sizeof m) return UCS_OK;
    memcpy(&m, header, sizeof m);
    if (m.id < 0 || m.id >= CMPIX_NOTIFY_MAX) return UCS_OK;
    pthread_mutex_lock(&n->lock);
    arrive(n, m.id, m.origin);
    pthread_mutex_unlock(&n->lock);
    return UCS_OK;
}

/* The family root's notification state, set up on first use (the AM handler goes on the
 * shared process worker, which every peer's endpoint reaches). */
static clampi_notify *notify_of(clampi_win *w) {
    clampi_win *root = w->rmax && w->rmax->kind != CLAMPI_RMAX_PARENT ? w->rmax->parent : w;
    clampi_rmax *x = clampi_rmax_of(root);
    if (!x) return NULL;
    clampi_notify *n = __atomic_load_n(&x->notify, __ATOMIC_ACQUIRE);
    if (n) return n;
    static pthread_mutex_t setup = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&setup);
    if (!(n = x->notify) && (n = calloc(1, sizeof *n))) {
        pthread_mutex_init(&n->lock, NULL);
        n->refs = 1;
        n->worker = clampi_rmax_main_worker(root);
        ucp_am_handler_param_t p = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                                                  UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                    .id = CLAMPI_RMAX_AM_NOTIFY,
                                    .cb = on_notify,
                                    .arg = n};
        if (ucp_worker_set_am_recv_handler(n->worker, &p) != UCS_OK) {
            pthread_mutex_destroy(&n->lock);
            free(n);
            n = NULL;
        } else {
            __atomic_store_n(&x->notify, n, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&setup);
    return n;
}

/* The window's free: the handler goes, live requests keep the state until freed. */
void clampi_rmax_notify_release(clampi_win *w) {
    clampi_notify *n = w->rmax->notify;
    if (!n) return;
    ucp_am_handler_param_t p = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB,
                                .id = CLAMPI_RMAX_AM_NOTIFY,
                                .cb = NULL};
    if (clampi_ucx_of(&w->b)) ucp_worker_set_am_recv_handler(n->worker, &p);
    w->rmax->notify = NULL;
    unref(n);
}

/* Every window that may receive notifications needs the handler before a peer sends one:
 * clampi_rmax_on_create installs it on every UCX window (collectively, so all are ready). */
void clampi_rmax_notify_setup(clampi_win *w) { (void)notify_of(w); }

int CMPIX_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, int notify_id,
                     CMPI_Win win) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!clampi_rmax_is_ucx(w)) return clampi_raise_win(w, CLAMPI_E_WIN);
    if (notify_id < 0 || notify_id >= CMPIX_NOTIFY_MAX) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
    int rc = CMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win);
    if (rc != MPI_SUCCESS) return rc;
    void *lane = clampi_rmax_lane(w);
    if (!lane) return clampi_raise_win(w, CLAMPI_E_UCX);
    clampi_rmax_lane_enter(lane);
    ucp_worker_h worker = clampi_rmax_lane_worker(lane);
    ucp_ep_h ep = clampi_rmax_lane_ep(w, lane, target_rank);
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    ucs_status_t st = ep ? clampi_ucx_wait(worker, ucp_ep_flush_nbx(ep, &p)) : UCS_ERR_UNREACHABLE;
    if (st == UCS_OK) {
        clampi_win *root = w->rmax && w->rmax->kind != CLAMPI_RMAX_PARENT ? w->rmax->parent : w;
        notify_msg m = {.win_id = clampi_rmax_win_id(root), .id = notify_id, .origin = w->b.rank};
        memset(&p, 0, sizeof p);
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_AM_SEND_FLAG_EAGER;
        st = clampi_ucx_wait(worker, ucp_am_send_nbx(ep, CLAMPI_RMAX_AM_NOTIFY, &m, sizeof m, NULL, 0, &p));
    }
    clampi_rmax_lane_leave(lane);
    return st == UCS_OK ? MPI_SUCCESS : clampi_raise_win(w, CLAMPI_E_UCX);
}

static int notify_poll(void *ctx, MPI_Status *status) {
    notify_req *r = ctx;
    if (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
        /* MULTI-thread worker (or the progress thread's): progress it here too */
        ucp_worker_progress(r->n->worker);
        if (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) return 0;
    }
    status->MPI_SOURCE = r->source;
    status->MPI_TAG = r->id;
    status->MPI_ERROR = MPI_SUCCESS;
    return 1;
}

/* MPI_Cancel of a request still waiting: withdrawn (no arrival is consumed). */
static int notify_cancel(void *ctx) {
    notify_req *r = ctx;
    int withdrawn = 0;
    pthread_mutex_lock(&r->n->lock);
    for (notify_req **p = &r->n->waiting; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            withdrawn = 1;
            break;
        }
    pthread_mutex_unlock(&r->n->lock);
    return withdrawn;
}

static void notify_free(void *ctx) {
    notify_req *r = ctx;
    unref(r->n);
    free(r);
}

int CMPIX_Win_notify_request(CMPI_Win win, int notify_id, MPI_Request *req) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!clampi_rmax_is_ucx(w)) return clampi_raise_win(w, CLAMPI_E_WIN);
    if (notify_id < 0 || notify_id >= CMPIX_NOTIFY_MAX || !req) return clampi_raise_win(w, CLAMPI_E_ARG);
    clampi_notify *n = notify_of(w);
    notify_req *r = calloc(1, sizeof *r);
    if (!n || !r) {
        free(r);
        return clampi_raise_win(w, CLAMPI_E_NOMEM);
    }
    r->id = notify_id;
    r->n = n;
    pthread_mutex_lock(&n->lock);
    n->refs++;
    if (n->arrived[notify_id]) { /* already there */
        r->source = n->sources[notify_id][n->head[notify_id]];
        n->head[notify_id] = (n->head[notify_id] + 1) % QUEUE;
        n->arrived[notify_id]--;
        r->done = 1;
    } else {
        notify_req **p = &n->waiting;
        while (*p) p = &(*p)->next;
        *p = r;
    }
    pthread_mutex_unlock(&n->lock);
    int rc = clampi_greq_start(notify_poll, r, notify_free, notify_cancel, req);
    if (rc != MPI_SUCCESS) {
        pthread_mutex_lock(&n->lock);
        for (notify_req **p = &n->waiting; *p; p = &(*p)->next)
            if (*p == r) {
                *p = r->next;
                break;
            }
        if (r->done) arrive(n, notify_id, r->source); /* give the arrival back */
        n->refs--;
        pthread_mutex_unlock(&n->lock);
        free(r);
        return clampi_raise_win(w, CLAMPI_E_NOMEM);
    }
    return MPI_SUCCESS;
}
