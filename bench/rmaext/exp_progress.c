/* The Quo Vadis RMA paper's §4.1.2: the target stays busy outside MPI for busy_ms, then waits in a barrier;
 * meanwhile the origin issues put+flush operations (8 B) and times each. If the
 * one-sided path progresses without the target, the mean latency is the transport's
 * latency; if not, the first operation waits until the target enters MPI (~busy_ms).
 * Variants: MPI allocated and dynamic windows, clampi UCX windows with clampi_progress
 * auto / thread / none. The UCX target, once back, waits in bw_barrier (which serves
 * UCX through clampi's request hook) so that clampi_progress=none also finishes. */
#include <stdlib.h>

#include "exp.h"

static void busy(double ms) {
    double end = bw_now() + ms * 1e-3;
    volatile unsigned long x = 0;
    while (bw_now() < end) x++;
}

static void progress_run(bwin *w, int n, double busy_ms, int rank, double *mean, double *max, double *total) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        busy(busy_ms);
        bw_barrier(w); /* back in MPI (for clampi windows also serving UCX, see bwin.h) */
        return;
    }
    long v = 42;
    double t0 = bw_now(), mx = 0;
    for (int i = 0; i < n; i++) {
        double t = bw_now();
        bw_put(w, &v, sizeof v, 1, 0);
        bw_flush(w, 1);
        t = bw_now() - t;
        if (t > mx) mx = t;
    }
    *total = (bw_now() - t0) * 1e6;
    *mean = *total / n;
    *max = mx * 1e6;
    bw_barrier(w);
}

int exp_progress(const exp_opts *o) {
    const char *const auto_keys[] = {"clampi_progress", "auto", NULL};
    const char *const thread_keys[] = {"clampi_progress", "thread", NULL};
    const char *const none_keys[] = {"clampi_progress", "none", NULL};
    struct {
        const char *name;
        bw_kind kind;
        const char *const *keys;
    } vars[] = {
        {"mpi_alloc", BW_MPI_ALLOC, NULL},
        {"mpi_dynamic", BW_MPI_DYN, NULL},
        {"ucx_progress_auto", BW_CL_ALLOC, auto_keys},
        {"ucx_progress_thread", BW_CL_ALLOC, thread_keys},
        {"ucx_progress_none", BW_CL_ALLOC, none_keys},
    };
    const int nvars = o->mpi_only ? 2 : 5;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int n = o->iters > 0 ? o->iters : 100;
    for (int trial = 0; trial < o->trials; trial++)
        for (int v = 0; v < nvars; v++) {
            bwin w;
            if (bw_create(&w, vars[v].kind, 4096, MPI_COMM_WORLD, vars[v].keys, 0) != MPI_SUCCESS) return 1;
            if (rank == 0) bw_lock_all(&w);
            double mean = 0, max = 0, total = 0;
            if (rank == 0) {
                /* warm-up (connection setup) while the target is in MPI */
                long v0 = 0;
                bw_put(&w, &v0, sizeof v0, 1, 0);
                bw_flush(&w, 1);
            }
            bw_barrier(&w);
            progress_run(&w, n, o->busy_ms, rank, &mean, &max, &total);
            if (rank == 0) {
                bw_unlock_all(&w);
                bw_json("\"exp\":\"progress\",\"variant\":\"%s\",\"trial\":%d,\"busy_ms\":%.1f,\"n\":%d,"
                        "\"lat_mean_us\":%.3f,\"lat_max_us\":%.3f,\"total_us\":%.1f",
                        vars[v].name, trial, o->busy_ms, n, mean, max, total);
            }
            bw_free(&w);
        }
    return 0;
}
