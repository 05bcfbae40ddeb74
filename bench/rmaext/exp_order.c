/* The Quo Vadis RMA paper's Fig. 10: put latency (a) with a flush after each put, (b) N puts and one flush at
 * the end, (c) the same on an mpi_win_order=true window (ordered at the target without
 * intermediate flushes). Latency = time / N. MPI windows run (a) and (b) for reference. */
#include <stdlib.h>
#include <string.h>

#include "exp.h"

enum { PUT_FLUSH, PUT_NOFLUSH };

static double order_run(bwin *w, int style, int size, int n, int rank, unsigned char *buf) {
    double lat = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double t0 = bw_now();
        for (int i = 0; i < n; i++) {
            bw_put(w, buf, size, 1, (MPI_Aint)(i % 16) * size);
            if (style == PUT_FLUSH) bw_flush(w, 1);
        }
        bw_flush(w, 1);
        lat = (bw_now() - t0) / n * 1e6;
    }
    bw_barrier(w);
    return lat;
}

int exp_order(const exp_opts *o) {
    static const int sizes[] = {8, 64, 512, 4096, 32768};
    const char *const ordered[] = {"mpi_win_order", "true", NULL};
    const char *const unordered[] = {"mpi_win_order", "false", NULL};
    struct {
        const char *name;
        bw_kind kind;
        const char *const *keys;
        int style;
    } vars[] = {
        {"mpi_put_flush", BW_MPI_ALLOC, NULL, PUT_FLUSH},
        {"mpi_no_flush", BW_MPI_ALLOC, NULL, PUT_NOFLUSH},
        {"clampi_put_flush", BW_CL_ALLOC, unordered, PUT_FLUSH},
        {"clampi_no_flush", BW_CL_ALLOC, unordered, PUT_NOFLUSH},
        {"clampi_ordered", BW_CL_ALLOC, ordered, PUT_NOFLUSH},
    };
    const int nvars = o->mpi_only ? 2 : 5;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bwin w[5];
    for (int v = 0; v < nvars; v++) {
        /* the two MPI variants and the two unordered clampi variants share a window */
        if (v == 1 || v == 3) {
            w[v] = w[v - 1];
            continue;
        }
        if (bw_create(&w[v], vars[v].kind, 16 * 32768, MPI_COMM_WORLD, vars[v].keys, 0) != MPI_SUCCESS) return 1;
        if (rank == 0) bw_lock_all(&w[v]);
    }
    unsigned char *buf = malloc(32768);
    memset(buf, 7, 32768);
    for (unsigned si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int size = sizes[si];
        int n = o->iters > 0 ? o->iters : (size >= 4096 ? 200 : 1000);
        double best[5], sum[5] = {0};
        for (int v = 0; v < 5; v++) best[v] = 1e30;
        for (int trial = 0; trial < o->trials; trial++)
            for (int v = 0; v < nvars; v++) {
                double l = order_run(&w[v], vars[v].style, size, n, rank, buf);
                if (l < best[v]) best[v] = l;
                sum[v] += l;
            }
        if (rank == 0)
            for (int v = 0; v < nvars; v++)
                bw_json(
                    "\"exp\":\"order\",\"variant\":\"%s\",\"size\":%d,\"n\":%d,\"lat_us\":%.3f,\"lat_mean_us\":%.3f",
                    vars[v].name, size, n, best[v], sum[v] / o->trials);
    }
    free(buf);
    for (int v = 0; v < nvars; v++) {
        if (v == 1 || v == 3) continue;
        if (rank == 0) bw_unlock_all(&w[v]);
        bw_free(&w[v]);
    }
    return 0;
}
