/* Windows the program never freed. MPI does not require a program to free its windows
 * before MPI_Finalize, but clampi's UCX context goes at MPI_Finalize, and UCX aborts the
 * process when memory a window registered is still registered then. So the windows on the
 * UCX backend still alive are freed in the first of clampi's steps in MPI_Finalize
 * (services/finalize.h), highest first in the order their backend agreed at creation
 * (clampi_bwin.finalize_order): one order on every process, even for windows made at once
 * from several threads on different communicators, and newest first on one communicator,
 * as the program would free them. Duplicates and memory-handle windows, made and freed
 * locally, go just before the window they were made from. */
#include <pthread.h>
#include <stdint.h>

#include "rma/window.h"
#include "services/finalize.h"

static int (*free_routed)(clampi_win *w);

void clampi_win_set_free_routed(int (*fn)(clampi_win *w)) { free_routed = fn; }

static int has_ucx_state(const clampi_win *w) { return w->b.state != NULL; }

static void free_unfreed(void) {
    clampi_registry_place below = {UINT64_MAX, UINT64_MAX};
    CMPI_Win h;
    while (clampi_registry_next_to_finalize(has_ucx_state, &below, &h)) {
        clampi_win *w = clampi_registry_find(h);
        if (!w || !w->b.state) continue; /* gone with its parent */
        if (w->cmpi_route && free_routed)
            free_routed(w);
        else
            CMPI_Win_free(&h);
    }
}

static pthread_once_t armed = PTHREAD_ONCE_INIT;

static void arm(void) { clampi_finalize_at(CLAMPI_FINALIZE_WINDOWS, free_unfreed); }

void clampi_win_free_unfreed_at_finalize(void) { pthread_once(&armed, arm); }
