/* A UCX window made with CMPI_Win_create on node-shared heap memory (CMPI_Alloc_mem) is
 * reached by loads and stores on its node: puts, gets and accumulates to it complete while
 * the target computes outside MPI, with no progress thread (clampi_progress=none here).
 *
 * Rank 1 is the target: it waits for a counter in its own window memory to reach the number
 * of origins, reading it without calling MPI. Every other rank puts 64 values into its own
 * slice of rank 1's window, adds 8 values into cells shared by all origins with
 * MPI_Accumulate, gets its slice back, flushes, then adds 1 to the counter and flushes. To
 * memory UCX did not allocate, UCX carries such small operations as messages the target's
 * worker must progress: without the load/store path the origins wait in their flushes for
 * a target that never progresses, and the test times out. Also checked: the slice and the
 * sums are exact, every put and get of the origins was a load/store (direct_ops), their
 * flushes asked UCX nothing, and a window on malloc memory beside it goes through UCX.
 *   test_ucx_heap_window */
#define CLAMPI_TEST_USES_MPI
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ucx_probe.h" /* clampi_ucx_test_counters */
#include "mpi_util.h"

enum { SLICE = 64, SHARED = 8, TARGET = 1 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    const size_t nelem = 1 + SHARED + (size_t)size * SLICE; /* counter, shared cells, one slice per rank */
    const MPI_Aint bytes = (MPI_Aint)(nelem * sizeof(int64_t));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BACKEND, "ucx");
    MPI_Info_set(info, CLAMPI_PROGRESS, "none");
    int64_t *mem;
    CHECK_EQ_INT(CMPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem), MPI_SUCCESS);
    memset(mem, 0, (size_t)bytes);
    CMPI_Win w;
    CHECK_EQ_INT(CMPI_Win_create(mem, bytes, sizeof(int64_t), info, MPI_COMM_WORLD, &w), MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == TARGET) { /* computes: never enters MPI until every origin is done */
        volatile int64_t *counter = &mem[0];
        while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) != size - 1) sched_yield();
        for (int r = 0; r < size; r++)
            for (int i = 0; r != TARGET && i < SLICE; i++)
                CHECK_EQ_INT((long)mem[1 + SHARED + r * SLICE + i], (long)(r * 1000 + i));
        for (int k = 0; k < SHARED; k++) CHECK_EQ_INT((long)mem[1 + k], (long)((size - 1) * (k + 1)));
    } else {
        clampi_ucx_counters before, after;
        CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS);
        CHECK_EQ_INT(clampi_ucx_test_counters(w, &before), MPI_SUCCESS);
        int64_t vals[SLICE], back[SLICE], add[SHARED];
        for (int i = 0; i < SLICE; i++) vals[i] = rank * 1000 + i, back[i] = -1;
        for (int k = 0; k < SHARED; k++) add[k] = k + 1;
        const MPI_Aint slice = 1 + SHARED + (MPI_Aint)rank * SLICE;
        for (int i = 0; i < SLICE; i++) /* one small put per element */
            CHECK_EQ_INT(CMPI_Put(&vals[i], 1, MPI_INT64_T, TARGET, slice + i, 1, MPI_INT64_T, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Accumulate(add, SHARED, MPI_INT64_T, TARGET, 1, SHARED, MPI_INT64_T, MPI_SUM, w),
                     MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_flush(TARGET, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Get(back, SLICE, MPI_INT64_T, TARGET, slice, SLICE, MPI_INT64_T, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_flush(TARGET, w), MPI_SUCCESS);
        for (int i = 0; i < SLICE; i++) CHECK_EQ_INT((long)back[i], (long)vals[i]);
        CHECK_EQ_INT(clampi_ucx_test_counters(w, &after), MPI_SUCCESS);
        /* 64 puts, 1 get, and the accumulate's read and write back */
        CHECK_EQ_INT((long)(after.direct_ops - before.direct_ops), (long)(SLICE + 1 + 2));
        CHECK_EQ_INT((long)(after.ucx_flushes - before.ucx_flushes), 0L);
        int64_t one = 1;
        CHECK_EQ_INT(CMPI_Accumulate(&one, 1, MPI_INT64_T, TARGET, 0, 1, MPI_INT64_T, MPI_SUM, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_flush(TARGET, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Free_mem(mem), MPI_SUCCESS);

    /* The control: the same on malloc memory (default progress) goes through UCX. */
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BACKEND, "ucx");
    int64_t *plain = calloc(nelem, sizeof *plain);
    CHECK(plain != NULL);
    CHECK_EQ_INT(CMPI_Win_create(plain, bytes, sizeof(int64_t), info, MPI_COMM_WORLD, &w), MPI_SUCCESS);
    MPI_Info_free(&info);
    if (rank != TARGET) {
        clampi_ucx_counters before, after;
        int64_t v = 7 + rank;
        CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, TARGET, 0, w), MPI_SUCCESS);
        CHECK_EQ_INT(clampi_ucx_test_counters(w, &before), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Put(&v, 1, MPI_INT64_T, TARGET, 1 + SHARED + (MPI_Aint)rank * SLICE, 1, MPI_INT64_T, w),
                     MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_flush(TARGET, w), MPI_SUCCESS);
        CHECK_EQ_INT(clampi_ucx_test_counters(w, &after), MPI_SUCCESS);
        CHECK_EQ_INT((long)(after.direct_ops - before.direct_ops), 0L);
        CHECK_EQ_INT((long)(after.ucx_flushes - before.ucx_flushes), 1L);
        CHECK_EQ_INT(CMPI_Win_unlock(TARGET, w), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == TARGET)
        for (int r = 0; r < size; r++)
            if (r != TARGET) CHECK_EQ_INT((long)plain[1 + SHARED + r * SLICE], (long)(7 + r));
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    free(plain);
    if (rank == 0) printf("heap window: %d origins, loads and stores, target outside MPI: ok\n", size - 1);
    MPI_Finalize();
    return 0;
}
