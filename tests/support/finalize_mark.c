/* Preloaded into the ranks of MPICH tests over UCX_TLS=tcp by mpich_tcp_guard.sh: prints
 * one line on stderr (tests may send each rank's stdout to a file of its own) when a rank enters MPI_Finalize, i.e. after it has run all its checks. The guard
 * uses it to tell a failing test from MPICH's own hang inside MPI_Finalize. No MPI symbol is
 * linked: the real MPI_Finalize is the next one in symbol order (libclampi_pmpi's when that
 * is preloaded too, else the MPI library's). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int MPI_Finalize(void) {
    fflush(stdout); /* the program's own lines first */
    char line[80];
    snprintf(line, sizeof line, "clampi-test: pid %ld entering MPI_Finalize\n", (long)getpid());
    if (write(STDERR_FILENO, line, strlen(line)) < 0) return -1;
    int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "MPI_Finalize");
    return next != NULL ? next() : -1;
}
