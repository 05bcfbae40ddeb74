/* CMPIX_Rrput, CMPIX_Rraccumulate, CMPIX_Rrget_accumulate (the Quo Vadis RMA paper, §5.2):
 * the operation, then the backend's rflush: a request that completes when the operation is
 * complete at the target, without waiting for anything else of the window or of other
 * threads' lanes (on UCX: a non-blocking flush of the one endpoint it went through). On an
 * MPI-backend window MPI has no such request: the operation is flushed to its target
 * before the call returns and the request is returned complete. */
#include "clampi/rmax.h"
#include "common/greq.h"
#include "rma/errors.h"
#include "rmax/family.h"

/* After a successful operation on w to target: the request. */
static int remote_completion_request(clampi_win *w, int target, MPI_Request *request) {
    const clampi_backend_ext *e = clampi_rmax_ext(w);
    if (e) return e->rflush(&w->b, target, request);
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
