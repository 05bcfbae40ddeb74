/* CMPIX_Rrput, CMPIX_Rraccumulate, CMPIX_Rrget_accumulate (the Quo Vadis RMA paper, §5.2): the operation, then
 * a non-blocking flush of the one endpoint it went through; the request (an MPI generalized
 * request, see greq.h) completes when that endpoint flush does, i.e. when the operation is
 * complete at the target, without waiting for anything else of the window or of other
 * threads' lanes. On an MPI-backend window MPI has no such request: the operation is
 * flushed to its target before the call returns and the request is returned complete. */
#include <stdlib.h>
#include <string.h>

#include "clampi/rmax.h"
#include "common/greq.h"
#include "rma/errors.h"
#include "rmax/ucx_parts.h"
#if CLAMPI_HAVE_UCX
#include "services/ucx/context.h"
#include "rmax/ucx_access.h"

typedef struct rr_ctx {
    void *lane;
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
        clampi_rmax_lane_enter(c->lane);
        ucp_worker_progress(clampi_rmax_lane_worker(c->lane));
        clampi_rmax_lane_leave(c->lane);
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

/* A UCX window: a request that completes with the flush of the one endpoint used. */
static int ucx_completion_request(clampi_win *w, int target, MPI_Request *request) {
    rr_ctx *c = calloc(1, sizeof *c);
    if (!c) return clampi_raise_win(w, CLAMPI_E_NOMEM);
    c->lane = clampi_rmax_lane(w);
    c->target = target;
    if (!c->lane) {
        free(c);
        return clampi_raise_win(w, CLAMPI_E_UCX);
    }
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = flushed;
    p.user_data = c;
    clampi_rmax_lane_enter(c->lane);
    void *r = ucp_ep_flush_nbx(clampi_rmax_lane_ep(w, c->lane, target), &p);
    clampi_rmax_lane_leave(c->lane);
    if (UCS_PTR_IS_ERR(r)) {
        free(c);
        return clampi_raise_win(w, CLAMPI_E_UCX);
    }
    if (r)
        c->req = r;
    else
        c->done = 1;
    int rc = clampi_greq_start(rr_poll, c, rr_free, NULL, request);
    if (rc != MPI_SUCCESS) {
        if (r) { /* wait for the flush here: its callback writes to c */
            clampi_rmax_lane_enter(c->lane);
            clampi_ucx_wait(clampi_rmax_lane_worker(c->lane), r);
            clampi_rmax_lane_leave(c->lane);
        }
        free(c);
        return clampi_raise_win(w, CLAMPI_E_NOMEM);
    }
    return MPI_SUCCESS;
}

#endif

/* After a successful operation on w to target: the request. */
static int remote_completion_request(clampi_win *w, int target, MPI_Request *request) {
#if CLAMPI_HAVE_UCX
    if (clampi_rmax_is_ucx(w)) return ucx_completion_request(w, target, request);
#endif
    int rc = w->b.ops->flush(&w->b, target);
    return rc == MPI_SUCCESS ? clampi_request_done(request) : rc;
}

#define FIND_RR(w, win, request)                     \
    clampi_win *w = clampi_registry_find(win);       \
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN); \
    if (!request) return clampi_raise_win(w, CLAMPI_E_ARG)

int CMPIX_Rrput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, CMPI_Win win,
                MPI_Request *request) {
    FIND_RR(w, win, request);
    int rc = CMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win);
    if (rc != MPI_SUCCESS) return rc;
    if (target_rank == MPI_PROC_NULL) return clampi_request_done(request);
    return remote_completion_request(w, target_rank, request);
}

int CMPIX_Rraccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                       MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, CMPI_Win win,
                       MPI_Request *request) {
    FIND_RR(w, win, request);
    int rc = CMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, win);
    if (rc != MPI_SUCCESS) return rc;
    if (target_rank == MPI_PROC_NULL) return clampi_request_done(request);
    return remote_completion_request(w, target_rank, request);
}

int CMPIX_Rrget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                           int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                           int target_count, MPI_Datatype target_datatype, MPI_Op op, CMPI_Win win,
                           MPI_Request *request) {
    FIND_RR(w, win, request);
    int rc = CMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                                 target_rank, target_disp, target_count, target_datatype, op, win);
    if (rc != MPI_SUCCESS) return rc;
    if (target_rank == MPI_PROC_NULL) return clampi_request_done(request);
    return remote_completion_request(w, target_rank, request);
}
