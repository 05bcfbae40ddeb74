/* Memory handles to the program's own memory against the MPI's own dynamic window, side by
 * side in one run (docs/rma-extensions.md, "Memory handles on the program's memory").
 *
 * Rank 1 exposes a region of MEMORY (malloc: malloc(REGION), 1 MiB; calloc; malloc_small:
 * malloc(16 KiB); malloc_4k: malloc(4 KiB), no page of it wholly its own; stack: a 64 KiB local array of the target's main; alloc_mem: MPI_Alloc_mem) and rank 0 does ITERS op + flush of each
 * size at displacement 0, alternating per trial between
 *   mpi_dynamic: an MPI_Win_create_dynamic window (MPI's own) with the region attached;
 *   memhandle:   an MPI_Win_create_dynamic window with clampi_backend=ucx, the region
 *                attached, MPIX_Memhandle_create at rank 1, MPIX_Win_from_memhandle at 0.
 * Prints one line per (op, size): best-of-trials µs of each and mpi_dynamic / memhandle;
 * then the owner's MPIX_Memhandle_create and _release times (one each) and the time of a
 * handle window made, used for one put + flush and freed, per exchange.
 * Runs preloaded (or linked with libclampi_pmpi). Usage: mh_user_memory MEMORY [ITERS] [TRIALS] */
#include <mpi.h>
#include <clampi/mpix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REGION (1 << 20)
#define STACK_REGION (64 << 10)
#define SMALL_REGION (16 << 10) /* malloc_small: inside malloc's heap, not page-aligned */
#define PAGE_REGION 4096        /* malloc_4k: inside malloc's heap, across two pages */

/* op + flush on win, ITERS times, in a lock_all epoch of lockwin (a handle window's epochs
 * are its parent's); µs per op + flush, 0 where iters is 0. */
static double run(MPI_Win win, MPI_Win lockwin, int is_put, char *buf, int size, MPI_Aint disp, int iters) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = 0;
    if (iters > 0) {
        MPI_Win_lock_all(0, lockwin);
        for (int i = 0; i < 10; i++) { /* warm-up */
            if (is_put)
                MPI_Put(buf, size, MPI_BYTE, 1, disp, size, MPI_BYTE, win);
            else
                MPI_Get(buf, size, MPI_BYTE, 1, disp, size, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        }
        t = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (is_put)
                MPI_Put(buf, size, MPI_BYTE, 1, disp, size, MPI_BYTE, win);
            else
                MPI_Get(buf, size, MPI_BYTE, 1, disp, size, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        }
        t = (MPI_Wtime() - t) / iters * 1e6;
        MPI_Win_unlock_all(lockwin);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

static void bench(char *region, size_t rsize, const char *memory, int iters, int trials) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static const int sizes[] = {8, 64, 512, 4096};
    char buf[4096];
    memset(buf, rank + 1, sizeof buf);
    MPI_Info ucx;
    MPI_Info_create(&ucx);
    MPI_Info_set(ucx, "clampi_backend", "ucx");
    /* The windows and the handle, made once. */
    MPI_Win dyn, par, mhw = MPI_WIN_NULL;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_create_dynamic(ucx, MPI_COMM_WORLD, &par);
    char handle[MPI_MAX_MEMHANDLE_SIZE];
    int hlen = 0;
    double create_us = 0, release_us = 0, exchange_us = 0;
    if (rank == 1) {
        MPI_Win_attach(dyn, region, (MPI_Aint)rsize);
        MPI_Win_attach(par, region, (MPI_Aint)rsize);
        create_us = MPI_Wtime();
        if (MPIX_Memhandle_create(region, (MPI_Aint)rsize, par, handle, &hlen) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
        create_us = (MPI_Wtime() - create_us) * 1e6;
    }
    MPI_Bcast(&hlen, 1, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Bcast(handle, hlen, MPI_BYTE, 1, MPI_COMM_WORLD);
    if (rank == 0 && MPIX_Win_from_memhandle(handle, hlen, 1, 1, MPI_INFO_NULL, par, &mhw) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    /* The MPI dynamic window's displacement 0 is the region's address. */
    MPI_Aint addr = 0;
    if (rank == 1) MPI_Get_address(region, &addr);
    MPI_Bcast(&addr, 1, MPI_AINT, 1, MPI_COMM_WORLD);
    for (int op = 0; op < 2; op++)
        for (unsigned s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            double best_mpi = 1e30, best_mh = 1e30;
            for (int t = 0; t < trials; t++) {
                /* MPI's window: its displacement is the region's address (a dynamic window) */
                double a = run(dyn, dyn, op == 0, buf, sizes[s], addr, rank == 0 ? iters : 0);
                double b = run(mhw, par, op == 0, buf, sizes[s], 0, rank == 0 ? iters : 0);
                if (rank == 0) {
                    if (a < best_mpi) best_mpi = a;
                    if (b < best_mh) best_mh = b;
                }
            }
            if (rank == 0)
                printf("%s %s %d mpi_dynamic_us=%.3f memhandle_us=%.3f speedup=%.2f\n", memory, op ? "get" : "put",
                       sizes[s], best_mpi, best_mh, best_mpi / best_mh);
        }
    /* The data of the last put is at the target. */
    if (rank == 0) {
        memset(buf, 7, 8);
        MPI_Win_lock_all(0, par);
        MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, mhw);
        MPI_Win_flush(1, mhw);
        MPI_Win_unlock_all(par);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 && region[0] != 7) {
        fprintf(stderr, "mh_user_memory: the put did not land\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        MPI_Win_free(&mhw);
        /* A handle window per exchange: made, one put + flush, freed. */
        MPI_Win_lock_all(0, par);
        const int n = iters / 10 + 1;
        exchange_us = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            MPIX_Win_from_memhandle(handle, hlen, 1, 1, MPI_INFO_NULL, par, &mhw);
            MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, mhw);
            MPI_Win_flush(1, mhw);
            MPI_Win_free(&mhw);
        }
        exchange_us = (MPI_Wtime() - exchange_us) / n * 1e6;
        MPI_Win_unlock_all(par);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        release_us = MPI_Wtime();
        MPIX_Memhandle_release(handle, par);
        release_us = (MPI_Wtime() - release_us) * 1e6;
        MPI_Win_detach(dyn, region);
        MPI_Win_detach(par, region);
    }
    double owner[2] = {create_us, release_us};
    MPI_Bcast(owner, 2, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s handle bytes=%zu create_us=%.1f release_us=%.1f window_per_exchange_us=%.3f\n", memory, rsize,
               owner[0], owner[1], exchange_us);
    MPI_Win_free(&par);
    MPI_Win_free(&dyn);
    MPI_Info_free(&ucx);
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided); /* Open MPI's osc pt2pt (TCP) refuses MULTIPLE */
    const char *memory = argc > 1 ? argv[1] : "malloc";
    int iters = argc > 2 ? atoi(argv[2]) : 2000, trials = argc > 3 ? atoi(argv[3]) : 5;
    if (!strcmp(memory, "stack")) {
        char region[STACK_REGION];
        memset(region, 0, sizeof region);
        bench(region, sizeof region, memory, iters, trials);
    } else if (!strcmp(memory, "alloc_mem")) {
        char *region;
        MPI_Alloc_mem(REGION, MPI_INFO_NULL, &region);
        memset(region, 0, REGION);
        bench(region, REGION, memory, iters, trials);
        MPI_Free_mem(region);
    } else {
        size_t n = !strcmp(memory, "malloc_small") ? SMALL_REGION : !strcmp(memory, "malloc_4k") ? PAGE_REGION : REGION;
        char *region = !strcmp(memory, "calloc") ? calloc(1, n) : malloc(n);
        if (strcmp(memory, "calloc")) memset(region, 0, n);
        bench(region, n, memory, iters, trials);
        free(region);
    }
    MPI_Finalize();
    return 0;
}
