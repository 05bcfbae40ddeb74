/* clampi's node-shared memory (the heap, the collectives' control blocks, mailboxes and
 * scratch) leaves nothing in /dev/shm once made: its names are removed as soon as every
 * process has mapped them, so a job that dies later leaves no file behind. Makes the heap,
 * runs collectives (control block, mailbox, scratch), checks the data, then looks for files
 * named after rank 0's pid (the names' first field) while every segment is still in use. */
#include <clampi/coll.h>
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (CMPIX_Heap_init(1 << 20) != MPI_SUCCESS) bad++;
    int *send = NULL, *recv = NULL;
    const int n = 1024; /* ints per block: small (mailbox) and staged sizes both below */
    CMPI_Alloc_mem((MPI_Aint)(sizeof(int) * (size_t)n * (size_t)size), MPI_INFO_NULL, &send);
    recv = malloc(sizeof(int) * (size_t)n * (size_t)size);
    for (int b = 1; b <= n; b *= 32) {
        for (int i = 0; i < b * size; i++) send[i] = rank * 1000000 + i;
        CMPI_Alltoall(send, b, MPI_INT, recv, b, MPI_INT, MPI_COMM_WORLD);
        for (int j = 0; j < size; j++)
            for (int i = 0; i < b; i++)
                if (recv[j * b + i] != j * 1000000 + rank * b + i) bad++;
    }
    int pid0 = (int)getpid();
    MPI_Bcast(&pid0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "clampi-%x-", pid0);
    int left = 0;
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            if (left++ < 3) fprintf(stderr, "rank %d: FAIL: /dev/shm/%s left\n", rank, e->d_name);
        }
    if (d) closedir(d);
    int all[2] = {bad, left}, sum[2];
    MPI_Allreduce(all, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (sum[0]) printf("FAIL: %d wrong values\n", sum[0]);
        if (!sum[0] && !sum[1]) printf("shared segments: none left in /dev/shm\n");
    }
    CMPI_Free_mem(send);
    free(recv);
    MPI_Finalize();
    return sum[0] || sum[1];
}
