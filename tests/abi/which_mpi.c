/* Prints which MPI library the process runs on (the MPI-5 ABI test runs one binary under
 * several). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, me = 0;
    MPI_Get_library_version(version, &len);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    version[strcspn(version, "\n")] = '\0';
    if (me == 0) printf("mpi=%s\n", version);
    MPI_Finalize();
    return 0;
}
