/* Preloaded after libclampi_pmpi in tests: counts the calls clampi makes to take messages
 * (PMPI_Improbe, the MPI carrier) and to drive UCX (ucp_worker_progress, the UCX carrier),
 * forwarding each to the real function. A test reads the counters through
 * clampi_test_progress_counts (found with dlsym). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdatomic.h>

static _Atomic unsigned long improbes, worker_progresses;

void clampi_test_progress_counts(unsigned long *improbe, unsigned long *worker_progress) {
    *improbe = atomic_load(&improbes);
    *worker_progress = atomic_load(&worker_progresses);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) {
    static int (*real)(int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "PMPI_Improbe");
    atomic_fetch_add(&improbes, 1);
    return real(source, tag, comm, flag, message, status);
}

typedef struct ucp_worker *ucp_worker_h;
unsigned ucp_worker_progress(ucp_worker_h worker) {
    static unsigned (*real)(ucp_worker_h);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "ucp_worker_progress");
    atomic_fetch_add(&worker_progresses, 1);
    return real(worker);
}
