/* Target notification on UCX windows (the ext rows notify_*): the origin flushes the
 * endpoint its put went through (the data is at the target), then sends a UCX active
 * message {window id, notify id, origin rank} to the target's process worker, so a
 * notification never overtakes its data on any transport. The target's handler runs
 * wherever that worker is progressed (the progress thread, or notify_progress). */
#include <stdlib.h>
#include <string.h>

#include "backends/ucx/ucx_win.h"
#include "services/ucx/context.h"

#define NOTIFY_AM_ID 0x6e6f /* "no": distinct from the message layer's ids */

typedef struct listener {
    ucp_worker_h worker;
    void (*arrived)(void *arg, int id, int origin);
    void *arg;
} listener;

typedef struct {
    uint64_t win_id;
    int32_t id, origin;
} notify_msg;

static ucs_status_t on_notify(void *arg, const void *header, size_t header_length, void *data, size_t length,
                              const ucp_am_recv_param_t *param) {
    (void)data, (void)length, (void)param;
    listener *l = arg;
    notify_msg m;
    if (header_length != sizeof m) return UCS_OK;
    memcpy(&m, header, sizeof m);
    l->arrived(l->arg, m.id, m.origin);
    return UCS_OK;
}

/* The handler goes on the shared process worker, which every peer's endpoint reaches. */
void *clampi_ucx_notify_listen(clampi_bwin *b, void (*arrived)(void *arg, int id, int origin), void *arg) {
    clampi_ucx_win *u = clampi_ucx_of(b);
    listener *l = u ? calloc(1, sizeof *l) : NULL;
    if (!l) return NULL;
    *l = (listener){.worker = u->main.worker, .arrived = arrived, .arg = arg};
    ucp_am_handler_param_t p = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                                              UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                .id = NOTIFY_AM_ID,
                                .cb = on_notify,
                                .arg = l};
    if (ucp_worker_set_am_recv_handler(l->worker, &p) != UCS_OK) {
        free(l);
        return NULL;
    }
    return l;
}

void clampi_ucx_notify_stop(clampi_bwin *b, void *l) {
    ucp_am_handler_param_t p = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB, .id = NOTIFY_AM_ID, .cb = NULL};
    if (clampi_ucx_of(b)) ucp_worker_set_am_recv_handler(((listener *)l)->worker, &p);
}

/* The worker is the process's (the UCX service's): it outlives the window. */
void clampi_ucx_notify_progress(void *l) { ucp_worker_progress(((listener *)l)->worker); }
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
