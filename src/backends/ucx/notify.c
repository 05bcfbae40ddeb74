/* Target notification on UCX windows (the ext rows notify_*): the origin flushes the
 * endpoint its put went through (the data is at the target), then sends a UCX active
 * message {window id, notify id, origin rank} to the target's process worker, so a
 * notification never overtakes its data on any transport. The target's handler runs
 * wherever that worker is progressed (the progress thread, or notify_progress). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ucx/ucx_win.h"
#include "services/ucx/context.h"
#include "services/ucx/mpi_polls.h"

#define NOTIFY_AM_ID 0x6e6f /* "no": distinct from the message layer's ids */

/* The process worker is shared by every UCX window (context.h) and takes one handler per
 * AM id, so the handler finds the window's listener by the window's id, which the origin
 * sends along (the same on every rank). */
typedef struct listener {
    ucp_worker_h worker;
    clampi_ucx_poller *poller; /* the worker's: a program waiting for arrivals polls it */
    uint64_t win_id;
    void (*arrived)(void *arg, int id, int origin);
    void *arg;
    struct listener *next;
} listener;

static listener *listeners;
/* held while a notification is delivered: after notify_stop, no arrival runs */
static pthread_mutex_t listeners_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    uint64_t win_id;
    int32_t id, origin;
} notify_msg;

static ucs_status_t on_notify(void *arg, const void *header, size_t header_length, void *data, size_t length,
                              const ucp_am_recv_param_t *param) {
    (void)data, (void)length, (void)param;
    ucp_worker_h worker = arg;
    notify_msg m;
    if (header_length != sizeof m) return UCS_OK;
    memcpy(&m, header, sizeof m);
    pthread_mutex_lock(&listeners_lock);
    for (listener *l = listeners; l; l = l->next)
        if (l->worker == worker && l->win_id == m.win_id) {
            l->arrived(l->arg, m.id, m.origin);
            break;
        }
    pthread_mutex_unlock(&listeners_lock); /* a window already freed: dropped */
    return UCS_OK;
}

void *clampi_ucx_notify_listen(clampi_bwin *b, uint64_t win_id, void (*arrived)(void *arg, int id, int origin),
                               void *arg) {
    clampi_ucx_win *u = clampi_ucx_of(b);
    listener *l = u ? calloc(1, sizeof *l) : NULL;
    if (!l) return NULL;
    *l = (listener){
        .worker = u->main.worker, .poller = u->main.poller, .win_id = win_id, .arrived = arrived, .arg = arg};
    /* the same handler each time (setting it again is harmless): it outlives the listeners */
    ucp_am_handler_param_t p = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                                              UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                .id = NOTIFY_AM_ID,
                                .cb = on_notify,
                                .arg = l->worker};
    if (ucp_worker_set_am_recv_handler(l->worker, &p) != UCS_OK) {
        free(l);
        return NULL;
    }
    pthread_mutex_lock(&listeners_lock);
    l->next = listeners;
    listeners = l;
    pthread_mutex_unlock(&listeners_lock);
    return l;
}

void clampi_ucx_notify_stop(clampi_bwin *b, void *stopped) {
    (void)b;
    pthread_mutex_lock(&listeners_lock);
    for (listener **p = &listeners; *p; p = &(*p)->next)
        if (*p == stopped) {
            *p = ((listener *)stopped)->next;
            break;
        }
    pthread_mutex_unlock(&listeners_lock);
}

/* The worker is the process's (the UCX service's): it outlives the window. */
void clampi_ucx_notify_progress(void *arg) {
    listener *l = arg;
    clampi_ucx_poller_progress(l->poller, l->worker);
}
void clampi_ucx_notify_free(void *l) { free(l); }

int clampi_ucx_notify_send(clampi_bwin *b, int target, uint64_t win_id, int id) {
    clampi_ucx_lane *l = clampi_ucx_issue_lane(b);
    if (!l) return clampi_bwin_raise(b, CLAMPI_E_UCX);
    clampi_ucx_lane_enter(l);
    ucp_ep_h ep = clampi_ucx_lane_ep(clampi_ucx_of(b), l, target);
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    ucs_status_t st = ep ? clampi_ucx_wait(l->worker, ucp_ep_flush_nbx(ep, &p)) : UCS_ERR_UNREACHABLE;
    if (st == UCS_OK) {
        notify_msg m = {.win_id = win_id, .id = id, .origin = b->rank};
        memset(&p, 0, sizeof p);
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_AM_SEND_FLAG_EAGER;
        st = clampi_ucx_wait(l->worker, ucp_am_send_nbx(ep, NOTIFY_AM_ID, &m, sizeof m, NULL, 0, &p));
    }
    clampi_ucx_lane_leave(l);
    return st == UCS_OK ? MPI_SUCCESS : clampi_bwin_raise(b, CLAMPI_E_UCX);
}
