/* One barrier at the start of MPI_Finalize where MPI's finalize can hang when its ranks
 * reach it apart (finalize_barrier.h).
 * MPICH before 4.2 on UCX (ch4:ucx) closes its UCX endpoints in MPI_Finalize, waits for the
 * closes, then waits in a PMI barrier that no longer progresses UCX: a rank whose close
 * still needs a peer's progress waits forever once that peer is in the PMI barrier (MPICH
 * removed that barrier in 4.2: pull request 6596). The barrier here runs as the last of
 * MPI_COMM_SELF's delete callbacks at the start of MPI_Finalize (MPICH deletes them newest
 * first; this attribute is set at the preload's initialisation, or before the first of
 * clampi's own: the UCX context's, the collectives', the shared heap's), so clampi's
 * teardown there (UCX workers and context, windows, the shared heap) cannot make one rank
 * late, and no rank waits here while another is still in one of clampi's collectives. It
 * narrows MPICH's race, it does not close it: see docs/platforms.md, "MPI bugs clampi works
 * around", for the counts. */
#include "services/finalize_barrier.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* "MPICH Version: X.Y..." and "Device: ch4:ucx" in the library's version text. */
static int mpich_ucx_before_4_2(void) {
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (PMPI_Get_library_version(v, &len) != MPI_SUCCESS) return 0;
    v[len < (int)sizeof v ? len : (int)sizeof v - 1] = '\0';
    const char *at = strstr(v, "MPICH Version:");
    int major = 0, minor = 0;
    if (!at || sscanf(at + strlen("MPICH Version:"), " %d.%d", &major, &minor) != 2) return 0;
    return (major < 4 || (major == 4 && minor < 2)) && strstr(v, "ch4:ucx") != NULL;
}

static int finalize_barrier(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm, (void)value, (void)extra;
    PMPI_Barrier(MPI_COMM_WORLD);
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

static pthread_once_t armed = PTHREAD_ONCE_INIT;

static void arm(void) {
    int keyval;
    if (mpich_ucx_before_4_2() &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_barrier, &keyval, NULL) == MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);
}

void clampi_finalize_barrier_arm(void) { pthread_once(&armed, arm); }
