/* The memory-handle and notification calls in a build without UCX (CLAMPI_HAVE_UCX=0):
 * every window is an MPI-backend window, on which these calls raise MPI_ERR_WIN through
 * the window's handler, as they do on such a window in a UCX build (include/clampi/rmax.h).
 * No handle can have been created, so a release names none: MPI_ERR_ARG. */
#include "clampi/rmax.h"
#include "rma/errors.h"
#include "rma/window.h"

#define NOT_ON_MPI_WINDOWS(win)                                                            \
    do {                                                                                   \
        clampi_win *w_ = clampi_registry_find(win);                                        \
        return w_ ? clampi_raise_win(w_, CLAMPI_E_WIN) : clampi_raise_nowin(CLAMPI_E_WIN); \
    } while (0)

int CMPIX_Memhandle_create(void *base, MPI_Aint size, CMPI_Win win, void *memhandle, int *memhandle_size) {
    NOT_ON_MPI_WINDOWS(win);
}

int CMPIX_Win_from_memhandle(const void *memhandle, int memhandle_size, int target_rank, int disp_unit, MPI_Info info,
                             CMPI_Win win, CMPI_Win *newwin) {
    NOT_ON_MPI_WINDOWS(win);
}

int CMPIX_Memhandle_release(void *memhandle, CMPI_Win win) {
    clampi_win *w = clampi_registry_find(win);
    return w ? clampi_raise_win(w, CLAMPI_E_ARG) : clampi_raise_nowin(CLAMPI_E_WIN);
}

int CMPIX_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, int notify_id,
                     CMPI_Win win) {
    NOT_ON_MPI_WINDOWS(win);
}

int CMPIX_Win_notify_request(CMPI_Win win, int notify_id, MPI_Request *req) { NOT_ON_MPI_WINDOWS(win); }
