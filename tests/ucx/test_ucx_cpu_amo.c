/* Intrinsic atomics as CPU atomics: on a UCX window with
 * mpi_assert_accumulate_intrinsic=true whose memory UCX allocated, an origin whose endpoint
 * runs UCX's atomics as CPU atomics on shared memory does them itself on the mapped target
 * memory (clampi_ucx_target_amo_ptr). They must stay atomic with every other atomic on the
 * same bytes: other ranks' (direct too, or through UCX where CLAMPI_SHM_DIRECT=false is set
 * for some ranks: the MPMD test), and the target's own (self: always through UCX).
 *
 * Every rank, rank 0 included, adds 1 N times to a 64-bit counter on rank 0 with
 * MPI_Fetch_and_op (SUM), increments a 32-bit counter N times with a compare-and-swap loop,
 * and adds (1, 2) to an int pair N times with a 2-element accumulate; rank 0 checks the
 * exact totals, the fetched values are distinct per counter (each add saw a different old
 * value), and, without CLAMPI_SHM_DIRECT=false, the ranks other than 0 did every one of
 * their atomics as CPU atomics (clampi_ucx_counters.cpu_amos, from none before), and their
 * flushes after them asked UCX for nothing (ucx_flushes: nothing was handed to UCX), while
 * a flush after a put that UCX carries does ask it, and the put's data arrives.
 * MEMORY heap: the window is CMPI_Win_create on CMPI_Alloc_mem memory (the node-shared
 * heap, no UCX mapping): every rank, rank 0 included, does its atomics as CPU atomics, and
 * the put is a store (direct_ops) whose flush asks UCX nothing. heap_mixed: the same with
 * CLAMPI_SHM_DIRECT=false on some rank: then nobody may use CPU atomics on it. heap_info:
 * the same with clampi_shm_direct=false in rank 0's window info instead; allocate_info:
 * clampi_shm_direct=false in every rank's window info, as CLAMPI_SHM_DIRECT=false would.
 *   test_ucx_cpu_amo [N] [expect] [MEMORY]   expect: direct (CPU atomics expected) | any
 *          MEMORY: allocate (default) | heap | heap_mixed | heap_info | allocate_info */
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
    const long n = argc > 1 ? atol(argv[1]) : 20000;
    const int want_direct = argc > 2 && !strcmp(argv[2], "direct");
    const char *memory = argc > 3 ? argv[3] : "allocate";
    const int heap = !strncmp(memory, "heap", 4), heap_info = !strcmp(memory, "heap_info");
    const int mixed = !strcmp(memory, "heap_mixed") || heap_info, allocate_info = !strcmp(memory, "allocate_info");
    const char *off = getenv("CLAMPI_SHM_DIRECT");
    const int direct_off = allocate_info || (off && (!strcmp(off, "0") || !strcmp(off, "false")));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BACKEND, "ucx");
    MPI_Info_set(info, "mpi_assert_accumulate_intrinsic", "true");
    if (allocate_info || (heap_info && rank == 0)) MPI_Info_set(info, "clampi_shm_direct", "false");
    struct cells {
        int64_t fop;
        int32_t cas, pad;
        int32_t pair[2];
    } * mem;
    CMPI_Win w;
    if (heap) {
        CHECK_EQ_INT(CMPI_Alloc_mem(sizeof *mem, MPI_INFO_NULL, &mem), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_create(mem, sizeof *mem, 1, info, MPI_COMM_WORLD, &w), MPI_SUCCESS);
    } else {
        CHECK_EQ_INT(CMPI_Win_allocate(sizeof *mem, 1, info, MPI_COMM_WORLD, &mem, &w), MPI_SUCCESS);
    }
    MPI_Info_free(&info);
    memset(mem, 0, sizeof *mem);
    if (heap) { /* one-sided atomics exactly when every rank's memory is in the heap */
        int flag = -1;
        CHECK_EQ_INT(CMPIX_Win_op_intrinsic("sum,cas,no_op", 2, MPI_INT64_T, w, &flag), MPI_SUCCESS);
        CHECK_EQ_INT(flag, mixed ? 0 : 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    clampi_ucx_counters before, after;
    char *seen = calloc((size_t)(n * size), 1); /* fetched old values of the 64-bit counter */
    CHECK(seen != NULL);
    long dup = 0;
    CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS);
    /* The lock's own traffic (a lazily acquired lock takes it at the first access) comes
     * before the count: one fetch of the counter (MPI_NO_OP) and a flush. */
    int64_t ignored = 0, zero = 0;
    CHECK_EQ_INT(CMPI_Fetch_and_op(&zero, &ignored, MPI_INT64_T, 0, offsetof(struct cells, fop), MPI_NO_OP, w),
                 MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush_all(w), MPI_SUCCESS);
    CHECK_EQ_INT(clampi_ucx_test_counters(w, &before), MPI_SUCCESS);
    for (long i = 0; i < n; i++) {
        int64_t one = 1, old = -1;
        CHECK_EQ_INT(CMPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, offsetof(struct cells, fop), MPI_SUM, w),
                     MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_flush(0, w), MPI_SUCCESS);
        if (old < 0 || old >= n * size || seen[old]++) dup++;
        int32_t cur = 0;
        for (;;) { /* compare-and-swap increment */
            int32_t next = cur + 1, got = -1;
            CHECK_EQ_INT(CMPI_Compare_and_swap(&next, &cur, &got, MPI_INT32_T, 0, offsetof(struct cells, cas), w),
                         MPI_SUCCESS);
            CHECK_EQ_INT(CMPI_Win_flush(0, w), MPI_SUCCESS);
            if (got == cur) break;
            cur = got;
        }
        int32_t add[2] = {1, 2};
        CHECK_EQ_INT(CMPI_Accumulate(add, 2, MPI_INT32_T, 0, offsetof(struct cells, pair), 2, MPI_INT32_T, MPI_SUM, w),
                     MPI_SUCCESS);
    }
    CHECK_EQ_INT(clampi_ucx_test_counters(w, &after), MPI_SUCCESS);
    const uint64_t cpu = after.cpu_amos - before.cpu_amos, ucx_flushes = after.ucx_flushes - before.ucx_flushes;
    /* Then a put UCX carries: to the next rank's pad field (each rank's own); its flush must
     * ask UCX, and the value must be there after it. */
    const int next = (rank + 1) % size;
    int32_t mark = 1000 + rank;
    CHECK_EQ_INT(CMPI_Put(&mark, 1, MPI_INT32_T, next, offsetof(struct cells, pad), 1, MPI_INT32_T, w), MPI_SUCCESS);
    clampi_ucx_counters put_before, put_after;
    CHECK_EQ_INT(clampi_ucx_test_counters(w, &put_before), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(next, w), MPI_SUCCESS);
    CHECK_EQ_INT(clampi_ucx_test_counters(w, &put_after), MPI_SUCCESS);
    if (!heap) CHECK(put_after.ucx_flushes - put_before.ucx_flushes == 1);
    if (heap && !mixed) { /* a store into the heap: nothing for UCX */
        CHECK(put_after.ucx_flushes - put_before.ucx_flushes == 0);
        CHECK(put_before.direct_ops - after.direct_ops == 1);
    }
    CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    long total_dup = 0;
    MPI_Reduce(&dup, &total_dup, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_EQ_INT((long)mem->fop, n * size);
        CHECK_EQ_INT((long)mem->cas, n * size);
        CHECK_EQ_INT((long)mem->pair[0], n * size);
        CHECK_EQ_INT((long)mem->pair[1], 2 * n * size);
        CHECK_EQ_INT(total_dup, 0L); /* seen[] is per rank: a repeat within one rank's fetches */
    }
    /* Peers reach rank 0's UCX-allocated memory by shared memory here: each of their
     * fetch-and-ops, successful compare-and-swaps and 2-element accumulates is CPU atomics. */
    const int cpu_expected = want_direct && !direct_off && (heap ? !mixed : rank != 0);
    if (cpu_expected) CHECK(cpu >= (uint64_t)(n + n + 2 * n));
    if (cpu_expected) CHECK_EQ_INT((long)ucx_flushes, 0L);
    if (direct_off || mixed) CHECK_EQ_INT((long)cpu, 0L);
    if ((direct_off || mixed) && rank != 0) CHECK(ucx_flushes >= (uint64_t)(2 * n)); /* every flush had UCX atomics */
    CHECK_EQ_INT((long)mem->pad, 1000L + (rank + size - 1) % size);
    printf("cpu_amo rank=%d direct_off=%d cpu_amos=%llu ucx_flushes=%llu\n", rank, direct_off, (unsigned long long)cpu,
           (unsigned long long)ucx_flushes);
    free(seen);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    if (heap) CHECK_EQ_INT(CMPI_Free_mem(mem), MPI_SUCCESS);
    MPI_Finalize();
    return 0;
}
