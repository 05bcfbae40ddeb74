/* Accumulates from one origin stay ordered on a window where some targets are reached by
 * load and store (memory in the node-shared heap) and intrinsic atomics still go through
 * UCX (another rank's memory is not in the heap, so the window is not all load/store). Rank 0
 * adds 1 to a counter on rank 1 with MPI_Accumulate (an intrinsic UCX atomic there, emulated
 * by rank 1's worker) and then reads it with MPI_Get_accumulate(MPI_MAX, 0) (no UCX atomic
 * for MAX: the accumulate lock and a load/store read-modify-write), N times in one epoch with
 * no flush between. Each read must see every earlier add (MPI orders accumulates from one
 * origin to one location), and the final count must be N (a read-modify-write that ran
 * before an add landed would write the old value back over it).
 *   test_ucx_heap_window_order N        (3 ranks: rank 2's memory comes from malloc) */
#define CLAMPI_TEST_USES_MPI
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ucx_probe.h" /* clampi_ucx_test_counters */
#include "mpi_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 3);
    const long n = argc > 1 ? atol(argv[1]) : 2000;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BACKEND, "ucx");
    MPI_Info_set(info, "mpi_assert_accumulate_intrinsic", "true");
    int64_t *heap, *mem; /* every rank allocates: CMPI_Alloc_mem's first call makes the heap (collective) */
    CHECK_EQ_INT(CMPI_Alloc_mem(sizeof *heap, MPI_INFO_NULL, &heap), MPI_SUCCESS);
    mem = rank == 2 ? calloc(1, sizeof *mem) : heap;
    *mem = 0;
    CMPI_Win w;
    CHECK_EQ_INT(CMPI_Win_create(mem, sizeof *mem, sizeof *mem, info, MPI_COMM_WORLD, &w), MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    long stale = 0;
    if (rank == 0) {
        clampi_ucx_counters before, after;
        CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS);
        CHECK_EQ_INT(clampi_ucx_test_counters(w, &before), MPI_SUCCESS);
        for (long i = 1; i <= n; i++) {
            int64_t one = 1, zero = 0, seen = -1;
            CHECK_EQ_INT(CMPI_Accumulate(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, MPI_SUM, w), MPI_SUCCESS);
            CHECK_EQ_INT(
                CMPI_Get_accumulate(&zero, 1, MPI_INT64_T, &seen, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, MPI_MAX, w),
                MPI_SUCCESS);
            if (seen != i) stale++;
        }
        CHECK_EQ_INT(CMPI_Win_flush(1, w), MPI_SUCCESS);
        CHECK_EQ_INT(clampi_ucx_test_counters(w, &after), MPI_SUCCESS);
        /* the adds went to UCX, the reads and write-backs were copies */
        CHECK_EQ_INT((long)(after.cpu_amos - before.cpu_amos), 0L);
        CHECK_EQ_INT((long)(after.direct_ops - before.direct_ops), 2 * n);
        CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) CHECK_EQ_INT((long)*mem, n);
    if (rank == 0) {
        CHECK_EQ_INT(stale, 0L);
        printf("heap window order: %ld add + read pairs, none stale: ok\n", n);
    }
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    if (rank == 2) free(mem);
    CHECK_EQ_INT(CMPI_Free_mem(heap), MPI_SUCCESS);
    MPI_Finalize();
    return 0;
}
