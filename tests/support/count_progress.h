/* For plain test programs run with tests/support/count_progress.c preloaded after clampi:
 * the counting library's reader, or NULL when it is not loaded (a plain run), and the
 * two-rank start both of its users share. */
#ifndef CLAMPI_TESTS_COUNT_PROGRESS_H
#define CLAMPI_TESTS_COUNT_PROGRESS_H
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

/* Per calling thread: clampi's PMPI_Improbe and ucp_worker_progress calls so far. */
typedef void (*clampi_progress_counts_fn)(unsigned long *improbe, unsigned long *worker_progress);

static inline clampi_progress_counts_fn clampi_find_progress_counts(void) {
    return (clampi_progress_counts_fn)dlsym(RTLD_DEFAULT, "clampi_test_progress_counts");
}

/* MPI_Init, this process's rank; aborts unless the job has exactly 2 ranks. */
static inline int clampi_init_two_ranks(int *argc, char ***argv) {
    int rank, size;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return rank;
}
#endif
