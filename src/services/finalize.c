/* clampi's teardown steps in MPI_Finalize, in one order (finalize.h).
 *
 * After the steps, on MPICH before 4.2 on UCX (ch4:ucx), a barrier on MPI_COMM_WORLD:
 * MPICH closes its UCX endpoints in MPI_Finalize, waits for the closes, then waits in a PMI
 * barrier that no longer progresses UCX, so a rank whose close still needs a peer's progress
 * waits forever once that peer is in the PMI barrier (MPICH removed that barrier in 4.2:
 * pull request 6596). The barrier here keeps clampi's teardown (windows, UCX workers and
 * context, the shared heap) from making one rank late. It narrows MPICH's race, it does not
 * close it: see docs/platforms.md, "MPI bugs clampi works around", for the counts. */
#include "services/finalize.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void (*steps[CLAMPI_FINALIZE_STEPS])(void);
static int armed;

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

static int run_steps(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm, (void)value, (void)extra;
    for (int s = 0; s < CLAMPI_FINALIZE_STEPS; s++) {
        pthread_mutex_lock(&lock);
        void (*fn)(void) = steps[s];
        steps[s] = NULL; /* each runs once */
        pthread_mutex_unlock(&lock);
        if (fn) fn();
    }
    if (mpich_ucx_before_4_2()) PMPI_Barrier(MPI_COMM_WORLD);
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

/* Called with lock held. */
static void arm_locked(void) {
    if (armed) return;
    armed = 1;
    int keyval;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, run_steps, &keyval, NULL) == MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);
}

void clampi_finalize_arm(void) {
    pthread_mutex_lock(&lock);
    arm_locked();
    pthread_mutex_unlock(&lock);
}

void clampi_finalize_at(clampi_finalize_step step, void (*fn)(void)) {
    if ((unsigned)step >= CLAMPI_FINALIZE_STEPS) return;
    pthread_mutex_lock(&lock);
    if (!steps[step]) steps[step] = fn;
    arm_locked();
    pthread_mutex_unlock(&lock);
}
