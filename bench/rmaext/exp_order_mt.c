/* The Quo Vadis RMA paper's Fig. 11 pattern: threads x ordering x scope. T threads of rank 0
 * each put to their own slot at rank 1, N puts per thread, timed per put, averaged over the
 * threads, in three styles:
 *   put_flush  a flush after every put (the way to order puts without mpi_win_order)
 *   ordered    mpi_win_order=true, N puts, one flush at the end
 *   unordered  mpi_win_order=false, N puts, one flush at the end (the bound: no ordering)
 * on clampi UCX windows with mpi_win_scope=process and =thread, and put_flush on the MPI
 * library's window. Rank 1 waits in a barrier. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"

#define SLOT (64 * 1024)

enum { PUT_FLUSH, ORDERED, UNORDERED };
static const char *const style_name[] = {"put_flush", "ordered", "unordered"};

static void *om_thread(void *p) {
    exp_thread *a = p;
    unsigned char *buf = malloc((size_t)a->size);
    memset(buf, a->tid + 1, (size_t)a->size);
    const MPI_Aint base = (MPI_Aint)a->tid * SLOT;
    bw_put(a->w, buf, a->size, 1, base); /* warm-up: a thread lane is made on first use */
    bw_flush(a->w, 1);
    pthread_barrier_wait(a->start);
    double t0 = bw_now();
    for (int i = 0; i < a->iters; i++) {
        bw_put(a->w, buf, a->size, 1, base + (MPI_Aint)(i % 8) * a->size);
        if (a->style == PUT_FLUSH) bw_flush(a->w, 1);
    }
    bw_flush(a->w, 1);
    a->elapsed = bw_now() - t0;
    free(buf);
    return NULL;
}

int exp_order_mt(const exp_opts *o) {
    static const int sizes[] = {8, 512, 4096};
    static const int tcounts[] = {1, 2, 4};
    const char *const p_ord[] = {"mpi_win_scope", "process", "mpi_win_order", "true", NULL};
    const char *const p_un[] = {"mpi_win_scope", "process", "mpi_win_order", "false", NULL};
    const char *const t_ord[] = {"mpi_win_scope", "thread", "mpi_win_order", "true", NULL};
    const char *const t_un[] = {"mpi_win_scope", "thread", "mpi_win_order", "false", NULL};
    struct {
        const char *name; /* scope */
        bw_kind kind;
        const char *const *keys;
        int styles; /* bit per style this window runs */
    } vars[] = {
        {"mpi", BW_MPI_ALLOC, NULL, 1 << PUT_FLUSH},
        {"clampi_process", BW_CL_ALLOC, p_un, 1 << PUT_FLUSH | 1 << UNORDERED},
        {"clampi_process", BW_CL_ALLOC, p_ord, 1 << ORDERED},
        {"clampi_thread", BW_CL_ALLOC, t_un, 1 << PUT_FLUSH | 1 << UNORDERED},
        {"clampi_thread", BW_CL_ALLOC, t_ord, 1 << ORDERED},
    };
    enum { NV = sizeof vars / sizeof *vars };
    const int nvars = o->mpi_only ? 1 : NV;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bwin w[NV];
    for (int v = 0; v < nvars; v++) {
        if (bw_create(&w[v], vars[v].kind, 16 * SLOT, MPI_COMM_WORLD, vars[v].keys, 0) != MPI_SUCCESS) return 1;
        if (rank == 0) bw_lock_all(&w[v]);
    }
    for (unsigned ti = 0; ti < sizeof tcounts / sizeof *tcounts; ti++) {
        const int T = tcounts[ti];
        if (T > o->max_threads) break;
        for (unsigned si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            const int size = sizes[si];
            const int iters = o->iters > 0 ? o->iters : 200;
            double best[NV][3], sum[NV][3];
            for (int v = 0; v < NV; v++)
                for (int s = 0; s < 3; s++) best[v][s] = 1e30, sum[v][s] = 0;
            for (int trial = 0; trial < o->trials; trial++) /* alternate everything */
                for (int v = 0; v < nvars; v++)
                    for (int s = 0; s < 3; s++) {
                        if (!(vars[v].styles & (1 << s))) continue;
                        double l = exp_threads_run(&w[v], T, size, iters, s, rank, om_thread);
                        if (l < best[v][s]) best[v][s] = l;
                        sum[v][s] += l;
                    }
            if (rank == 0)
                for (int v = 0; v < nvars; v++)
                    for (int s = 0; s < 3; s++)
                        if (vars[v].styles & (1 << s))
                            bw_json("\"exp\":\"order_mt\",\"scope\":\"%s\",\"style\":\"%s\",\"threads\":%d,\"size\":%d,"
                                    "\"iters\":%d,\"lat_us\":%.3f,\"lat_mean_us\":%.3f",
                                    vars[v].name, style_name[s], T, size, iters, best[v][s], sum[v][s] / o->trials);
        }
    }
    for (int v = 0; v < nvars; v++) {
        if (rank == 0) bw_unlock_all(&w[v]);
        bw_free(&w[v]);
    }
    return 0;
}
