/* Passive-target epochs on a window made with MPI_Win_create over MPI_Alloc_mem memory, the
 * pattern of MPICH's rma_contig: rank 0 locks rank 1 exclusively, does one operation of
 * BYTES bytes and unlocks, ITERS times for each of put, get and accumulate (MPI_SUM on
 * MPI_INT). Rank 1 waits in MPI_Barrier meanwhile. Prints seconds per epoch of each kind
 * and checks the target's data at the end (a wrong value exits 1).
 *   created_window_on_heap ITERS BYTES */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int iters = argc > 1 ? atoi(argv[1]) : 1000;
    const int bytes = argc > 2 ? atoi(argv[2]) : 8;
    const int n = bytes / (int)sizeof(int) > 0 ? bytes / (int)sizeof(int) : 1;
    if (size != 2) MPI_Abort(MPI_COMM_WORLD, 2);
    int *mem, *buf = malloc(sizeof(int) * (size_t)n);
    MPI_Alloc_mem((MPI_Aint)(sizeof(int) * (size_t)n), MPI_INFO_NULL, &mem);
    memset(mem, 0, sizeof(int) * (size_t)n);
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)(sizeof(int) * (size_t)n), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    double t[3] = {0, 0, 0};
    if (rank == 0) {
        for (int kind = 0; kind < 3; kind++) {
            for (int i = 0; i < n; i++) buf[i] = 1;
            double t0 = MPI_Wtime();
            for (int it = 0; it < iters; it++) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                if (kind == 0) MPI_Put(buf, n, MPI_INT, 1, 0, n, MPI_INT, win);
                if (kind == 1) MPI_Get(buf, n, MPI_INT, 1, 0, n, MPI_INT, win);
                if (kind == 2) MPI_Accumulate(buf, n, MPI_INT, 1, 0, n, MPI_INT, MPI_SUM, win);
                MPI_Win_unlock(1, win);
            }
            t[kind] = (MPI_Wtime() - t0) / iters;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    if (rank == 1) /* the put wrote 1, the gets read it, the accumulates added 1 each */
        for (int i = 0; i < n; i++) bad += mem[i] != 1 + iters;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("bytes %d iters %d put %.3f us get %.3f us acc %.3f us %s\n", bytes, iters, t[0] * 1e6, t[1] * 1e6,
               t[2] * 1e6, bad ? "WRONG" : "ok");
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    free(buf);
    MPI_Finalize();
    return bad ? 1 : 0;
}
