/* Memory handles: rank 0 registers part of its dynamic UCX window and sends the handle to
 * every other rank; they make windows from it and put/get/accumulate/flush through them,
 * with the lock on the parent. Bad input (garbage, truncated, someone else's target, lock
 * on the handle window, released handle) gets the right error class and changes nothing.
 * A release while peers hold windows makes every later operation through them fail at once
 * (MPI_ERR_RMA_RANGE), the owner's memory unchanged. A second handle is never released: the parent's free and MPI_Finalize must
 * still complete everywhere.
 * Argument "heap": the memory comes from CMPI_Alloc_mem (clampi's node-shared heap) and the
 * peers' windows must reach it by load/store (zero copy), checked through the window's probe. */
#include <string.h>

#include "mpi_util.h"
#include "ucx_probe.h"

#define N 256

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Info info = ucx_info();
    CMPI_Win dyn = ucx_dynamic_window(info);
    const int heap = argc > 1 && !strcmp(argv[1], "heap");
    static int mem_static[N], other_static[N];
    int *mem = mem_static, *other = other_static;
    int heap_enabled = 0;
    if (heap) {
        CHECK_EQ_INT(CMPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &mem), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &other), MPI_SUCCESS);
        CMPIX_Heap_info hi;
        CHECK_EQ_INT(CMPIX_Heap_info_get(&hi), MPI_SUCCESS);
        heap_enabled = hi.enabled && hi.fallbacks == 0; /* both blocks in the heap */
    }
    for (int i = 0; i < N; i++) mem[i] = -1, other[i] = 0;
    CHECK_EQ_INT(CMPI_Win_attach(dyn, mem, N * sizeof(int)), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_attach(dyn, other, N * sizeof(int)), MPI_SUCCESS);

    unsigned char h[CMPIX_MAX_MEMHANDLE_SIZE], h2[CMPIX_MAX_MEMHANDLE_SIZE];
    int hlen = 0, h2len = 0;
    if (rank == 0) {
        int dummy;
        /* not attached -> MPI_ERR_RMA_RANGE; null handle buffer -> MPI_ERR_ARG */
        CHECK_CLASS(CMPIX_Memhandle_create(&dummy, sizeof dummy, dyn, h, &hlen), MPI_ERR_RMA_RANGE);
        CHECK_CLASS(CMPIX_Memhandle_create(mem, N * sizeof(int), dyn, NULL, &hlen), MPI_ERR_ARG);
        CHECK_EQ_INT(CMPIX_Memhandle_create(mem, N * sizeof(int), dyn, h, &hlen), MPI_SUCCESS);
        CHECK(hlen > 0 && hlen <= CMPIX_MAX_MEMHANDLE_SIZE);
        CHECK_EQ_INT(CMPIX_Memhandle_create(other, N * sizeof(int), dyn, h2, &h2len), MPI_SUCCESS);
    }
    MPI_Bcast(&hlen, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(h, hlen, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&h2len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(h2, h2len, MPI_BYTE, 0, MPI_COMM_WORLD);

    /* bad handles: nothing created */
    CMPI_Win mw = {MPI_WIN_NULL, 99, 99};
    unsigned char garbage[CMPIX_MAX_MEMHANDLE_SIZE];
    for (int i = 0; i < hlen; i++) garbage[i] = (unsigned char)(i * 37 + rank);
    CHECK_CLASS(CMPIX_Win_from_memhandle(garbage, hlen, 0, sizeof(int), MPI_INFO_NULL, dyn, &mw), MPI_ERR_ARG);
    CHECK_CLASS(CMPIX_Win_from_memhandle(h, hlen - 1, 0, sizeof(int), MPI_INFO_NULL, dyn, &mw), MPI_ERR_ARG);
    memcpy(garbage, h, hlen);
    garbage[hlen / 2] ^= 0x10;
    CHECK_CLASS(CMPIX_Win_from_memhandle(garbage, hlen, 0, sizeof(int), MPI_INFO_NULL, dyn, &mw), MPI_ERR_ARG);
    if (n > 1) CHECK_CLASS(CMPIX_Win_from_memhandle(h, hlen, 1, sizeof(int), MPI_INFO_NULL, dyn, &mw), MPI_ERR_RANK);
    CHECK_CLASS(CMPIX_Win_from_memhandle(h, hlen, 0, 0, MPI_INFO_NULL, dyn, &mw), MPI_ERR_ARG);
    CHECK(mw.slot == 99 && mw.serial == 99);

    /* a working window: displacement 0 is the handle's base, in ints */
    CHECK_EQ_INT(CMPIX_Win_from_memhandle(h, hlen, 0, sizeof(int), MPI_INFO_NULL, dyn, &mw), MPI_SUCCESS);
    /* zero copy when the region is in the heap (every rank here is on one node); the static
     * arrays may move onto a memory file or not, by their pages (test_mh_share.c) */
    if (heap) CHECK_EQ_INT(clampi_ucx_test_mh_direct(mw), heap_enabled);
    CHECK_CLASS(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, mw), MPI_ERR_RMA_SYNC); /* lock the parent instead */
    CHECK_CLASS(CMPI_Win_lock_all(0, mw), MPI_ERR_RMA_SYNC);
    CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dyn), MPI_SUCCESS);
    int vals[4] = {rank * 10, rank * 10 + 1, rank * 10 + 2, rank * 10 + 3};
    CHECK_EQ_INT(CMPI_Put(vals, 4, MPI_INT, 0, 4 * rank, 4, MPI_INT, mw), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(0, mw), MPI_SUCCESS);
    int back[4] = {0};
    CHECK_EQ_INT(CMPI_Get(back, 4, MPI_INT, 0, 4 * rank, 4, MPI_INT, mw), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(0, mw), MPI_SUCCESS);
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(back[i], vals[i]);
    int one = 1, old = 0;
    CHECK_EQ_INT(CMPI_Accumulate(&one, 1, MPI_INT, 0, N - 1, 1, MPI_INT, MPI_SUM, mw), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Fetch_and_op(&one, &old, MPI_INT, 0, N - 2, MPI_SUM, mw), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(0, mw), MPI_SUCCESS);
    /* outside the handle's memory, or another target: refused, nothing written */
    CHECK_CLASS(CMPI_Put(vals, 4, MPI_INT, 0, N - 2, 4, MPI_INT, mw), MPI_ERR_RMA_RANGE);
    if (n > 1) CHECK(CMPI_Put(vals, 1, MPI_INT, 1, 0, 1, MPI_INT, mw) != MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_unlock(0, dyn), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < n; r++)
            for (int i = 0; i < 4; i++) CHECK_EQ_INT(mem[4 * r + i], r * 10 + i);
        CHECK_EQ_INT(mem[N - 1], -1 + n);
        CHECK_EQ_INT(mem[N - 2], -1 + n);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* release while everyone holds a window: their next flush fails cleanly, and so does
     * everything after it; freeing the window still works */
    if (rank == 0) {
        CHECK_EQ_INT(CMPIX_Memhandle_release(h, dyn), MPI_SUCCESS);
        CHECK_CLASS(CMPIX_Memhandle_release(h, dyn), MPI_ERR_ARG);       /* twice */
        CHECK_CLASS(CMPIX_Memhandle_release(garbage, dyn), MPI_ERR_ARG); /* not a handle */
        CMPI_Win again = {MPI_WIN_NULL, 5, 5};
        CHECK_CLASS(CMPIX_Win_from_memhandle(h, hlen, 0, sizeof(int), MPI_INFO_NULL, dyn, &again), MPI_ERR_ARG);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* released, then a barrier: nothing gets in any more. Every operation through the
     * handle's window fails at once with MPI_ERR_RMA_RANGE (window handler, ERRORS_RETURN)
     * and the owner's memory stays as it was (the memory is still attached to dyn). */
    MPI_Win_set_errhandler(mw.win, MPI_ERRORS_RETURN);
    CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dyn), MPI_SUCCESS);
    int x = 7, got = -5;
    CHECK_CLASS(CMPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, mw), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(CMPI_Put(&x, 1, MPI_INT, 0, 1, 1, MPI_INT, mw), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(CMPI_Accumulate(&x, 1, MPI_INT, 0, N - 1, 1, MPI_INT, MPI_SUM, mw), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(CMPI_Fetch_and_op(&x, &got, MPI_INT, 0, N - 2, MPI_SUM, mw), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(CMPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, mw), MPI_ERR_RMA_RANGE);
    CHECK_EQ_INT(got, -5);
    CHECK_CLASS(CMPI_Win_flush(0, mw), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(CMPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, mw), MPI_ERR_RMA_RANGE);
    CHECK_EQ_INT(CMPI_Win_unlock(0, dyn), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&mw), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* unchanged by any of it */
        CHECK_EQ_INT(mem[0], 0);
        CHECK_EQ_INT(mem[1], 1);
        CHECK_EQ_INT(mem[N - 1], -1 + n);
        CHECK_EQ_INT(mem[N - 2], -1 + n);
    }

    /* the second handle is never released; peers keep their windows from it: the parent's
     * free (collective) frees them, and nobody hangs in MPI_Finalize */
    CMPI_Win mw2;
    CHECK_EQ_INT(CMPIX_Win_from_memhandle(h2, h2len, 0, sizeof(int), MPI_INFO_NULL, dyn, &mw2), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dyn), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Put(&rank, 1, MPI_INT, 0, rank, 1, MPI_INT, mw2), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(0, mw2), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_unlock(0, dyn), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < n; r++) CHECK_EQ_INT(other[r], r);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ_INT(CMPI_Win_detach(dyn, mem), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&dyn), MPI_SUCCESS);
    CHECK_CLASS(CMPI_Win_flush(0, mw2), MPI_ERR_WIN); /* freed with its parent */
    MPI_Info_free(&info);
    if (heap) {
        CHECK_EQ_INT(CMPI_Free_mem(mem), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Free_mem(other), MPI_SUCCESS);
    }
    MPI_Finalize();
    if (rank == 0) printf("test_memhandle: ok (%d ranks%s)\n", n, heap ? ", heap memory" : "");
    return 0;
}
