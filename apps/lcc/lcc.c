/* Local clustering coefficient (LCC) on clampi, as in the CLaMPI evaluation.
 *
 * Vertices are block-partitioned over the ranks; each rank exposes the adjacency lists
 * of its vertices in a window (always-cache: the graph is read-only). For every local
 * vertex v, the adjacency list of each remote neighbour u is fetched with one get of
 * deg(u) ints, completed with a flush, and intersected with v's list (with --pipeline,
 * a vertex's gets go into a scratch area under one flush_all per batch instead); t(v) = (sum of the intersections) / 2, LCC(v) = t(v) / (d(d-1)/2).
 * Degrees (the CSR row offsets) are known on every rank, as in the paper.
 *
 * Configurations run side by side in one job, alternating trial by trial:
 *   uncached                   plain MPI_Get / MPI_Win_flush_all on an MPI window
 *   fixed[:INDEX[:BUFFER]]     clampi, sizes fixed (clampi_adaptive=false)
 *   adaptive[:INDEX[:BUFFER]]  clampi, adaptive sizing from the given start
 * Each clampi trial uses a fresh window (cold cache, starting sizes).
 *
 * Usage: lcc [--scale S --edgefactor E --seed X | --file EDGES] [--config C]... [--trials T]
 *            [--verify] [--expect-triangles N] [--expect-lcc X] [--out FILE] [--json FILE]
 *            [--shm-direct true|false] [--pipeline [--batch INTS]] */
#include <clampi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appkit.h"
#include "graph.h"

static int rank, nranks;
static int pipeline;  /* --pipeline: batch a vertex's gets under one flush_all */
static int64_t chunk; /* vertices per rank (block partition) */

static int owner(int64_t v) { return (int)(v / chunk); }
static int64_t first_of(int r, int64_t n) {
    int64_t f = (int64_t)r * chunk;
    return f < n ? f : n;
}

typedef struct lcc_ctx {
    const graph *g; /* row offsets for every vertex; adj only if verifying */
    int64_t lo, hi; /* local vertices */
    int32_t *local; /* local adjacency lists (the window's memory) */
    int32_t *scratch;
    int64_t scratch_cap;
    int64_t *tri; /* per local vertex */
} lcc_ctx;

typedef struct pending {
    int64_t pos, len;
} pending;

/* Counts triangles of every local vertex through one of the windows. */
static double run_trial(lcc_ctx *x, int cached, MPI_Win mw, CMPI_Win cw, app_run *ev_run) {
    const graph *g = x->g;
    pending *pend = malloc(sizeof *pend * (size_t)(x->scratch_cap + 1));
    MPI_Barrier(MPI_COMM_WORLD);
    if (cached)
        CMPI_Win_lock_all(MPI_MODE_NOCHECK, cw);
    else
        MPI_Win_lock_all(MPI_MODE_NOCHECK, mw);
    double t0 = MPI_Wtime();
    if (ev_run) app_events_begin(ev_run), app_events_sample(ev_run, cw, 0, 0);
    for (int64_t v = x->lo; v < x->hi; v++) {
        const int32_t *av = x->local + (g->row[v] - g->row[x->lo]);
        const int64_t dv = g->row[v + 1] - g->row[v];
        int64_t sum = 0, pos = 0, np = 0;
        for (int64_t i = 0; i <= dv; i++) {
            int64_t u = i < dv ? av[i] : -1, du = u >= 0 ? g->row[u + 1] - g->row[u] : 0;
            int o = u >= 0 ? owner(u) : -1;
            if (o == rank) { /* local neighbour: read it in place */
                sum += graph_intersect(av, dv, x->local + (g->row[u] - g->row[x->lo]), du);
                continue;
            }
            if (u < 0 || pos + du > x->scratch_cap) { /* end of batch: complete and intersect */
                if (np) {
                    if (cached)
                        CMPI_Win_flush_all(cw);
                    else
                        MPI_Win_flush_all(mw);
                    for (int64_t k = 0; k < np; k++)
                        sum += graph_intersect(av, dv, x->scratch + pend[k].pos, pend[k].len);
                }
                pos = np = 0;
                if (u < 0) break;
            }
            if (du == 0) continue;
            MPI_Aint disp = (MPI_Aint)(g->row[u] - g->row[first_of(o, g->n)]);
            if (!pipeline) { /* one get, one flush, one intersection: as in the paper */
                if (cached) {
                    CMPI_Get(x->scratch, (int)du, MPI_INT32_T, o, disp, (int)du, MPI_INT32_T, cw);
                    CMPI_Win_flush(o, cw);
                } else {
                    MPI_Get(x->scratch, (int)du, MPI_INT32_T, o, disp, (int)du, MPI_INT32_T, mw);
                    MPI_Win_flush(o, mw);
                }
                sum += graph_intersect(av, dv, x->scratch, du);
                continue;
            }
            if (cached)
                CMPI_Get(x->scratch + pos, (int)du, MPI_INT32_T, o, disp, (int)du, MPI_INT32_T, cw);
            else
                MPI_Get(x->scratch + pos, (int)du, MPI_INT32_T, o, disp, (int)du, MPI_INT32_T, mw);
            pend[np++] = (pending){pos, du};
            pos += du;
        }
        x->tri[v - x->lo] = sum / 2;
        if (ev_run && ((v - x->lo) & 63) == 0) app_events_sample(ev_run, cw, MPI_Wtime() - t0, (long)(v - x->lo));
    }
    if (cached)
        CMPI_Win_unlock_all(cw);
    else
        MPI_Win_unlock_all(mw);
    double t = MPI_Wtime() - t0, tmax;
    if (ev_run) app_events_sample(ev_run, cw, t, (long)(x->hi - x->lo));
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    free(pend);
    return tmax;
}

static void die(const char *msg) {
    if (rank == 0) fprintf(stderr, "lcc: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int scale = 12, edgefactor = 16, trials = 3, verify = 0;
    uint64_t seed = 1;
    long long batch = 1 << 20, expect_tri = -1;
    double expect_lcc = -1;
    const char *file = NULL, *out = NULL, *json = NULL, *shm = NULL;
    app_run runs[APP_MAX_CONFIGS];
    int nruns = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--verify")) {
            verify = 1;
            continue;
        }
        if (!strcmp(a, "--pipeline")) {
            pipeline = 1;
            continue;
        }
        if (!v) die("missing value after an option");
        i++;
        if (!strcmp(a, "--scale"))
            scale = atoi(v);
        else if (!strcmp(a, "--edgefactor"))
            edgefactor = atoi(v);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--file"))
            file = v;
        else if (!strcmp(a, "--trials"))
            trials = atoi(v);
        else if (!strcmp(a, "--batch"))
            batch = atoll(v);
        else if (!strcmp(a, "--expect-triangles"))
            expect_tri = atoll(v);
        else if (!strcmp(a, "--expect-lcc"))
            expect_lcc = atof(v);
        else if (!strcmp(a, "--out"))
            out = v;
        else if (!strcmp(a, "--json"))
            json = v;
        else if (!strcmp(a, "--shm-direct"))
            shm = v;
        else if (!strcmp(a, "--config")) {
            if (nruns == APP_MAX_CONFIGS) die("too many --config");
            memset(&runs[nruns], 0, sizeof runs[nruns]);
            if (app_parse_config(v, &runs[nruns].cfg) != 0)
                die("bad --config (uncached | fixed[:INDEX[:BUFFER]] | adaptive[:INDEX[:BUFFER]])");
            nruns++;
        } else
            die("unknown option");
    }
    if (trials < 1 || trials > APP_MAX_TRIALS) die("--trials must be 1..32");
    if (nruns == 0) {
        app_parse_config("uncached", &runs[nruns++].cfg);
        app_parse_config("fixed", &runs[nruns++].cfg);
        app_parse_config("adaptive", &runs[nruns++].cfg);
    }

    graph g;
    double tg = MPI_Wtime();
    if (file ? graph_read_edges(&g, file) : graph_rmat(&g, scale, edgefactor, seed)) die("cannot build the graph");
    tg = MPI_Wtime() - tg;
    chunk = (g.n + nranks - 1) / nranks;
    if (chunk == 0) chunk = 1;
    lcc_ctx x = {.g = &g, .lo = first_of(rank, g.n), .hi = first_of(rank + 1, g.n)};
    const int64_t nlocal_adj = g.row[x.hi] - g.row[x.lo];
    int64_t maxdeg = 0;
    for (int64_t v = 0; v < g.n; v++)
        if (g.row[v + 1] - g.row[v] > maxdeg) maxdeg = g.row[v + 1] - g.row[v];
    x.scratch_cap = batch > maxdeg ? batch : maxdeg;
    x.scratch = malloc(sizeof *x.scratch * (size_t)x.scratch_cap);
    x.tri = calloc((size_t)(x.hi - x.lo + 1), sizeof *x.tri);
    int64_t *ref = NULL;
    if (verify) { /* serial reference for the local vertices, from the whole graph */
        ref = malloc(sizeof *ref * (size_t)(x.hi - x.lo + 1));
        for (int64_t v = x.lo; v < x.hi; v++) ref[v - x.lo] = graph_triangles_at(&g, v);
    }
    if (rank == 0)
        printf("# lcc: %s n=%lld undirected edges=%lld max degree=%lld, %d ranks, built in %.2fs\n",
               file ? file : "R-MAT", (long long)g.n, (long long)g.row[g.n] / 2, (long long)maxdeg, nranks, tg);

    /* The uncached baseline's window: plain MPI. */
    int32_t *mbase;
    MPI_Win mw;
    /* size rounded up to 64 bytes: MPICH 4.0's MPI_Win_allocate misplaces the targets
     * after a rank whose size is not a multiple of 16 */
    MPI_Win_allocate((MPI_Aint)((nlocal_adj * 4 + 63) & ~63), 4, MPI_INFO_NULL, MPI_COMM_WORLD, &mbase, &mw);
    memcpy(mbase, g.adj + g.row[x.lo], (size_t)nlocal_adj * 4);
    x.local = mbase;
    if (!verify) {
        free(g.adj);
        g.adj = NULL;
    } /* from here on, remote lists come only through gets */
    MPI_Barrier(MPI_COMM_WORLD);

    int64_t tri_total = -1;
    double lcc_avg = 0;
    for (int t = 0; t < trials; t++) {
        for (int c = 0; c < nruns; c++) {
            app_run *r = &runs[c];
            double tt;
            if (r->cfg.kind == APP_UNCACHED) {
                tt = run_trial(&x, 0, mw, (CMPI_Win){0}, NULL);
            } else {
                MPI_Info info = app_config_info(&r->cfg, CLAMPI_ALWAYS_CACHE, shm);
                int32_t *cbase;
                CMPI_Win cw;
                if (CMPI_Win_allocate((MPI_Aint)(nlocal_adj * 4), 4, info, MPI_COMM_WORLD, &cbase, &cw) != MPI_SUCCESS)
                    die("CMPI_Win_allocate failed");
                MPI_Info_free(&info);
                MPI_Win_set_name(cw.win, "lcc_graph");
                memcpy(cbase, mbase, (size_t)nlocal_adj * 4);
                MPI_Barrier(MPI_COMM_WORLD);
                x.local = cbase;
                tt = run_trial(&x, 1, MPI_WIN_NULL, cw, rank == 0 ? r : NULL);
                x.local = mbase;
                app_stats_accumulate(cw, &r->stats);
                CMPI_Win_free(&cw);
            }
            r->t[r->ntrials++] = tt;
            /* results: the same in every configuration, and (with --verify) the serial ones */
            int64_t mine = 0, tot;
            double lsum = 0, lall;
            for (int64_t v = x.lo; v < x.hi; v++) {
                mine += x.tri[v - x.lo];
                lsum += graph_lcc(g.row[v + 1] - g.row[v], x.tri[v - x.lo]);
                if (ref && ref[v - x.lo] != x.tri[v - x.lo]) {
                    fprintf(stderr, "lcc: WRONG triangles at vertex %lld (%s): %lld, serial %lld\n", (long long)v,
                            r->cfg.name, (long long)x.tri[v - x.lo], (long long)ref[v - x.lo]);
                    MPI_Abort(MPI_COMM_WORLD, 3);
                }
            }
            MPI_Allreduce(&mine, &tot, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(&lsum, &lall, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            if (tot % 3) die("triangle sum not divisible by 3");
            if (tri_total >= 0 && tot / 3 != tri_total) die("configurations disagree on the triangle count");
            tri_total = tot / 3;
            lcc_avg = g.n ? lall / (double)g.n : 0;
        }
        if (rank == 0) {
            printf("# trial %d/%d done\n", t + 1, trials);
            fflush(stdout);
        }
    }
    if (rank == 0)
        printf("# triangles=%lld average_lcc=%.6f%s\n", (long long)tri_total, lcc_avg,
               verify ? " (verified against serial)" : "");
    if (expect_tri >= 0 && tri_total != expect_tri) die("triangle count differs from --expect-triangles");
    if (expect_lcc >= 0 && fabs(lcc_avg - expect_lcc) > 1e-9) die("average LCC differs from --expect-lcc");
    if (out) { /* per-vertex LCC, gathered on rank 0 */
        int nl = (int)(x.hi - x.lo), *counts = malloc(sizeof(int) * nranks), *displs = malloc(sizeof(int) * nranks);
        double *mine = malloc(sizeof(double) * (nl + 1)), *all = rank == 0 ? malloc(sizeof(double) * (g.n + 1)) : NULL;
        for (int64_t v = x.lo; v < x.hi; v++) mine[v - x.lo] = graph_lcc(g.row[v + 1] - g.row[v], x.tri[v - x.lo]);
        MPI_Gather(&nl, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (int r = 0; r < nranks; r++) displs[r] = (int)first_of(r, g.n);
        MPI_Gatherv(mine, nl, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            FILE *f = fopen(out, "w");
            if (!f) die("cannot write --out");
            fprintf(f, "# vertex lcc\n");
            for (int64_t v = 0; v < g.n; v++) fprintf(f, "%lld %.9f\n", (long long)v, all[v]);
            fclose(f);
        }
        free(counts);
        free(displs);
        free(mine);
        free(all);
    }
    int64_t nmax = chunk;
    char params[256];
    snprintf(params, sizeof params,
             "\"graph\": \"%s\", \"scale\": %d, \"edgefactor\": %d, \"n\": %lld, \"edges\": %lld, "
             "\"triangles\": %lld, \"average_lcc\": %.9g, \"trials\": %d",
             file ? "file" : "rmat", file ? 0 : scale, file ? 0 : edgefactor, (long long)g.n, (long long)g.row[g.n] / 2,
             (long long)tri_total, lcc_avg, trials);
    if (rank == 0)
        app_report("lcc", params, "seconds per run (max over ranks)", 1e6 / (double)nmax, "us/vertex", runs, nruns,
                   json, nranks);
    MPI_Win_free(&mw);
    graph_free(&g);
    free(x.scratch);
    free(x.tri);
    free(ref);
    MPI_Finalize();
    return 0;
}
