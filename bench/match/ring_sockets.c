/* A plain MPI program: after MPI_Init and after one exchange with its ring neighbours, each
 * rank counts the sockets it has open (/proc/self/fd). Run with UCX_TLS=tcp,self plainly
 * and under the preload with CLAMPI_MATCH by ring_sockets.sh: the UCX carrier's endpoints
 * show as sockets, one per peer it is connected to.
 *   ring_sockets   -> "sockets rank=R after_init=A after_ring=B" per rank */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int sockets(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[300], link[300];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, link, sizeof link - 1);
        if (k > 0) {
            link[k] = 0;
            n += strncmp(link, "socket:", 7) == 0;
        }
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    int a = sockets(), x = rank, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % size, 0, &y, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("sockets rank=%d after_init=%d after_ring=%d%s\n", rank, a, sockets(),
           y == (rank + size - 1) % size ? "" : " WRONG");
    MPI_Finalize();
    return 0;
}
