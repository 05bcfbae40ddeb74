/* Writes and atomics: forwarded to the window's backend; the cached bytes they may overwrite (and gets in
 * flight over them) are dropped, so no later get returns the old value. CMPI_Put and
 * CMPI_Accumulate here; the preload brackets every other write or atomic MPI call
 * (MPI_Rput, MPI_Get_accumulate, MPI_Fetch_and_op, ...) with the same two functions. */
#include "backends/access.h"
#include "rma/errors.h"
#include "rma/window.h"

int clampi_win_write_begin(clampi_win *w, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                           int target_count, MPI_Datatype target_type, clampi_access *a) {
    clampi_win_enter(w);
    int err = clampi_access_check(&w->b, origin_count, origin_type, target, disp, target_count, target_type, a);
    if (err >= 0) {
        clampi_win_leave(w);
        return CLAMPI_ARG_ERROR(err);
    }
    return -1;
}

int clampi_win_write_end(clampi_win *w, int target, const clampi_access *a, int rc) {
    if (rc == MPI_SUCCESS) {
        clampi_win_mark_outstanding(w, target);
        CLAMPI_WIN_COUNT(w, puts, 1);
        /* The bounding range: for a non-contiguous target type this drops a little more
         * than is written, never less. */
        if (a->target.bytes) {
            if (w->caches_data) clampi_cache_invalidate_range(&w->cache, (uint32_t)target, a->offset, a->target.span);
            if (w->inflight.live) /* none in flight (always, on an uncached window): no call */
                clampi_inflight_forget_overlapping(&w->inflight, (uint32_t)target, a->offset, a->target.span);
        }
    }
    clampi_win_leave(w);
    return rc;
}

#define CHECK_WRITE(w, win, a)                                                                                 \
    clampi_win *w = clampi_registry_find(win);                                                                 \
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);                                                           \
    if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;                                                      \
    clampi_access a;                                                                                           \
    int err = clampi_win_write_begin(w, origin_count, origin_datatype, target_rank, target_disp, target_count, \
                                     target_datatype, &a);                                                     \
    if (err != -1) return clampi_raise_win(w, CLAMPI_ARG_ERROR_CODE(err))

int CMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, CMPI_Win win) {
    CHECK_WRITE(w, win, a);
    int rc = w->b.ops->put(&w->b, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                           target_datatype);
    return clampi_win_write_end(w, target_rank, &a, rc);
}

int CMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, CMPI_Win win) {
    CHECK_WRITE(w, win, a);
    int rc = w->b.ops->accumulate(&w->b, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                  target_count, target_datatype, op);
    return clampi_win_write_end(w, target_rank, &a, rc);
}
