/* Matching depth profile of an unmodified program (CLAMPI_MATCH_PROFILE=1, or =FILE for
 * JSON as well). Records, without changing anything, how deep each completed receive sat
 * in the rank's queue of outstanding receives: the receives the program posted with
 * MPI_Irecv and has not yet seen complete (through MPI_Wait*, MPI_Test*), in posting
 * order. A receive completing at depth d had d older receives still outstanding ahead
 * of it -- the entries a list-based matcher walks past when its message arrives. A
 * blocking MPI_Recv sits behind every outstanding receive. Persistent receives are not
 * tracked; MPI_Request_free drops a receive from the queue without counting it.
 *
 * Hooks, not wrappers: match_entry.c's MPI_Irecv / MPI_Recv tell it of each post
 * (match_profile.h), and the completion calls (src/msg/mpi_entry.c) of each request that
 * finished or was freed (clampi_msg_hook_requests, set when the profile is found on). Off
 * (unset or 0), a post costs one load and a predictable branch (bench/match/profile_cost.sh
 * counts it) and the completion calls nothing. */
#include <mpi.h>

#include "clampi/export.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "common/stats.h"
#include "pmpi/match_mpit.h"
#include "pmpi/match_profile.h"
#include "msg/msg.h" /* clampi_msg_hook_requests */

#define NBUCKETS 33 /* 0, 1, 2-3, 4-7, ... */
#define HASH 1024

typedef struct orecv {
    MPI_Request req;
    struct orecv *prev, *next, *hnext;
} orecv;

_Atomic int clampi_match_profile_state = -1;
static const char *json_path;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static orecv *head, *tail, *hash[HASH];
static uint64_t outstanding, receives, depth_sum, depth_max, hist[NBUCKETS];
static clampi_mpit_sample mpit; /* the MPI library's own queue lengths at each post (MPI_T) */
static int mpit_started;

static void done(MPI_Request r, int count);

int clampi_match_profile_read(void) {
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&once);
    int on = atomic_load_explicit(&clampi_match_profile_state, memory_order_relaxed);
    if (on < 0) {
        const char *v = clampi_opt_process(CLAMPI_OPT_MATCH_PROFILE).text; /* options table */
        on = v && *v && strcmp(v, "0") != 0;
        if (on && strcmp(v, "1") != 0) json_path = v;
        if (on) clampi_msg_hook_requests(&(clampi_msg_request_hooks){.completed = done});
        atomic_store_explicit(&clampi_match_profile_state, on, memory_order_relaxed);
    }
    pthread_mutex_unlock(&once);
    return on;
}

static inline int profiling(void) { return clampi_match_profiling(); }
int clampi_match_profile_on(void) { return profiling(); }

static unsigned slot_of(MPI_Request r) {
    uint64_t v = 0;
    memcpy(&v, &r, sizeof r < sizeof v ? sizeof r : sizeof v);
    return (unsigned)((v * 0x9e3779b97f4a7c15ull) >> 54) & (HASH - 1);
}

static void record(uint64_t depth) {
    receives++;
    depth_sum += depth;
    if (depth > depth_max) depth_max = depth;
    unsigned b = depth ? 64 - (unsigned)__builtin_clzll(depth) : 0;
    hist[b < NBUCKETS ? b : NBUCKETS - 1]++;
}

/* The MPI library's queue lengths as the program posts a receive (MPI_T, where published). */
static void sample_mpi_queues(void) {
    if (!mpit_started) {
        mpit_started = 1;
        clampi_mpit_queues_start();
    }
    clampi_mpit_queues_sample(&mpit);
}

static void posted(MPI_Request r) {
    orecv *o = malloc(sizeof *o);
    if (!o) return;
    o->req = r;
    pthread_mutex_lock(&lock);
    sample_mpi_queues();
    o->next = NULL;
    o->prev = tail;
    if (tail)
        tail->next = o;
    else
        head = o;
    tail = o;
    unsigned s = slot_of(r);
    o->hnext = hash[s];
    hash[s] = o;
    outstanding++;
    pthread_mutex_unlock(&lock);
}

/* r completed (count = 1) or was freed (count = 0). */
static void done(MPI_Request r, int count) {
    if (r == MPI_REQUEST_NULL) return;
    pthread_mutex_lock(&lock);
    orecv **p = &hash[slot_of(r)];
    while (*p && (*p)->req != r) p = &(*p)->hnext;
    orecv *o = *p;
    if (o) {
        *p = o->hnext;
        uint64_t depth = 0;
        for (orecv *q = o->prev; q; q = q->prev) depth++;
        if (o->prev)
            o->prev->next = o->next;
        else
            head = o->next;
        if (o->next)
            o->next->prev = o->prev;
        else
            tail = o->prev;
        outstanding--;
        if (count) record(depth);
    }
    pthread_mutex_unlock(&lock);
    free(o);
}

/* ---- hooks ------------------------------------------------------------------------- */
void clampi_match_profile_posted(MPI_Request r) { posted(r); }

void clampi_match_profile_blocking(void) {
    pthread_mutex_lock(&lock);
    sample_mpi_queues();
    record(outstanding);
    pthread_mutex_unlock(&lock);
}

/* ---- report at MPI_Finalize ---------------------------------------------------------- */
typedef struct {
    uint64_t receives, depth_sum, depth_max, hist[NBUCKETS];
    clampi_mpit_sample mpit;
    int mpit_available;
} row;

static void bucket_range(int b, uint64_t *lo, uint64_t *hi) {
    *lo = b ? (uint64_t)1 << (b - 1) : 0;
    *hi = b ? ((uint64_t)1 << b) - 1 : 0;
}

void clampi_match_profile_finalize(void) {
    if (!profiling()) return;
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    row mine;
    pthread_mutex_lock(&lock);
    mine.receives = receives;
    mine.depth_sum = depth_sum;
    mine.depth_max = depth_max;
    memcpy(mine.hist, hist, sizeof hist);
    mine.mpit = mpit;
    if (!mpit_started) clampi_mpit_queues_start(); /* a rank that posted nothing: is there anything to read? */
    mine.mpit_available = clampi_mpit_queues_available();
    pthread_mutex_unlock(&lock);
    clampi_mpit_queues_stop();
    row *all = rank == 0 ? calloc((size_t)size, sizeof(row)) : NULL;
    PMPI_Gather(&mine, (int)sizeof(row), MPI_BYTE, all, (int)sizeof(row), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    if (!all) return;
    FILE *jf = json_path ? fopen(json_path, "w") : NULL;
    if (json_path && !jf) fprintf(stderr, "clampi: cannot write %s\n", json_path);
    if (jf) fprintf(jf, "{\"match_profile\":[\n");
    for (int r = 0; r < size; r++) {
        const row *w = &all[r];
        double mean = w->receives ? (double)w->depth_sum / (double)w->receives : 0.0;
        clampi_stats_line l;
        clampi_stats_begin(&l, "match profile", r);
        clampi_stats_u64(&l, "receives", w->receives);
        clampi_stats_f64(&l, "mean_depth", mean);
        clampi_stats_u64(&l, "max_depth", w->depth_max);
        char hist_text[1024];
        int n = 0, last = 0;
        hist_text[0] = 0;
        for (int b = 0; b < NBUCKETS; b++)
            if (w->hist[b]) last = b;
        for (int b = 0; b <= last && n < (int)sizeof hist_text - 64; b++) {
            uint64_t lo, hi;
            bucket_range(b, &lo, &hi);
            if (lo == hi)
                n += snprintf(hist_text + n, sizeof hist_text - (size_t)n, "%s%llu:%llu", b ? "," : "",
                              (unsigned long long)lo, (unsigned long long)w->hist[b]);
            else
                n += snprintf(hist_text + n, sizeof hist_text - (size_t)n, ",%llu-%llu:%llu", (unsigned long long)lo,
                              (unsigned long long)hi, (unsigned long long)w->hist[b]);
        }
        clampi_stats_raw(&l, "histogram", hist_text);
        clampi_stats_str(&l, "source", "completion_order");
        clampi_stats_emit(&l);
        /* the MPI library's own figures (MPI_T), or a plain statement that it has none */
        clampi_stats_begin(&l, "match profile", r);
        clampi_stats_str(&l, "source", "mpi_t");
        if (w->mpit_available) {
            const double samples = (double)w->mpit.samples;
            clampi_stats_u64(&l, "samples", w->mpit.samples);
            clampi_stats_f64(&l, "posted_recvq_mean", samples ? (double)w->mpit.posted_sum / samples : 0.0);
            clampi_stats_u64(&l, "posted_recvq_max", w->mpit.posted_max);
            clampi_stats_f64(&l, "unexpected_msgq_mean", samples ? (double)w->mpit.unexpected_sum / samples : 0.0);
            clampi_stats_u64(&l, "unexpected_msgq_max", w->mpit.unexpected_max);
        } else {
            clampi_stats_str(&l, "unavailable", "no_matching_queue_performance_variables");
        }
        clampi_stats_emit(&l);
        if (jf) {
            fprintf(jf, "  {\"rank\":%d,\"receives\":%llu,\"mean_depth\":%.4f,\"max_depth\":%llu,\"histogram\":[", r,
                    (unsigned long long)w->receives, mean, (unsigned long long)w->depth_max);
            for (int b = 0; b <= last; b++) {
                uint64_t lo, hi;
                bucket_range(b, &lo, &hi);
                fprintf(jf, "%s{\"min\":%llu,\"max\":%llu,\"count\":%llu}", b ? "," : "", (unsigned long long)lo,
                        (unsigned long long)hi, (unsigned long long)w->hist[b]);
            }
            fprintf(jf, "]}%s\n", r + 1 < size ? "," : "");
        }
    }
    if (jf) {
        fprintf(jf, "]}\n");
        fclose(jf);
    }
    free(all);
}
