/* Window statistics: the one place that merges the MPI layer's and the engine's
 * counters, for CMPI_Win_get_stats and for the CLAMPI_STATS line. */
#ifndef CLAMPI_RMA_STATS_H
#define CLAMPI_RMA_STATS_H
#include "rma/window.h"

void clampi_stats_collect(const clampi_win *w, CMPI_Win_stats *s);
/* One line on stdout: "clampi: rank=R win=NAME mode=M gets=... " (key=value pairs). */
void clampi_stats_print(const clampi_win *w);
#endif
