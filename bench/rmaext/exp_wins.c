/* The Quo Vadis RMA paper's Fig. 4/12: put and get latency (osu_put_latency style: op + flush, lock_all epoch)
 * on allocated, dynamic and memory-handle windows, and on memory-handle windows created
 * and freed around every exchange ("ucx_memhandle_create": from_memhandle + op + flush +
 * free). MPI windows: allocated and dynamic. Rank 1 is the target, waiting in a barrier. */
#include <stdlib.h>
#include <string.h>

#include "exp.h"

#define MAXSIZE (1 << 20)

static double wins_run(bwin *w, int get, int per_exchange, int size, int n, int rank, unsigned char *buf) {
    double lat = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double t0 = bw_now();
        for (int i = 0; i < n; i++) {
            if (per_exchange) bw_mh_open(w, NULL);
            if (get)
                bw_get(w, buf, size, 1, 0);
            else
                bw_put(w, buf, size, 1, 0);
            bw_flush(w, 1);
            if (per_exchange) bw_mh_close(w);
        }
        lat = (bw_now() - t0) / n * 1e6;
    }
    bw_barrier(w);
    return lat;
}

/* The cost of creating and freeing a memory-handle window alone. */
static double mh_cycle_cost(bwin *w, int n) {
    double t0 = bw_now();
    for (int i = 0; i < n; i++) {
        bw_mh_open(w, NULL);
        bw_mh_close(w);
    }
    return (bw_now() - t0) / n * 1e6;
}

int exp_wins(const exp_opts *o) {
    static const int sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576};
    /* reuse: the per-exchange variants time the window of that entry, closed and reopened
     * around every exchange. ucx_memhandle_heap: the target's memory from CMPI_Alloc_mem
     * (clampi's node-shared heap: the peer's window reaches it by load/store). */
    struct {
        const char *name;
        bw_kind kind;
        int per_exchange, reuse;
    } vars[] = {
        {"mpi_alloc", BW_MPI_ALLOC, 0, -1},
        {"mpi_dynamic", BW_MPI_DYN, 0, -1},
        {"ucx_alloc", BW_CL_ALLOC, 0, -1},
        {"ucx_dynamic", BW_CL_DYN, 0, -1},
        {"ucx_memhandle", BW_CL_MH, 0, -1},
        {"ucx_memhandle_create", BW_CL_MH, 1, 4},
        {"ucx_memhandle_heap", BW_CL_MH_HEAP, 0, -1},
        {"ucx_memhandle_heap_create", BW_CL_MH_HEAP, 1, 6},
    };
    enum { NV = sizeof vars / sizeof *vars };
    const int nvars = o->mpi_only ? 2 : NV;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bwin w[NV];
    for (int v = 0; v < nvars; v++) {
        if (vars[v].reuse >= 0) {
            w[v] = w[vars[v].reuse];
            continue;
        }
        /* rank 1 owns the handle; rank 0 makes the window */
        if (bw_create(&w[v], vars[v].kind, MAXSIZE, MPI_COMM_WORLD, NULL, 1) != MPI_SUCCESS) return 1;
        if (rank == 0) bw_lock_all(&w[v]);
    }
    unsigned char *buf = malloc(MAXSIZE);
    memset(buf, 3, MAXSIZE);
    for (int v = 0; v < nvars && rank == 0; v++) {
        if (vars[v].reuse < 0) continue;
        bwin *mh = &w[vars[v].reuse];
        bw_mh_close(mh); /* the per-exchange variant starts closed; reopen after */
        double c = mh_cycle_cost(mh, 2000);
        bw_json("\"exp\":\"mh_cycle\",\"variant\":\"%s\",\"create_free_us\":%.3f", vars[vars[v].reuse].name, c);
        bw_mh_open(mh, NULL);
    }
    for (int get = 0; get <= 1; get++)
        for (unsigned si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            int size = sizes[si];
            int n = o->iters > 0 ? o->iters : (size >= 262144 ? 40 : size >= 32768 ? 100 : 500);
            double best[NV], sum[NV] = {0};
            for (int v = 0; v < NV; v++) best[v] = 1e30;
            for (int trial = 0; trial < o->trials; trial++)
                for (int v = 0; v < nvars; v++) {
                    const int r = vars[v].reuse;
                    if (r >= 0 && rank == 0) bw_mh_close(&w[r]);
                    double l = wins_run(r >= 0 ? &w[r] : &w[v], get, vars[v].per_exchange, size, n, rank, buf);
                    if (r >= 0 && rank == 0) bw_mh_open(&w[r], NULL);
                    if (l < best[v]) best[v] = l;
                    sum[v] += l;
                }
            if (rank == 0)
                for (int v = 0; v < nvars; v++)
                    bw_json("\"exp\":\"wins\",\"op\":\"%s\",\"variant\":\"%s\",\"size\":%d,\"n\":%d,"
                            "\"lat_us\":%.3f,\"lat_mean_us\":%.3f",
                            get ? "get" : "put", vars[v].name, size, n, best[v], sum[v] / o->trials);
        }
    free(buf);
    for (int v = 0; v < nvars; v++) {
        if (vars[v].reuse >= 0) continue;
        if (rank == 0) bw_unlock_all(&w[v]);
        bw_free(&w[v]);
    }
    return 0;
}
