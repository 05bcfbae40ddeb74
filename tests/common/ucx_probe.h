/* Diagnostics of UCX windows for the tests, by CMPI_Win handle (tests that include it link
 * clampi_static and read the backend's state directly; the library has no such calls). */
#ifndef CLAMPI_TESTS_UCX_PROBE_H
#define CLAMPI_TESTS_UCX_PROBE_H
#include "backends/ucx/memhandle.h"
#include "backends/ucx/ucx_win.h"
#include "rma/window.h"

static inline const clampi_bwin *clampi_test_ucx_window(CMPI_Win win) {
    clampi_win *w = clampi_registry_find(win);
    return w && w->b.state ? &w->b : NULL; /* MPI windows have no backend state */
}

/* The window's backend counters. MPI_ERR_WIN if win is not a UCX window. */
static inline int clampi_ucx_test_counters(CMPI_Win win, clampi_ucx_counters *out) {
    const clampi_bwin *b = clampi_test_ucx_window(win);
    if (!b || !out) return MPI_ERR_WIN;
    clampi_ucx_counters_of(b, out);
    return MPI_SUCCESS;
}

/* The calling thread's flush probe on win (zero if it never flushed). MPI_ERR_WIN if win
 * is not a UCX window. */
static inline int clampi_ucx_test_flush_probe(CMPI_Win win, clampi_ucx_flush_probe *out) {
    const clampi_bwin *b = clampi_test_ucx_window(win);
    if (!b || !out) return MPI_ERR_WIN;
    clampi_ucx_flush_probe_of(b, out);
    return MPI_SUCCESS;
}

/* The communicator the window talks on, its slot there, and whether it shares it with the
 * other windows of its communicator. MPI_ERR_WIN if win is not a UCX window. */
static inline int clampi_ucx_test_comm(CMPI_Win win, MPI_Comm *comm, int *slot, int *shared) {
    const clampi_bwin *b = clampi_test_ucx_window(win);
    if (!b) return MPI_ERR_WIN;
    const clampi_ucx_win *u = clampi_ucx_of(b);
    *comm = u->comm, *slot = u->slot, *shared = u->wcomm != NULL;
    return MPI_SUCCESS;
}

/* 1 if win is a memory-handle window whose puts and gets are loads and stores (the region
 * is in a node-shared heap this process maps), 0 if not, -1 if win is no such window. */
static inline int clampi_ucx_test_mh_direct(CMPI_Win win) {
    const clampi_bwin *b = clampi_test_ucx_window(win);
    const clampi_mh_win *m = b ? clampi_ucx_mh_of(b) : NULL;
    return m ? m->direct != NULL : -1;
}

/* The bytes of a memory-handle window's region reached by load and store: [*lo, *hi)
 * (both 0 when none), and how many puts and gets went that way. MPI_ERR_WIN if win is no
 * such window. */
static inline int clampi_ucx_test_mh_direct_bytes(CMPI_Win win, uint64_t *lo, uint64_t *hi, uint64_t *ops) {
    const clampi_bwin *b = clampi_test_ucx_window(win);
    const clampi_mh_win *m = b ? clampi_ucx_mh_of(b) : NULL;
    if (!m) return MPI_ERR_WIN;
    *lo = m->direct ? m->direct_lo : 0;
    *hi = m->direct ? m->direct_hi : 0;
    *ops = m->direct_ops; /* puts and gets done by load/store so far */
    return MPI_SUCCESS;
}
#endif
