/* The paper's MPIX_ functions on MPI_Win (<clampi/mpix.h>), exported by libclampi_pmpi.
 *
 * Each finds the window's clampi state (the preload attached it at creation) and calls the
 * CMPIX_ function on its CMPI_ handle. Windows they create (duplicates, memory-handle
 * windows) get an MPI_Win of their own: a zero-size window on MPI_COMM_SELF, which the
 * preload maps to the new clampi state (preload.c: the family attribute). So the program
 * holds a real MPI window handle: every MPI_ RMA call on it is served by clampi, an MPI
 * call clampi does not wrap reaches MPI with a valid (one-process, empty) window and gets
 * MPI's own answer or error, and MPI_Win_free frees it. Errors raised on such a window go
 * to that handle's error handler (initially the parent's). */
#include <mpi.h>

#include "clampi/export.h"

#include "clampi/mpix.h"
#include "clampi/rmax.h"
#include "pmpi/preload_internal.h"
#include "rma/errors.h"
#include "rmax/family.h"

_Static_assert(MPI_MAX_MEMHANDLE_SIZE >= CMPIX_MAX_MEMHANDLE_SIZE, "memory handles fit MPI_MAX_MEMHANDLE_SIZE");

/* The window's state; a window clampi does not know: MPI_ERR_WIN on MPI_COMM_WORLD. */
#define WIN_OF(w, win)                     \
    clampi_win *w = clampi_pmpi_find(win); \
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN)

/* A new family window (CMPI_ handle child, made from parent) gets its MPI_Win. */
static int adopt(clampi_win *parent, CMPI_Win child, MPI_Win *newwin) {
    MPI_Win own = MPI_WIN_NULL;
    void *base = NULL;
    int rc = PMPI_Win_allocate(0, 1, MPI_INFO_NULL, MPI_COMM_SELF, &base, &own);
    if (rc == MPI_SUCCESS) {
        MPI_Errhandler eh;
        if (PMPI_Win_get_errhandler(parent->b.err_win, &eh) == MPI_SUCCESS) {
            PMPI_Win_set_errhandler(own, eh);
            PMPI_Errhandler_free(&eh);
        }
        rc = clampi_pmpi_family_adopt(own, child);
        if (rc != MPI_SUCCESS) PMPI_Win_free(&own);
    }
    clampi_win *c = clampi_registry_find(child);
    if (rc != MPI_SUCCESS || !c) {
        if (c) CMPI_Win_free(&child);
        return clampi_raise_win(parent, CLAMPI_E_NOMEM);
    }
    c->self = child; /* (a clone: it had the parent's) */
    c->b.err_win = own;
    c->cmpi_route = 1;
    /* the family's members lock and flush through the CMPI_ layer from now on */
    clampi_pmpi_route(parent);
    if (c->rmax && c->rmax->parent) clampi_pmpi_route(c->rmax->parent);
    *newwin = own;
    return MPI_SUCCESS;
}

CLAMPI_API int MPIX_Win_dup_with_info(MPI_Win win, MPI_Info info, MPI_Win *newwin) {
    WIN_OF(w, win);
    if (!newwin) return clampi_raise_win(w, CLAMPI_E_ARG);
    CMPI_Win child;
    int rc = CMPIX_Win_dup_with_info(w->self, info, &child);
    return rc == MPI_SUCCESS ? adopt(w, child, newwin) : rc;
}

CLAMPI_API int MPIX_Win_op_intrinsic(const char *ops, int max_count, MPI_Datatype datatype, MPI_Win win, int *flag) {
    WIN_OF(w, win);
    return CMPIX_Win_op_intrinsic(ops, max_count, datatype, w->self, flag);
}

CLAMPI_API int MPIX_Memhandle_create(void *base, MPI_Aint size, MPI_Win win, void *memhandle, int *memhandle_size) {
    WIN_OF(w, win);
    return CMPIX_Memhandle_create(base, size, w->self, memhandle, memhandle_size);
}

CLAMPI_API int MPIX_Win_from_memhandle(const void *memhandle, int memhandle_size, int target_rank, int disp_unit,
                                       MPI_Info info, MPI_Win win, MPI_Win *newwin) {
    WIN_OF(w, win);
    if (!newwin) return clampi_raise_win(w, CLAMPI_E_ARG);
    CMPI_Win child;
    int rc = CMPIX_Win_from_memhandle(memhandle, memhandle_size, target_rank, disp_unit, info, w->self, &child);
    return rc == MPI_SUCCESS ? adopt(w, child, newwin) : rc;
}

CLAMPI_API int MPIX_Memhandle_release(void *memhandle, MPI_Win win) {
    WIN_OF(w, win);
    return CMPIX_Memhandle_release(memhandle, w->self);
}

CLAMPI_API int MPIX_Rrput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                          MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                          MPI_Request *request) {
    WIN_OF(w, win);
    return CMPIX_Rrput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, w->self, request);
}

CLAMPI_API int MPIX_Rraccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                 int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
                                 MPI_Op op, MPI_Win win, MPI_Request *request) {
    WIN_OF(w, win);
    return CMPIX_Rraccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                              target_datatype, op, w->self, request);
}

CLAMPI_API int MPIX_Rrget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                     void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                     MPI_Win win, MPI_Request *request) {
    WIN_OF(w, win);
    return CMPIX_Rrget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                  result_datatype, target_rank, target_disp, target_count, target_datatype, op, w->self,
                                  request);
}

CLAMPI_API int MPIX_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, int notify_id,
                               MPI_Win win) {
    WIN_OF(w, win);
    return CMPIX_Put_notify(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                            target_datatype, notify_id, w->self);
}

CLAMPI_API int MPIX_Win_notify_request(MPI_Win win, int notify_id, MPI_Request *request) {
    WIN_OF(w, win);
    return CMPIX_Win_notify_request(w->self, notify_id, request);
}
