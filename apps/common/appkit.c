#include "appkit.h"

#include <stdlib.h>
#include <string.h>

int app_parse_config(const char *s, app_config *c) {
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", s);
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    char *kind = strtok(buf, ":"), *index = strtok(NULL, ":"), *buffer = strtok(NULL, ":");
    if (!kind) return -1;
    if (!strcmp(kind, "uncached"))
        c->kind = APP_UNCACHED;
    else if (!strcmp(kind, "fixed"))
        c->kind = APP_FIXED;
    else if (!strcmp(kind, "adaptive"))
        c->kind = APP_ADAPTIVE;
    else
        return -1;
    if (index) snprintf(c->index, sizeof c->index, "%s", index);
    if (buffer) snprintf(c->buffer, sizeof c->buffer, "%s", buffer);
    return 0;
}

MPI_Info app_config_info(const app_config *c, const char *mode, const char *shm) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_MODE, mode);
    if (c->index[0]) MPI_Info_set(info, CLAMPI_INDEX_SIZE, c->index);
    if (c->buffer[0]) MPI_Info_set(info, CLAMPI_BUFFER_SIZE, c->buffer);
    MPI_Info_set(info, CLAMPI_ADAPTIVE, c->kind == APP_ADAPTIVE ? "true" : "false");
    if (shm) MPI_Info_set(info, CLAMPI_SHM_DIRECT, shm);
    return info;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double app_median(const double *v, int n) {
    if (n <= 0) return 0;
    double s[APP_MAX_TRIALS];
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void app_stats_accumulate(CMPI_Win w, CMPI_Win_stats *acc) {
    CMPI_Win_stats s, sum;
    CMPI_Win_get_stats(w, &s);
    MPI_Allreduce(&s, &sum, (int)(sizeof s / sizeof(uint64_t)), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t *a = (uint64_t *)acc;
    const uint64_t *b = (const uint64_t *)&sum;
    for (size_t i = 0; i < sizeof s / sizeof(uint64_t); i++) a[i] += b[i];
    /* sizes are a state, not a count: the last window's (summed over ranks) */
    acc->index_entries = sum.index_entries;
    acc->buffer_bytes = sum.buffer_bytes;
    acc->cached_entries = sum.cached_entries;
    acc->cached_bytes = sum.cached_bytes;
}

void app_events_begin(app_run *r) {
    r->nev = 0;
    r->last_adapt = ~0ull;
}

void app_events_sample(app_run *r, CMPI_Win w, double t, long step) {
    CMPI_Win_stats s;
    if (CMPI_Win_get_stats(w, &s) != MPI_SUCCESS || s.adaptations == r->last_adapt) return;
    r->last_adapt = s.adaptations;
    if (r->nev >= APP_MAX_EVENTS) return;
    r->ev[r->nev++] = (app_event){t, step, s.index_entries, s.buffer_bytes, s.adaptations, s.hits, s.misses};
}

static const char *kind_name(app_kind k) {
    return k == APP_UNCACHED ? "uncached" : k == APP_FIXED ? "fixed" : "adaptive";
}

void app_report(const char *app, const char *params, const char *unit, double scale, const char *scale_unit,
                app_run *runs, int nruns, const char *json_path, int nranks) {
    double base = 0;
    for (int i = 0; i < nruns; i++)
        if (runs[i].cfg.kind == APP_UNCACHED) {
            base = app_median(runs[i].t, runs[i].ntrials);
            break;
        }
    printf("# %s, %d ranks: median %s over trials (alternating configurations)\n", app, nranks, unit);
    printf("%-26s %12s %9s %8s %12s %12s %8s %6s %10s %10s\n", "config", scale_unit, "speedup", "hit%", "net gets",
           "evictions", "adapt", "grow", "index", "buffer");
    for (int i = 0; i < nruns; i++) {
        app_run *r = &runs[i];
        double m = app_median(r->t, r->ntrials);
        const CMPI_Win_stats *s = &r->stats;
        double hitp = s->gets ? 100.0 * (double)s->hits / (double)s->gets : 0;
        unsigned long long net = r->cfg.kind == APP_UNCACHED ? 0 : s->misses + s->bypassed;
        printf("%-26s %12.3f %8.2fx %7.1f%% %12llu %12llu %8llu %6llu %10llu %10llu\n", r->cfg.name, m * scale,
               base > 0 ? base / m : 1.0, hitp, net, (unsigned long long)s->evictions,
               (unsigned long long)s->adaptations, (unsigned long long)s->adapt_grows,
               (unsigned long long)(s->index_entries / (nranks ? nranks : 1)),
               (unsigned long long)(s->buffer_bytes / (nranks ? nranks : 1)));
    }
    fflush(stdout);
    if (!json_path) return;
    FILE *f = fopen(json_path, "w");
    if (!f) {
        perror(json_path);
        return;
    }
    fprintf(f, "{\"app\": \"%s\", \"ranks\": %d, \"unit\": \"%s\", \"params\": {%s},\n \"runs\": [\n", app, nranks,
            unit, params);
    for (int i = 0; i < nruns; i++) {
        app_run *r = &runs[i];
        const CMPI_Win_stats *s = &r->stats;
        double m = app_median(r->t, r->ntrials);
        fprintf(f,
                "  {\"config\": \"%s\", \"kind\": \"%s\", \"index\": \"%s\", \"buffer\": \"%s\", \"median\": %.9g, "
                "\"speedup\": %.6g, \"times\": [",
                r->cfg.name, kind_name(r->cfg.kind), r->cfg.index, r->cfg.buffer, m, base > 0 ? base / m : 1.0);
        for (int t = 0; t < r->ntrials; t++) fprintf(f, "%s%.9g", t ? ", " : "", r->t[t]);
        fprintf(f,
                "],\n   \"stats\": {\"gets\": %llu, \"hits\": %llu, \"misses\": %llu, \"inflight_hits\": %llu, "
                "\"bypassed\": %llu, \"direct\": %llu, \"bytes_fetched\": %llu, \"bytes_saved\": %llu, "
                "\"evictions\": %llu, \"conflict_evictions\": %llu, \"capacity_evictions\": %llu, "
                "\"failed_inserts\": %llu, \"invalidations\": %llu, \"adaptations\": %llu, \"adapt_grows\": %llu, "
                "\"adapt_shrinks\": %llu, \"index_entries\": %llu, \"buffer_bytes\": %llu},\n   \"events\": [",
                (unsigned long long)s->gets, (unsigned long long)s->hits, (unsigned long long)s->misses,
                (unsigned long long)s->inflight_hits, (unsigned long long)s->bypassed, (unsigned long long)s->direct,
                (unsigned long long)s->bytes_fetched, (unsigned long long)s->bytes_saved,
                (unsigned long long)s->evictions, (unsigned long long)s->conflict_evictions,
                (unsigned long long)s->capacity_evictions, (unsigned long long)s->failed_inserts,
                (unsigned long long)s->invalidations, (unsigned long long)s->adaptations,
                (unsigned long long)s->adapt_grows, (unsigned long long)s->adapt_shrinks,
                (unsigned long long)s->index_entries, (unsigned long long)s->buffer_bytes);
        for (int e = 0; e < r->nev; e++)
            fprintf(f,
                    "%s{\"t\": %.6g, \"step\": %ld, \"index\": %llu, \"buffer\": %llu, \"adaptations\": %llu, "
                    "\"hits\": %llu, \"misses\": %llu}",
                    e ? ", " : "", r->ev[e].t, r->ev[e].step, r->ev[e].index_entries, r->ev[e].buffer_bytes,
                    r->ev[e].adaptations, r->ev[e].hits, r->ev[e].misses);
        fprintf(f, "]}%s\n", i + 1 < nruns ? "," : "");
    }
    fprintf(f, "]}\n");
    fclose(f);
}
