/* A linked program that never frees its UCX windows (MPI does not require it): an
 * allocated window, one over the program's memory, a duplicate of it, and a dynamic window
 * with attached memory, a memory handle that is never released and peers' memory-handle
 * windows on it; then MPI_Finalize. clampi frees them there, newest first, before its UCX
 * context goes (else UCX aborts on memory still registered: "destroying inuse region",
 * then an assertion), and before clampi's other collective steps there, whatever order a
 * rank armed them in. The test fails on a non-zero exit, on UCX's warning lines, or by
 * hanging in MPI_Finalize. */
#include <stdlib.h>

#include "mpi_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    const int right = (rank + 1) % n;
    /* Rank 0 alone makes a UCX window first, so its finalize callback for windows is armed
     * before the collectives' (at the first clampi collective), on the other ranks after:
     * MPI_Finalize meets them in different orders, and the windows still go first. */
    CMPI_Win self;
    long *sbase;
    if (rank == 0)
        CHECK_EQ_INT(CMPI_Win_allocate(sizeof(long), sizeof(long), info, MPI_COMM_SELF, &sbase, &self), MPI_SUCCESS);
    int sendv[64], recvv[64];
    for (int i = 0; i < n && i < 64; i++) sendv[i] = rank * 100 + i;
    CHECK_EQ_INT(CMPI_Alltoall(sendv, 1, MPI_INT, recvv, 1, MPI_INT, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int i = 0; i < n && i < 64; i++) CHECK_EQ_INT(recvv[i], i * 100 + rank);

    CMPI_Win alloc, created, dup, dyn, mw;
    long *abase;
    CHECK_EQ_INT(CMPI_Win_allocate(8 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &abase, &alloc), MPI_SUCCESS);
    static long mine[8];
    CHECK_EQ_INT(CMPI_Win_create(mine, sizeof mine, sizeof(long), info, MPI_COMM_WORLD, &created), MPI_SUCCESS);
    CHECK_EQ_INT(CMPIX_Win_dup_with_info(created, MPI_INFO_NULL, &dup), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_create_dynamic(info, MPI_COMM_WORLD, &dyn), MPI_SUCCESS);
    long *region = calloc(8, sizeof(long));
    CHECK_EQ_INT(CMPI_Win_attach(dyn, region, 8 * sizeof(long)), MPI_SUCCESS);
    unsigned char h[CMPIX_MAX_MEMHANDLE_SIZE];
    int hlen = 0;
    if (rank == 0) CHECK_EQ_INT(CMPIX_Memhandle_create(region, 8 * sizeof(long), dyn, h, &hlen), MPI_SUCCESS);
    MPI_Bcast(&hlen, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(h, hlen, MPI_BYTE, 0, MPI_COMM_WORLD);

    long v = 100 + rank;
    CHECK_EQ_INT(CMPI_Win_fence(0, alloc), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, alloc), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_fence(0, alloc), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_fence(0, dup), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Put(&v, 1, MPI_LONG, right, 1, 1, MPI_LONG, dup), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_fence(0, dup), MPI_SUCCESS);
    if (rank > 0) {
        CHECK_EQ_INT(CMPIX_Win_from_memhandle(h, hlen, 0, sizeof(long), MPI_INFO_NULL, dyn, &mw), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dyn), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Put(&v, 1, MPI_LONG, 0, rank % 8, 1, MPI_LONG, mw), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_flush(0, mw), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_unlock(0, dyn), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const long left = 100 + (rank + n - 1) % n;
    CHECK_EQ_INT(abase[0], left);
    CHECK_EQ_INT(mine[1], left);
    if (rank == 0)
        for (int r = 1; r < n && r < 8; r++) CHECK_EQ_INT(region[r], 100 + r);
    if (rank == 0) printf("%d ranks: 6 kinds of UCX windows left to MPI_Finalize\n", n);
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
