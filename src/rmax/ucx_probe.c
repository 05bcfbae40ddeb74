/* Diagnostics of UCX windows, by CMPI_Win handle (the backend takes its own view). */
#include "rmax/ucx_probe.h"

#include "backends/ucx/memhandle.h"
#include "rma/window.h"

static const clampi_bwin *ucx_window(CMPI_Win win) {
    clampi_win *w = clampi_registry_find(win);
    return w && w->b.state ? &w->b : NULL; /* MPI windows have no backend state */
}

int clampi_ucx_test_counters(CMPI_Win win, clampi_ucx_counters *out) {
    const clampi_bwin *b = ucx_window(win);
    if (!b || !out) return MPI_ERR_WIN;
    clampi_ucx_counters_of(b, out);
    return MPI_SUCCESS;
}

int clampi_ucx_test_flush_probe(CMPI_Win win, clampi_ucx_flush_probe *out) {
    const clampi_bwin *b = ucx_window(win);
    if (!b || !out) return MPI_ERR_WIN;
    clampi_ucx_flush_probe_of(b, out);
    return MPI_SUCCESS;
}

int clampi_ucx_test_mh_direct(CMPI_Win win) {
    const clampi_bwin *b = ucx_window(win);
    const clampi_mh_win *m = b ? clampi_ucx_mh_of(b) : NULL;
    return m ? m->direct != NULL : -1;
}
