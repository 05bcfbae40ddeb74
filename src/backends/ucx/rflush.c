/* The ext row rflush (CMPIX_Rrput, CMPIX_Rraccumulate, CMPIX_Rrget_accumulate): a
 * non-blocking flush of the one endpoint the operation went through, as an MPI
 * generalized request (common/greq.h) that completes when that flush does, i.e. when the
 * operation is complete at the target, without waiting for anything else of the window
 * or of other threads' lanes. */
#include <stdlib.h>
#include <string.h>

#include "backends/ucx/ucx_win.h"
#include "common/greq.h"
#include "services/ucx/context.h"
#include "services/ucx/mpi_polls.h"

typedef struct rr_ctx {
    clampi_ucx_lane *lane;
    void *req; /* the endpoint flush's UCX request (NULL: done at once) */
    int done;
    ucs_status_t status;
    int target;
} rr_ctx;

static void flushed(void *request, ucs_status_t status, void *user_data) {
    (void)request;
    rr_ctx *c = user_data;
    c->status = status;
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
}

static int rr_poll(void *ctx, MPI_Status *status) {
    rr_ctx *c = ctx;
    if (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
        clampi_ucx_lane_enter(c->lane);
        clampi_ucx_progress(c->lane->worker);
        clampi_ucx_lane_leave(c->lane);
        if (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) return 0;
    }
    status->MPI_SOURCE = c->target;
    status->MPI_ERROR = c->status == UCS_OK ? MPI_SUCCESS : MPI_ERR_OTHER;
    return 1;
}

static void rr_free(void *ctx) {
    rr_ctx *c = ctx;
    if (c->req) ucp_request_free(c->req);
    free(c);
}

int clampi_ucx_rflush(clampi_bwin *b, int target, MPI_Request *request) {
    rr_ctx *c = calloc(1, sizeof *c);
    if (!c) return clampi_bwin_raise(b, CLAMPI_E_NOMEM);
    c->lane = clampi_ucx_issue_lane(b);
    c->target = target;
    if (!c->lane) {
        free(c);
        return clampi_bwin_raise(b, CLAMPI_E_UCX);
    }
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = flushed;
    p.user_data = c;
    clampi_ucx_lane_enter(c->lane);
    /* no endpoint yet: this lane never handed the target anything, there is nothing to complete */
    void *r = clampi_ucx_lane_ep_if_any(c->lane, target)
                  ? ucp_ep_flush_nbx(clampi_ucx_lane_ep(clampi_ucx_of(b), c->lane, target), &p)
                  : NULL;
    clampi_ucx_lane_leave(c->lane);
    if (UCS_PTR_IS_ERR(r)) {
        free(c);
        return clampi_bwin_raise(b, CLAMPI_E_UCX);
    }
    if (r)
        c->req = r;
    else
        c->done = 1;
    int rc = clampi_greq_start(rr_poll, c, rr_free, NULL, request);
    if (rc != MPI_SUCCESS) {
        if (r) { /* wait for the flush here: its callback writes to c */
            clampi_ucx_lane_enter(c->lane);
            clampi_ucx_wait(c->lane->worker, r);
            clampi_ucx_lane_leave(c->lane);
        }
        free(c);
        return clampi_bwin_raise(b, CLAMPI_E_NOMEM);
    }
    return MPI_SUCCESS;
}
