/* Windows the program never freed. MPI does not require a program to free its windows
 * before MPI_Finalize, but clampi's UCX context goes at MPI_Finalize, and UCX aborts the
 * process when memory a window registered is still registered then. So the windows on the
 * UCX backend still alive are freed at MPI_Finalize, newest first, as CMPI_Win_free would:
 * creation is collective, so every rank frees them in the same order. It runs as a delete
 * callback of an MPI_COMM_SELF attribute set at the first UCX window (after the UCX
 * context's own, which MPI deletes after it: newest first). The preload frees its windows
 * in its MPI_Finalize, before this runs; what is left here are CMPI_ windows. */
#include <pthread.h>

#include "rma/window.h"

static int has_ucx_state(const clampi_win *w) { return w->b.state != NULL; }

static int free_unfreed(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm, (void)value, (void)extra;
    CMPI_Win h;
    int last_slot = -1;
    uint32_t last_serial = 0;
    while (clampi_registry_newest(has_ucx_state, &h)) {
        if ((int)h.slot == last_slot && h.serial == last_serial) break; /* its free failed: leave it */
        last_slot = (int)h.slot;
        last_serial = h.serial;
        CMPI_Win_free(&h);
    }
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

static pthread_once_t armed = PTHREAD_ONCE_INIT;

static void arm(void) {
    int keyval;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_unfreed, &keyval, NULL) == MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);
}

void clampi_win_free_unfreed_at_finalize(void) { pthread_once(&armed, arm); }
