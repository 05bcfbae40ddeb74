/* Request-based target notification (the Quo Vadis RMA paper, §5.1): CMPIX_Put_notify and
 * CMPIX_Win_notify_request.
 *
 * Origin: the put, then the backend's notify_send, which delivers the notification after
 * the put is complete at the target (on UCX: an endpoint flush, then an active message;
 * src/backends/ucx/notify.c). So a notification never overtakes its data.
 *
 * Target: the backend's listener (run by whoever progresses it: the progress thread, or
 * clampi's poll of a pending notify request inside MPI_Wait/MPI_Test) counts the arrival;
 * CMPIX_Win_notify_request returns a generalized request that completes with
 * the next arrival for its id (already there: complete at once). Arrivals and requests
 * for the same id pair up first come, first served. State lives in the family root, so
 * duplicates of a window see the same notifications. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clampi/rmax.h"
#include "common/greq.h"
#include "rma/errors.h"
#include "rmax/family.h"

#define QUEUE 64 /* origins remembered per id for MPI_SOURCE */

typedef struct notify_req {
    int id, done, source;
    struct clampi_notify *n;
    struct notify_req *next;
} notify_req;

typedef struct clampi_notify {
    pthread_mutex_t lock;
    const clampi_backend_ext *rows; /* the backend's: listener's progress and free */
    void *listener;
    uint32_t arrived[CMPIX_NOTIFY_MAX];   /* arrivals not yet given to a request */
    int sources[CMPIX_NOTIFY_MAX][QUEUE]; /* their origins (ring) */
    uint32_t head[CMPIX_NOTIFY_MAX];
    notify_req *waiting; /* requests without an arrival yet, oldest first */
    int refs;            /* the window + live requests */
} clampi_notify;

static void unref(clampi_notify *n) {
    pthread_mutex_lock(&n->lock);
    int last = --n->refs == 0;
    pthread_mutex_unlock(&n->lock);
    if (last) {
        n->rows->notify_free(n->listener);
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

/* The backend's listener: a notification for id from origin arrived. */
static void on_notify(void *arg, int id, int origin) {
    clampi_notify *n = arg;
    if (id < 0 || id >= CMPIX_NOTIFY_MAX) return;
    pthread_mutex_lock(&n->lock);
    arrive(n, id, origin);
    pthread_mutex_unlock(&n->lock);
}

/* The family root's notification state, set up on first use. */
static clampi_notify *notify_of(clampi_win *w) {
    clampi_win *root = clampi_rmax_root(w);
    clampi_rmax *x = clampi_rmax_of(root);
    const clampi_backend_ext *e = clampi_rmax_ext(root);
    if (!x || !e) return NULL;
    clampi_notify *n = __atomic_load_n(&x->notify, __ATOMIC_ACQUIRE);
    if (n) return n;
    static pthread_mutex_t setup = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&setup);
    if (!(n = x->notify) && (n = calloc(1, sizeof *n))) {
        pthread_mutex_init(&n->lock, NULL);
        n->refs = 1;
        n->rows = e;
        if (!(n->listener = e->notify_listen(&root->b, clampi_rmax_win_id(root), on_notify, n))) {
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
    n->rows->notify_stop(&w->b, n->listener);
    w->rmax->notify = NULL;
    unref(n);
}

void clampi_rmax_notify_setup(clampi_win *w) { (void)notify_of(w); }

int CMPIX_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, int notify_id,
                     CMPI_Win win) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    const clampi_backend_ext *e = clampi_rmax_ext(w);
    if (!e) return clampi_raise_win(w, CLAMPI_E_WIN);
    if (notify_id < 0 || notify_id >= CMPIX_NOTIFY_MAX) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
    int rc = CMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win);
    if (rc != MPI_SUCCESS) return rc;
    return e->notify_send(&w->b, target_rank, clampi_rmax_win_id(clampi_rmax_root(w)), notify_id);
}

static int notify_poll(void *ctx, MPI_Status *status) {
    notify_req *r = ctx;
    if (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
        r->n->rows->notify_progress(r->n->listener);
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
    if (!clampi_rmax_ext(w)) return clampi_raise_win(w, CLAMPI_E_WIN);
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
