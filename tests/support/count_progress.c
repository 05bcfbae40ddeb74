/* Preloaded after libclampi_pmpi in tests: counts the calls clampi makes to take messages
 * (PMPI_Improbe, the MPI carrier) and to drive UCX (ucp_worker_progress, the UCX carrier),
 * forwarding each to the real function. The counts are per thread (a test reads those of
 * the thread that posts: UCX's progress service thread may progress meanwhile on MPICH),
 * read through clampi_test_progress_counts (found with dlsym). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>

static _Thread_local unsigned long improbes, worker_progresses;

typedef struct ucp_worker *ucp_worker_h;
static int (*real_improbe)(int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *);
static unsigned (*real_progress)(ucp_worker_h);

__attribute__((constructor)) static void find_real(void) {
    *(void **)&real_improbe = dlsym(RTLD_NEXT, "PMPI_Improbe");
    *(void **)&real_progress = dlsym(RTLD_NEXT, "ucp_worker_progress");
}

void clampi_test_progress_counts(unsigned long *improbe, unsigned long *worker_progress) {
    *improbe = improbes;
    *worker_progress = worker_progresses;
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) {
    improbes++;
    return real_improbe(source, tag, comm, flag, message, status);
}

unsigned ucp_worker_progress(ucp_worker_h worker) {
    worker_progresses++;
    return real_progress(worker);
}
