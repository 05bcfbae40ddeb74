/* Matching engine alone: cycles per match versus search depth D, per structure.
 *
 * D non-matching receives (other tags, same source) are posted first; each iteration
 * posts one more receive and delivers the message matching it, so the arrival's search
 * walks the D entries ahead of it. Optional cache clearing between iterations (a walk over
 * 64 MiB) reproduces the paper's "queues evicted by the application" case. With T threads,
 * every thread does the same on its own source into the one shared matcher.
 *
 *   engine_bench [--json FILE] [--iters N] [--kinds list,lla,...] [--depths 0,16,...]
 *                [--threads 1,2,4] [--clear 0,1] [--width W] [--simd 0|1|2] [--ahead same|other]
 * --ahead other: the D receives ahead wait for other senders (what bins skip).
 * Prints one line per point: kind D clear threads cycles/match (median), search depth. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "match/match.h"

#define CLEAR_BYTES (64u << 20)
static unsigned char *clear_buf;
static volatile unsigned long clear_sink;

static void clear_caches(void) {
    unsigned long s = 0;
    for (size_t i = 0; i < CLEAR_BYTES; i += 64) {
        clear_buf[i]++;
        s += clear_buf[i];
    }
    clear_sink = s;
}

typedef struct {
    clampi_matcher *m;
    int src, iters, clear, depth, other_sources;
    double depth_sum; /* entries searched by the timed arrivals */
    pthread_barrier_t *bar;
    double *cycles; /* per iteration */
} job;

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *run_job(void *arg) {
    job *j = arg;
    uintptr_t got;
    for (int d = 0; d < j->depth; d++) { /* D non-matching receives ahead */
        clampi_match_key k = {1, j->src, 100000 + d};
        if (j->other_sources) k.source = 1000 + j->src * 64 + d % 64; /* another sender's */
        clampi_matcher_post(j->m, k, (uintptr_t)(d + 1), &got);
    }
    pthread_barrier_wait(j->bar);
    for (int it = 0; it < j->iters; it++) {
        clampi_match_key k = {1, j->src, 7};
        clampi_matcher_post(j->m, k, (uintptr_t)0x7777, &got);
        if (j->clear) clear_caches();
        clampi_matcher_progress(j->m);
        unsigned aux;
        unsigned long long t0 = __rdtscp(&aux);
        int r = clampi_matcher_arrive(j->m, k, 0x8888, &got);
        unsigned long long t1 = __rdtscp(&aux);
        if (r != 1 || got != 0x7777) {
            fprintf(stderr, "engine_bench: no match\n");
            exit(1);
        }
        j->cycles[it] = (double)(t1 - t0);
        j->depth_sum += (double)clampi_matcher_last_depth(j->m);
    }
    pthread_barrier_wait(j->bar);
    return NULL;
}

static int parse_list(const char *s, int *out, int max) {
    int n = 0;
    for (const char *p = s; *p && n < max;) {
        out[n++] = atoi(p);
        p = strchr(p, ',');
        if (!p) break;
        p++;
    }
    return n;
}

int main(int argc, char **argv) {
    const char *json = NULL, *kinds = "list,lla,hot,lla+hot,bins";
    int iters = 200, depths[16] = {0, 16, 128, 1024, 4096}, nd = 5, threads[8] = {1, 2, 4}, nt = 3, clears[2] = {0, 1},
        nc = 2, width = CLAMPI_MATCH_DEFAULT_WIDTH, simd = 2, other = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--json"))
            json = argv[i + 1];
        else if (!strcmp(argv[i], "--iters"))
            iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--kinds"))
            kinds = argv[i + 1];
        else if (!strcmp(argv[i], "--depths"))
            nd = parse_list(argv[i + 1], depths, 16);
        else if (!strcmp(argv[i], "--threads"))
            nt = parse_list(argv[i + 1], threads, 8);
        else if (!strcmp(argv[i], "--clear"))
            nc = parse_list(argv[i + 1], clears, 2);
        else if (!strcmp(argv[i], "--width"))
            width = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--simd"))
            simd = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--ahead"))
            other = !strcmp(argv[i + 1], "other");
    }
    clear_buf = calloc(1, CLEAR_BYTES);
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (jf) fprintf(jf, "{\"bench\":\"match_engine\",\"width\":%d,\"simd\":%d,\"points\":[\n", width, simd);
    int first = 1;
    char kbuf[256];
    snprintf(kbuf, sizeof kbuf, "%s", kinds);
    printf("%-8s %5s %5s %7s %12s %10s\n", "kind", "D", "clear", "threads", "cycles/match", "depth");
    for (char *save, *kn = strtok_r(kbuf, ",", &save); kn; kn = strtok_r(NULL, ",", &save)) {
        clampi_match_config cfg;
        clampi_match_config_default(&cfg);
        if (clampi_match_kind_parse(kn, &cfg.kind) != 0) {
            fprintf(stderr, "unknown kind %s\n", kn);
            return 2;
        }
        cfg.width = (unsigned)width;
        cfg.simd = simd;
        for (int ci = 0; ci < nc; ci++)
            for (int ti = 0; ti < nt; ti++)
                for (int di = 0; di < nd; di++) {
                    int T = threads[ti], D = depths[di], clear = clears[ci];
                    int n = clear ? (iters / 4 > 10 ? iters / 4 : 10) : iters;
                    clampi_matcher *m;
                    if (clampi_matcher_create(&cfg, &m) != 0) return 1;
                    pthread_barrier_t bar;
                    pthread_barrier_init(&bar, NULL, (unsigned)T);
                    job jobs[8];
                    pthread_t th[8];
                    for (int t = 0; t < T; t++) {
                        jobs[t] = (job){m, t, n, clear, D, other, 0, &bar, calloc((size_t)n, sizeof(double))};
                        if (t) pthread_create(&th[t], NULL, run_job, &jobs[t]);
                    }
                    run_job(&jobs[0]);
                    for (int t = 1; t < T; t++) pthread_join(th[t], NULL);
                    double *all = calloc((size_t)(n * T), sizeof(double));
                    for (int t = 0; t < T; t++) memcpy(all + t * n, jobs[t].cycles, (size_t)n * sizeof(double));
                    qsort(all, (size_t)(n * T), sizeof(double), cmp_d);
                    double med = all[n * T / 2];
                    double depth = 0;
                    for (int t = 0; t < T; t++) depth += jobs[t].depth_sum / (n * T);
                    printf("%-8s %5d %5d %7d %12.0f %10.1f\n", kn, D, clear, T, med, depth);
                    fflush(stdout);
                    if (jf)
                        fprintf(jf,
                                "%s{\"kind\":\"%s\",\"D\":%d,\"clear\":%d,\"threads\":%d,\"ahead\":\"%s\",\"cycles\":%."
                                "1f,\"depth\":%.1f,\"iters\":%d}",
                                first ? "" : ",\n", kn, D, clear, T, other ? "other" : "same", med, depth, n * T),
                            first = 0;
                    free(all);
                    for (int t = 0; t < T; t++) free(jobs[t].cycles);
                    pthread_barrier_destroy(&bar);
                    clampi_matcher_destroy(m);
                }
    }
    if (jf) {
        fprintf(jf, "\n]}\n");
        fclose(jf);
    }
    return 0;
}
