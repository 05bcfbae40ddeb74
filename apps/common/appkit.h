/* Shared plumbing of the applications (public clampi API only): run configurations
 * (uncached / fixed / adaptive), window info, medians, stats summed over ranks, an
 * adaptation event log, and the table + JSON every application prints. */
#ifndef CLAMPI_APPKIT_H
#define CLAMPI_APPKIT_H
#include <clampi.h>
#include <stdio.h>

typedef enum { APP_UNCACHED, APP_FIXED, APP_ADAPTIVE } app_kind;

/* "uncached" | "fixed[:INDEX[:BUFFER]]" | "adaptive[:INDEX[:BUFFER]]" (sizes as the
 * clampi info keys take them, e.g. "adaptive:1024:1M"; omitted: clampi's defaults). */
typedef struct app_config {
    app_kind kind;
    char name[64]; /* the string as given: the column label */
    char index[32], buffer[32];
} app_config;

#define APP_MAX_CONFIGS 16
#define APP_MAX_TRIALS 32
#define APP_MAX_EVENTS 256

/* One observation of a clampi window (rank 0), taken when its sizes change. */
typedef struct app_event {
    double t;  /* seconds since the trial began */
    long step; /* application progress (vertices done, steps done) */
    unsigned long long index_entries, buffer_bytes, adaptations, hits, misses;
} app_event;

typedef struct app_run {
    app_config cfg;
    double t[APP_MAX_TRIALS]; /* per trial: the measured time (max over ranks) */
    int ntrials;
    CMPI_Win_stats stats; /* summed over ranks, over all trials */
    app_event ev[APP_MAX_EVENTS];
    int nev; /* events of the last trial (rank 0) */
    unsigned long long last_adapt;
} app_run;

int app_parse_config(const char *s, app_config *c);
/* Info for a clampi window of this configuration in the given clampi mode; shm
 * "true"/"false"/NULL (library default) sets clampi_shm_direct. Free with MPI_Info_free. */
MPI_Info app_config_info(const app_config *c, const char *mode, const char *shm);
double app_median(const double *v, int n);
/* Element-wise sum over MPI_COMM_WORLD of a window's stats, added into *acc. */
void app_stats_accumulate(CMPI_Win w, CMPI_Win_stats *acc);
/* Event log: call at the start of a trial, then from time to time (cheap). */
void app_events_begin(app_run *r);
void app_events_sample(app_run *r, CMPI_Win w, double t, long step);
/* The comparison table (stdout) and JSON (if path), rank 0 only. `params` is a JSON
 * object body (without braces) describing the problem; `unit` names what t measures. */
void app_report(const char *app, const char *params, const char *unit, double scale, const char *scale_unit,
                app_run *runs, int nruns, const char *json_path, int nranks);
#endif
