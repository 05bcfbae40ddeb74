#include "common/greq.h"
#include "common/progress_hook.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct clampi_greq {
    clampi_greq_poll_fn poll;
    void *ctx;
    void (*free_ctx)(void *);
    clampi_greq_cancel_fn cancel;
    int cancelled; /* MPI_Cancel withdrew it: the next poll completes it */
    MPI_Request req;
    MPI_Status status;
    int completed;     /* MPI_Grequest_complete was called */
    clampi_greq *next; /* pending list */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static clampi_greq *pending;
static int npending; /* read without the lock by the progress hook: a cheap early exit */

/* ---- the generalized request callbacks ---------------------------------------------- */
static int query_fn(void *extra, MPI_Status *status) {
    clampi_greq *g = extra;
    *status = g->status;
    return MPI_SUCCESS;
}

static int free_fn(void *extra) {
    clampi_greq *g = extra;
    if (g->free_ctx) g->free_ctx(g->ctx);
    free(g);
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete) {
    clampi_greq *g = extra;
    if (!complete && g->cancel && g->cancel(g->ctx)) __atomic_store_n(&g->cancelled, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS; /* otherwise not cancellable: the operation is in flight */
}

/* Takes the done requests off the list under the lock, completes them outside it. */
void clampi_greq_progress(void) {
    if (!__atomic_load_n(&npending, __ATOMIC_ACQUIRE)) return;
    if (pthread_mutex_trylock(&lock) != 0) return; /* someone else is polling */
    clampi_greq *done = NULL, **p = &pending;
    while (*p) {
        clampi_greq *g = *p;
        if (__atomic_load_n(&g->cancelled, __ATOMIC_ACQUIRE)) MPI_Status_set_cancelled(&g->status, 1);
        if (__atomic_load_n(&g->cancelled, __ATOMIC_ACQUIRE) || g->poll(g->ctx, &g->status)) {
            *p = g->next;
            g->next = done;
            done = g;
            __atomic_sub_fetch(&npending, 1, __ATOMIC_RELEASE);
        } else {
            p = &g->next;
        }
    }
    pthread_mutex_unlock(&lock);
    while (done) {
        clampi_greq *g = done;
        done = g->next;
        g->completed = 1;
        MPI_Grequest_complete(g->req); /* g may be freed by a waiter from here on */
    }
}

/* ---- hooking the MPI's progress ----------------------------------------------------- */
#if defined(MPICH_VERSION)
static int poll_fn(void *extra, MPI_Status *status) {
    (void)extra, (void)status;
    clampi_greq_progress();
    return MPI_SUCCESS;
}
static int wait_fn(int count, void **extra, double timeout, MPI_Status *status) {
    (void)count, (void)extra, (void)timeout, (void)status;
    clampi_greq_progress();
    return MPI_SUCCESS;
}
static int start_request(clampi_greq *g) {
    return MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, g, &g->req);
}
static void ensure_hook(void) {}
#else
static void *helper(void *unused) {
    (void)unused;
    for (;;) {
        clampi_greq_progress();
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;
static void install_hook(void) {
    /* Open MPI runs the callback in its progress engine: the request progresses in MPI_Wait. */
    if (clampi_progress_hook_add(clampi_greq_progress)) return;
    pthread_t t;
    if (pthread_create(&t, NULL, helper, NULL) == 0) pthread_detach(t);
}
static void ensure_hook(void) { pthread_once(&hook_once, install_hook); }
static int start_request(clampi_greq *g) { return MPI_Grequest_start(query_fn, free_fn, cancel_fn, g, &g->req); }
#endif

int clampi_greq_start(clampi_greq_poll_fn poll, void *ctx, void (*free_ctx)(void *), clampi_greq_cancel_fn cancel,
                      MPI_Request *req) {
    clampi_greq *g = calloc(1, sizeof *g);
    if (!g) return MPI_ERR_NO_MEM;
    g->poll = poll;
    g->ctx = ctx;
    g->free_ctx = free_ctx;
    g->cancel = cancel;
    g->status.MPI_SOURCE = MPI_UNDEFINED;
    g->status.MPI_TAG = MPI_UNDEFINED;
    g->status.MPI_ERROR = MPI_SUCCESS;
    ensure_hook();
    int rc = start_request(g);
    if (rc != MPI_SUCCESS) {
        free(g);
        return rc;
    }
    *req = g->req;
    pthread_mutex_lock(&lock);
    g->next = pending;
    pending = g;
    __atomic_add_fetch(&npending, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    clampi_greq_progress(); /* already done (e.g. shared memory): complete at once */
    return MPI_SUCCESS;
}

/* Complete requests: nothing to query, free or cancel. */
static int greq_query(void *extra, MPI_Status *status) {
    (void)extra;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int greq_free(void *extra) {
    (void)extra;
    return MPI_SUCCESS;
}
static int greq_cancel(void *extra, int complete) {
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

int clampi_request_done(MPI_Request *req) {
    int rc = MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, req);
    if (rc == MPI_SUCCESS) rc = MPI_Grequest_complete(*req);
    return rc;
}
