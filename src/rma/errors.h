/* Errors on a window: the error table is common/errors.h; this adds the clampi_win form. */
#ifndef CLAMPI_RMA_ERRORS_H
#define CLAMPI_RMA_ERRORS_H
#include "common/errors.h"
#include "rma/window.h"

/* Raise e through the window's error handler (a family window's own MPI_Win where it has
 * one: the handle the program holds); returns the code. */
static inline int clampi_raise_win(const clampi_win *w, clampi_error e) { return clampi_bwin_raise(&w->b, e); }
#endif
