/* Diagnostics of UCX windows for the tests (internal: tests link clampi_static). */
#ifndef CLAMPI_RMAX_UCX_PROBE_H
#define CLAMPI_RMAX_UCX_PROBE_H
#include "backends/ucx/ucx_win.h"
#include "clampi/rma.h"

/* The window's backend counters. MPI_ERR_WIN if win is not a UCX window. */
int clampi_ucx_test_counters(CMPI_Win win, clampi_ucx_counters *out);
/* The calling thread's flush probe on win (zero if it never flushed). MPI_ERR_WIN if win
 * is not a UCX window. */
int clampi_ucx_test_flush_probe(CMPI_Win win, clampi_ucx_flush_probe *out);
/* 1 if win is a memory-handle window whose puts and gets are loads and stores (the
 * region is in a node-shared heap this process maps), 0 if not, -1 if win is no such window. */
int clampi_ucx_test_mh_direct(CMPI_Win win);
#endif
