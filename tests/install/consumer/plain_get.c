/* A plain MPI program that knows nothing of clampi: repeated gets from a window named
 * "data" (CLAMPI_WINDOW_MODES=data:always_cache caches it under the preload). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, np, *base, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Win win;
    MPI_Win_allocate(1024 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_name(win, "data");
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < 1024; i++) base[i] = rank * 100000 + i;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    int peer = (rank + 1) % np, buf[16];
    for (int it = 0; it < 50; it++) {
        int disp = (it % 5) * 16;
        MPI_Get(buf, 16, MPI_INT, peer, disp, 16, MPI_INT, win);
        MPI_Win_flush(peer, win);
        for (int i = 0; i < 16; i++) bad |= buf[i] != peer * 100000 + disp + i;
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    if (bad)
        printf("rank %d: plain_get WRONG data\n", rank);
    else if (rank == 0)
        printf("plain_get ok\n");
    MPI_Finalize();
    return bad;
}
