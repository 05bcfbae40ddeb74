/* A program outside clampi's tree, built against the installed package. */
#include <clampi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_MODE, CLAMPI_ALWAYS_CACHE);
    int *base;
    CMPI_Win w;
    if (CMPI_Win_allocate(16 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &w) != MPI_SUCCESS) return 1;
    MPI_Info_free(&info);
    for (int i = 0; i < 16; i++) base[i] = rank * 100 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    CMPI_Win_lock_all(0, w);
    int t = (rank + 1) % n, v = -1, bad = 0;
    for (int k = 0; k < 3; k++) {
        CMPI_Get(&v, 1, MPI_INT, t, 7, 1, MPI_INT, w);
        CMPI_Win_flush(t, w);
        bad |= v != t * 100 + 7;
    }
    CMPI_Win_unlock_all(w);
    CMPI_Win_free(&w);
    if (rank == 0) printf("clampi example: %s\n", bad ? "WRONG" : "ok");
    MPI_Finalize();
    return bad;
}
