/* CMPI_Put and CMPI_Accumulate: forwarded to MPI; the cached bytes they may overwrite
 * (and gets in flight over them) are dropped, so no later get returns the old value. */
#include "rma/access.h"

static int after_write(clampi_win *w, int target, const clampi_access *a) {
    clampi_win_mark_outstanding(w, target);
    w->n.puts++;
    if (a->target.bytes == 0) return MPI_SUCCESS;
    /* The bounding range: for a non-contiguous target type this drops a little more
     * than is written, never less. */
    if (w->caches_data) clampi_cache_invalidate_range(&w->cache, (uint32_t)target, a->offset, a->target.span);
    clampi_inflight_forget_overlapping(&w->inflight, (uint32_t)target, a->offset, a->target.span);
    return MPI_SUCCESS;
}

#define CHECK_WRITE(w, win, a)                                                                    \
    clampi_win *w = clampi_registry_find(win);                                                    \
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);                                              \
    if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;                                         \
    clampi_access a;                                                                              \
    int err = clampi_access_check(w, origin_count, origin_datatype, target_rank, target_disp,     \
                                  target_count, target_datatype, &a);                             \
    if (err >= 0) return clampi_raise_win(w, (clampi_error)err)

int CMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, CMPI_Win win) {
    CHECK_WRITE(w, win, a);
    int rc = MPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, w->win);
    return rc != MPI_SUCCESS ? rc : after_write(w, target_rank, &a);
}

int CMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, CMPI_Win win) {
    CHECK_WRITE(w, win, a);
    int rc = MPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                            target_datatype, op, w->win);
    return rc != MPI_SUCCESS ? rc : after_write(w, target_rank, &a);
}
