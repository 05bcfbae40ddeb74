/* Windows the program never freed. MPI does not require a program to free its windows
 * before MPI_Finalize, but clampi's UCX context goes at MPI_Finalize, and UCX aborts the
 * process when memory a window registered is still registered then. So the windows on the
 * UCX backend still alive are freed at MPI_Finalize, newest first, as CMPI_Win_free would:
 * creation is collective, so every rank frees them in the same order. It runs first among
 * clampi's MPI_COMM_SELF delete callbacks (services/finalize_first.h), through one of its
 * own set at the first UCX window, after the UCX context's (MPI deletes them newest first,
 * so the context's comes later). The preload frees its windows in its MPI_Finalize, before
 * this runs; what is left here are CMPI_ windows. */
#include <pthread.h>

#include "rma/window.h"
#include "services/finalize_first.h"

/* UCX windows of the CMPI_ API (the preload's route their calls: it frees those itself). */
static int has_ucx_state(const clampi_win *w) { return w->b.state != NULL && !w->cmpi_route; }

static void free_unfreed(void) {
    CMPI_Win h;
    int last_slot = -1;
    uint32_t last_serial = 0;
    while (clampi_registry_newest(has_ucx_state, &h)) {
        if ((int)h.slot == last_slot && h.serial == last_serial) break; /* its free failed: leave it */
        last_slot = (int)h.slot;
        last_serial = h.serial;
        CMPI_Win_free(&h);
    }
}

static int self_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm, (void)value, (void)extra;
    clampi_finalize_first_run();
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

static pthread_once_t armed = PTHREAD_ONCE_INIT;

static void arm(void) {
    clampi_finalize_first_add(free_unfreed);
    int keyval;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &keyval, NULL) == MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);
}

void clampi_win_free_unfreed_at_finalize(void) { pthread_once(&armed, arm); }
