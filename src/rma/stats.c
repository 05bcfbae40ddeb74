#include "rma/stats.h"

#include <stdio.h>
#include <string.h>

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
    MPI_Win_get_name(w->win, name, &len);
    for (char *p = name; *p; p++)
        if (*p == ' ' || *p == '=' || *p == '\t') *p = '_'; /* keep the line key=value parsable */
    if (!name[0]) snprintf(name, sizeof name, "win%u", w->serial);
    CMPI_Win_stats s;
    clampi_stats_collect(w, &s);
    printf("clampi: rank=%d win=%s mode=%s gets=%llu hits=%llu subrange_hits=%llu inflight_hits=%llu "
           "misses=%llu bypassed=%llu direct=%llu bytes_saved=%llu bytes_fetched=%llu evictions=%llu "
           "conflict_evictions=%llu capacity_evictions=%llu failed_inserts=%llu invalidations=%llu "
           "adaptations=%llu adapt_grows=%llu adapt_shrinks=%llu flushes=%llu flushes_elided=%llu puts=%llu index_entries=%llu buffer_bytes=%llu\n",
           w->rank, name, clampi_mode_name(w->opts.mode), (unsigned long long)s.gets, (unsigned long long)s.hits,
           (unsigned long long)s.subrange_hits, (unsigned long long)s.inflight_hits, (unsigned long long)s.misses,
           (unsigned long long)s.bypassed, (unsigned long long)s.direct, (unsigned long long)s.bytes_saved,
           (unsigned long long)s.bytes_fetched, (unsigned long long)s.evictions,
           (unsigned long long)s.conflict_evictions, (unsigned long long)s.capacity_evictions,
           (unsigned long long)s.failed_inserts, (unsigned long long)s.invalidations,
           (unsigned long long)s.adaptations, (unsigned long long)s.adapt_grows,
           (unsigned long long)s.adapt_shrinks, (unsigned long long)s.flushes, (unsigned long long)s.flushes_elided,
           (unsigned long long)s.puts, (unsigned long long)s.index_entries, (unsigned long long)s.buffer_bytes);
    fflush(stdout);
}

int CMPI_Win_get_stats(CMPI_Win win, CMPI_Win_stats *stats) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    if (!stats) return clampi_raise_win(w, CLAMPI_E_ARG);
    clampi_stats_collect(w, stats);
    return MPI_SUCCESS;
}
