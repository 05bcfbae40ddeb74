/* Linked into clampi's MPI test programs: prints one line when a rank enters
 * MPI_Finalize, i.e. after it has passed all its checks. tests/support/mpich_tcp_guard.sh
 * uses it to tell a test failure from MPICH's own hang inside MPI_Finalize over
 * UCX_TLS=tcp. The real MPI_Finalize is the next one in symbol order (a preload's, or the
 * MPI library's), so this does not bypass libclampi_pmpi. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

int MPI_Finalize(void)
{
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("clampi-test: rank %d entering MPI_Finalize\n", rank);
    fflush(stdout);
    int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "MPI_Finalize");
    return next != NULL ? next() : PMPI_Finalize();
}
