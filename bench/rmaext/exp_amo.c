/* Fetch-and-op (MPI_SUM on a long) and compare-and-swap latency, each followed by a
 * flush (the fetched value is needed): clampi UCX window with
 * mpi_assert_accumulate_intrinsic=true (straight to UCX atomics) vs without, vs the MPI's
 * MPI_Fetch_and_op / MPI_Compare_and_swap on an allocated window. */
#include "exp.h"

static double amo_run(bwin *w, int cas, int n, int rank) {
    double lat = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long one = 1, res = 0, cmp = 0;
        double t0 = bw_now();
        for (int i = 0; i < n; i++) {
            if (cas) {
                bw_cas(w, &one, &cmp, &res, 1, 0);
                cmp = res;
            } else {
                bw_fetch_add(w, &one, &res, 1, 0);
            }
            bw_flush(w, 1);
        }
        lat = (bw_now() - t0) / n * 1e6;
    }
    bw_barrier(w);
    return lat;
}

int exp_amo(const exp_opts *o) {
    const char *const intrinsic[] = {"mpi_assert_accumulate_intrinsic", "true", NULL};
    struct {
        const char *name;
        bw_kind kind;
        const char *const *keys;
    } vars[] = {
        {"mpi", BW_MPI_ALLOC, NULL},
        {"clampi_ucx", BW_CL_ALLOC, NULL},
        {"clampi_ucx_intrinsic", BW_CL_ALLOC, intrinsic},
    };
    const int nvars = o->mpi_only ? 1 : 3;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bwin w[3];
    for (int v = 0; v < nvars; v++) {
        if (bw_create(&w[v], vars[v].kind, 4096, MPI_COMM_WORLD, vars[v].keys, 0) != MPI_SUCCESS) return 1;
        if (rank == 0) bw_lock_all(&w[v]);
    }
    if (nvars == 3 && rank == 0) {
        int flag = -1;
        CMPIX_Win_op_intrinsic("sum,cas", 1, MPI_LONG, w[2].cw, &flag);
        bw_json("\"exp\":\"amo_intrinsic\",\"ops\":\"sum,cas\",\"flag\":%d", flag);
    }
    int n = o->iters > 0 ? o->iters : 2000;
    for (int cas = 0; cas <= 1; cas++) {
        double best[3] = {1e30, 1e30, 1e30}, sum[3] = {0};
        for (int trial = 0; trial < o->trials; trial++)
            for (int v = 0; v < nvars; v++) {
                if (cas && v == 0 && o->no_mpi_cas) continue;
                double l = amo_run(&w[v], cas, n, rank);
                if (l < best[v]) best[v] = l;
                sum[v] += l;
            }
        if (rank == 0)
            for (int v = (cas && o->no_mpi_cas) ? 1 : 0; v < nvars; v++)
                bw_json(
                    "\"exp\":\"amo\",\"op\":\"%s\",\"variant\":\"%s\",\"n\":%d,\"lat_us\":%.3f,\"lat_mean_us\":%.3f",
                    cas ? "cas" : "fetch_and_op", vars[v].name, n, best[v], sum[v] / o->trials);
    }
    for (int v = 0; v < nvars; v++) {
        if (rank == 0) bw_unlock_all(&w[v]);
        bw_free(&w[v]);
    }
    return 0;
}
