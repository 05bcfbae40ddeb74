/* The Quo Vadis RMA paper's Fig. 8/9 (RMA-MT style): T threads of rank 0 each put+flush to rank 1, own
 * 64 KiB slot each. Latency per put+flush, averaged over the threads. Variants: plain MPI
 * window (process scope by nature), clampi UCX window with mpi_win_scope=process and
 * with mpi_win_scope=thread. Rank 1 waits in MPI_Barrier (progress for MPIs that need it). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"

#define SLOT (64 * 1024)

static void *mt_thread(void *p) {
    exp_thread *a = p;
    unsigned char *buf = malloc(a->size);
    memset(buf, a->tid, a->size);
    /* warm-up: per-thread UCX worker and endpoints are created on first use */
    bw_put(a->w, buf, a->size, 1, (MPI_Aint)a->tid * SLOT);
    bw_flush(a->w, 1);
    pthread_barrier_wait(a->start);
    double t0 = bw_now();
    for (int i = 0; i < a->iters; i++) {
        bw_put(a->w, buf, a->size, 1, (MPI_Aint)a->tid * SLOT);
        bw_flush(a->w, 1);
    }
    a->elapsed = bw_now() - t0;
    free(buf);
    return NULL;
}

int exp_mt(const exp_opts *o) {
    static const int sizes[] = {1, 8, 64, 512, 4096, 65536};
    static const int tcounts[] = {1, 2, 4, 8, 16, 32};
    const char *const thread_keys[] = {"mpi_win_scope", "thread", NULL};
    const char *const process_keys[] = {"mpi_win_scope", "process", NULL};
    struct {
        const char *name;
        bw_kind kind;
        const char *const *keys;
    } vars[] = {
        {"mpi", BW_MPI_ALLOC, NULL},
        {"clampi_process", BW_CL_ALLOC, process_keys},
        {"clampi_thread", BW_CL_ALLOC, thread_keys},
    };
    const int nvars = o->mpi_only ? 1 : 3;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bwin w[3];
    for (int v = 0; v < nvars; v++) {
        if (bw_create(&w[v], vars[v].kind, 32 * SLOT, MPI_COMM_WORLD, vars[v].keys, 0) != MPI_SUCCESS) return 1;
        if (rank == 0) bw_lock_all(&w[v]);
    }
    for (unsigned ti = 0; ti < sizeof tcounts / sizeof *tcounts; ti++) {
        int T = tcounts[ti];
        if (T > o->max_threads) break;
        for (unsigned si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            int size = sizes[si];
            int iters = o->iters > 0 ? o->iters : (size >= 4096 ? 100 : 400);
            iters = iters / (T >= 8 ? 4 : 1) + 10;
            double best[3] = {1e30, 1e30, 1e30}, sum[3] = {0};
            for (int trial = 0; trial < o->trials; trial++) /* alternate variants */
                for (int v = 0; v < nvars; v++) {
                    double l = exp_threads_run(&w[v], T, size, iters, 0, rank, mt_thread);
                    if (l < best[v]) best[v] = l;
                    sum[v] += l;
                }
            if (rank == 0)
                for (int v = 0; v < nvars; v++)
                    bw_json("\"exp\":\"mt\",\"variant\":\"%s\",\"threads\":%d,\"size\":%d,\"iters\":%d,"
                            "\"lat_us\":%.3f,\"lat_mean_us\":%.3f",
                            vars[v].name, T, size, iters, best[v], sum[v] / o->trials);
        }
    }
    for (int v = 0; v < nvars; v++) {
        if (rank == 0) bw_unlock_all(&w[v]);
        bw_free(&w[v]);
    }
    return 0;
}
