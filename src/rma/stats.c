#include "rma/stats.h"

#include <stdio.h>
#include <string.h>

#include "common/stats.h"
#include "rma/errors.h"

void clampi_stats_collect(const clampi_win *w, CMPI_Win_stats *s) {
    const clampi_cache_counters *c = &w->cache.c;
    memset(s, 0, sizeof *s);
    s->gets = w->n.gets;
    s->hits = c->hits;
    s->subrange_hits = c->subrange_hits;
    s->inflight_hits = w->n.inflight_hits;
    s->misses = w->n.misses;
    s->bypassed = w->n.bypassed;
    s->direct = w->n.direct;
    s->bytes_saved = w->n.bytes_saved;
    s->bytes_fetched = w->n.bytes_fetched;
    s->evictions = c->evictions;
    s->conflict_evictions = c->conflict_evictions;
    s->capacity_evictions = c->capacity_evictions;
    s->failed_inserts = c->failed_inserts;
    s->invalidations = c->invalidations;
    s->adaptations = c->resizes;
    s->flushes = w->n.flushes;
    s->flushes_elided = w->n.flushes_elided;
    s->puts = w->n.puts;
    s->index_entries = w->cache.nentries;
    s->buffer_bytes = w->cache.buffer.capacity;
    s->cached_entries = w->cache.count;
    s->cached_bytes = w->cache.bytes;
    s->adapt_grows = w->adapt.grows;
    s->adapt_shrinks = w->adapt.shrinks;
}

void clampi_stats_print(const clampi_win *w) {
    char name[MPI_MAX_OBJECT_NAME + 1] = "";
    int len = 0;
    PMPI_Win_get_name(w->b.win, name, &len);
    if (!name[0]) snprintf(name, sizeof name, "win%u", w->serial);
    CMPI_Win_stats s;
    clampi_stats_collect(w, &s);
    clampi_stats_line line;
    clampi_stats_begin(&line, NULL, w->b.rank);
    clampi_stats_str(&line, "win", name);
    clampi_stats_str(&line, "mode", clampi_mode_name(w->opts.mode));
    /* The line's fields, in order: adding a counter is one entry here. */
    // clang-format off: one field per line (clang-format's layout of this macro does not settle)
#define CLAMPI_STATS_LINE_FIELDS(X) \
    X(gets)                         \
    X(hits)                         \
    X(subrange_hits)                \
    X(inflight_hits)                \
    X(misses)                       \
    X(bypassed)                     \
    X(direct)                       \
    X(bytes_saved)                  \
    X(bytes_fetched)                \
    X(evictions)                    \
    X(conflict_evictions)           \
    X(capacity_evictions)           \
    X(failed_inserts)               \
    X(invalidations)                \
    X(adaptations)                  \
    X(adapt_grows)                  \
    X(adapt_shrinks)                \
    X(flushes)                      \
    X(flushes_elided)               \
    X(puts)                         \
    X(index_entries)                \
    X(buffer_bytes)
    // clang-format on
#define CLAMPI_STATS_PRINT_FIELD(f) clampi_stats_u64(&line, #f, (uint64_t)s.f);
    CLAMPI_STATS_LINE_FIELDS(CLAMPI_STATS_PRINT_FIELD)
#undef CLAMPI_STATS_PRINT_FIELD
#undef CLAMPI_STATS_LINE_FIELDS
    /* Last, so that the fields before it keep their places: which backend served the
     * window ("mpi", or "ucx" for a clampi_backend=ucx window). */
    clampi_stats_str(&line, "backend", w->b.ops ? w->b.ops->name : "mpi");
    clampi_stats_emit(&line);
}

int CMPI_Win_get_stats(CMPI_Win win, CMPI_Win_stats *stats) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!stats) return clampi_raise_win(w, CLAMPI_E_ARG);
    clampi_stats_collect(w, stats);
    return MPI_SUCCESS;
}

int CMPIX_Win_get_thread_stats(CMPI_Win win, CMPIX_Win_thread_stats *stats) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!stats) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (w->b.ops->thread_stats)
        w->b.ops->thread_stats(&w->b, stats);
    else
        memset(stats, 0, sizeof *stats);
    return MPI_SUCCESS;
}
