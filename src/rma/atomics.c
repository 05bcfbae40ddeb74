/* CMPI_Get_accumulate, CMPI_Fetch_and_op, CMPI_Compare_and_swap, CMPI_Rput, CMPI_Rget:
 * argument checks and cache invalidation here (write_begin/write_end, as for CMPI_Put),
 * the operation itself in the window's backend. CMPI_Rget goes through the cache like
 * CMPI_Get; when the cache (or same-node shared memory) serves it, the request returned
 * is an already complete generalized request. */
#include "backends/access.h"
#include "common/greq.h"
#include "rma/window.h"
#include "rma/errors.h"

/* The checks of every write: window, MPI_PROC_NULL, target range (the target's count and
 * type on both sides, as the origin/result layouts are the backend's to check). */
#define BEGIN_WRITE(w, win, target, disp, tcount, ttype, a)                               \
    clampi_win *w = clampi_registry_find(win);                                            \
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);                                      \
    if ((target) == MPI_PROC_NULL) return MPI_SUCCESS;                                    \
    clampi_access a;                                                                      \
    int err_ = clampi_win_write_begin(w, tcount, ttype, target, disp, tcount, ttype, &a); \
    if (err_ != -1) return clampi_raise_win(w, CLAMPI_ARG_ERROR_CODE(err_))

int CMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, CMPI_Win win) {
    BEGIN_WRITE(w, win, target_rank, target_disp, target_count, target_datatype, a);
    int rc = w->b.ops->get_accumulate(&w->b, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                      result_datatype, target_rank, target_disp, target_count, target_datatype, op);
    return clampi_win_write_end(w, target_rank, &a, rc);
}

int CMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, CMPI_Win win) {
    BEGIN_WRITE(w, win, target_rank, target_disp, 1, datatype, a);
    int rc = w->b.ops->fetch_and_op(&w->b, origin_addr, result_addr, datatype, target_rank, target_disp, op);
    return clampi_win_write_end(w, target_rank, &a, rc);
}

int CMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype,
                          int target_rank, MPI_Aint target_disp, CMPI_Win win) {
    BEGIN_WRITE(w, win, target_rank, target_disp, 1, datatype, a);
    int rc =
        w->b.ops->compare_and_swap(&w->b, origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp);
    return clampi_win_write_end(w, target_rank, &a, rc);
}

int CMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, CMPI_Win win,
              MPI_Request *request) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!request) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (target_rank == MPI_PROC_NULL) return clampi_request_done(request);
    clampi_access a;
    int err = clampi_win_write_begin(w, origin_count, origin_datatype, target_rank, target_disp, target_count,
                                     target_datatype, &a);
    if (err != -1) return clampi_raise_win(w, CLAMPI_ARG_ERROR_CODE(err));
    int rc = w->b.ops->rput(&w->b, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                            target_datatype, request);
    return clampi_win_write_end(w, target_rank, &a, rc);
}

int CMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
              int target_count, MPI_Datatype target_datatype, CMPI_Win win, MPI_Request *request) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!request) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (target_rank == MPI_PROC_NULL) return clampi_request_done(request);
    int served = 0;
    int rc = clampi_win_rget(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, request, &served);
    if (rc < 0) return clampi_raise_win(w, CLAMPI_ARG_ERROR_CODE(rc));
    if (rc == MPI_SUCCESS && served) return clampi_request_done(request);
    return rc;
}

/* MPI_Raccumulate / MPI_Rget_accumulate on windows served through this layer (the
 * preload's UCX and family windows): the operation, completed locally (the backend's
 * accumulates complete at the target before returning; UCX atomics under
 * mpi_assert_accumulate_intrinsic complete with a flush of the target), then an already
 * complete request. */
int clampi_win_raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                           CMPI_Win win, MPI_Request *request) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!request) return clampi_raise_win(w, CLAMPI_E_ARG);
    int rc = CMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, win);
    if (rc == MPI_SUCCESS && target_rank != MPI_PROC_NULL && w->opts.acc_intrinsic)
        rc = w->b.ops->flush_local(&w->b, target_rank);
    return rc == MPI_SUCCESS ? clampi_request_done(request) : rc;
}

int clampi_win_rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                               void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                               CMPI_Win win, MPI_Request *request) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!request) return clampi_raise_win(w, CLAMPI_E_ARG);
    int rc = CMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                                 target_rank, target_disp, target_count, target_datatype, op, win);
    if (rc == MPI_SUCCESS && target_rank != MPI_PROC_NULL && w->opts.acc_intrinsic)
        rc = w->b.ops->flush_local(&w->b, target_rank);
    return rc == MPI_SUCCESS ? clampi_request_done(request) : rc;
}
