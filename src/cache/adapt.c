/* Adaptive sizing policy (see adapt.h). */
#include "cache/adapt.h"

#include <string.h>

static size_t pow2_at_least(size_t n) {
    size_t p = 1;
    while (p < n && p < ((size_t)1 << 62)) p <<= 1;
    return p;
}

static size_t clamp(size_t v, size_t lo, size_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* A period long enough to judge, short enough that a too-small cache grows fast. */
static uint64_t period_for(const clampi_adapt *a, const clampi_cache *c) {
    uint64_t p = c->nentries / 4;
    if (p < 32) p = 32;
    return p < a->lim.period ? p : a->lim.period;
}

void clampi_adapt_init(clampi_adapt *a, const clampi_adapt_limits *lim, const clampi_cache *c) {
    static const clampi_adapt_limits defaults = CLAMPI_ADAPT_DEFAULT_LIMITS;
    memset(a, 0, sizeof *a);
    a->lim = lim ? *lim : defaults;
    /* A smaller starting size lowers the floor: never shrink below where we started. */
    if (c->nentries && c->nentries < a->lim.min_index) a->lim.min_index = c->nentries;
    if (c->buffer.capacity && c->buffer.capacity < a->lim.min_buffer) a->lim.min_buffer = c->buffer.capacity;
    if (a->lim.period == 0) a->lim.period = 1;
    a->last = a->epoch = c->c;
    a->period = period_for(a, c);
}

/* Growth factor for an event count out of n inserts: 1 (under 2 %: noise), 2, 4, or 8
 * (half or more: thrashing, converge fast). */
static size_t growth(uint64_t events, uint64_t n) {
    if (events * 50 <= n) return 1;
    if (events * 2 >= n) return 8;
    return events * 4 >= n ? 4 : 2;
}

/* The shrunk sizes for what c holds now: 4x the use, within [min, current]. */
static void shrunk(const clampi_adapt *a, const clampi_cache *c, size_t *index, size_t *buffer) {
    const size_t cur_index = c->nentries, cur_buffer = c->buffer.capacity;
    *index =
        clamp(pow2_at_least(c->count * 4 > cur_index / 2 ? cur_index / 2 : c->count * 4), a->lim.min_index, cur_index);
    *buffer = clamp(pow2_at_least(c->bytes * 4 > cur_buffer / 2 ? cur_buffer / 2 : c->bytes * 4), a->lim.min_buffer,
                    cur_buffer);
}

static int idle(const clampi_cache *c) { return c->count * 16 < c->nentries && c->bytes * 16 < c->buffer.capacity; }

static uint64_t trouble(const clampi_cache_counters *now, const clampi_cache_counters *was) {
    return now->evictions - was->evictions + now->failed_inserts - was->failed_inserts;
}

int clampi_adapt_decide(clampi_adapt *a, const clampi_cache *c, size_t *index_entries, size_t *buffer_bytes) {
    const clampi_cache_counters *now = &c->c, *was = &a->last;
    const uint64_t lookups = now->hits + now->lookups_missed - was->hits - was->lookups_missed;
    const uint64_t inserts = now->inserts - was->inserts;
    /* Misses a larger index or buffer would have served (cache.c, ghosts), not evictions. */
    const uint64_t conflicts = now->conflict_misses - was->conflict_misses;
    const uint64_t capacity = now->capacity_misses - was->capacity_misses;
    const uint64_t too_large = now->too_large - was->too_large;
    const uint64_t nospace = now->failed_inserts - was->failed_inserts - too_large;
    const uint64_t attempts = inserts + nospace + too_large;
    const size_t cur_index = c->nentries, cur_buffer = c->buffer.capacity;
    size_t index = cur_index, buffer = cur_buffer;
    a->last = *now;

    /* Mean get size: this period's inserts, else all of them, else what is cached. */
    uint64_t mean = inserts        ? (now->bytes_inserted - was->bytes_inserted) / inserts
                    : now->inserts ? now->bytes_inserted / now->inserts
                    : c->count     ? c->bytes / c->count
                                   : 0;
    if (mean < 16) mean = 16;

    if (attempts) {
        index *= growth(conflicts, attempts);
        buffer *= growth(capacity + nospace, attempts);
        if (too_large) {
            size_t need = pow2_at_least((size_t)now->max_refused * 8);
            if (need > buffer) buffer = need;
        }
        /* The index must be able to describe a full buffer at the mean get size. */
        if (buffer > cur_buffer) {
            size_t need = pow2_at_least(buffer / mean * 2);
            if (need > index) index = need;
        }
    }
    index = clamp(index, a->lim.min_index, a->lim.max_index);
    buffer = clamp(buffer, a->lim.min_buffer, a->lim.max_buffer);
    if (index > cur_index || buffer > cur_buffer) {
        /* Growing one dimension never shrinks the other. */
        if (index < cur_index) index = cur_index;
        if (buffer < cur_buffer) buffer = cur_buffer;
        a->quiet = 0;
        *index_entries = index;
        *buffer_bytes = buffer;
        return CLAMPI_ADAPT_GROW;
    }

    /* Shrinking: only in steady state (no evictions or failures, inserts a small share
     * of the lookups) and with both dimensions mostly idle, for several periods. */
    const int steady = trouble(now, was) == 0 && inserts * 8 <= lookups;
    a->quiet = steady && idle(c) ? a->quiet + 1 : 0;
    *index_entries = cur_index;
    *buffer_bytes = cur_buffer;
    if (a->quiet < a->lim.quiet_periods) return CLAMPI_ADAPT_KEEP;
    a->quiet = 0;
    shrunk(a, c, &index, &buffer);
    if (index == cur_index && buffer == cur_buffer) return CLAMPI_ADAPT_KEEP;
    *index_entries = index;
    *buffer_bytes = buffer;
    return CLAMPI_ADAPT_SHRINK;
}

/* At an epoch end the cache is about to be emptied, so a resize costs no data: shrink at
 * once if the epoch (at least 32 lookups) evicted nothing and used under 1/16. */
static int epoch_decide(clampi_adapt *a, const clampi_cache *c, size_t *index, size_t *buffer) {
    const clampi_cache_counters *now = &c->c, *was = &a->epoch;
    const uint64_t lookups = now->hits + now->lookups_missed - was->hits - was->lookups_missed;
    const int quiet = lookups >= 32 && trouble(now, was) == 0 && idle(c);
    a->epoch = *now;
    if (!quiet) return CLAMPI_ADAPT_KEEP;
    shrunk(a, c, index, buffer);
    return *index < c->nentries || *buffer < c->buffer.capacity ? CLAMPI_ADAPT_SHRINK : CLAMPI_ADAPT_KEEP;
}

int clampi_adapt_step(clampi_adapt *a, clampi_cache *c, int epoch_end) {
    if (!clampi_cache_usable(c)) return CLAMPI_ADAPT_KEEP;
    size_t index, buffer;
    int d = epoch_end ? epoch_decide(a, c, &index, &buffer) : CLAMPI_ADAPT_KEEP;
    if (d == CLAMPI_ADAPT_KEEP) {
        if (!clampi_adapt_due(a, c)) return CLAMPI_ADAPT_KEEP;
        d = clampi_adapt_decide(a, c, &index, &buffer);
    }
    if (d == CLAMPI_ADAPT_KEEP) return d;
    int rc = epoch_end ? clampi_cache_resize(c, index, buffer) : clampi_cache_resize_keep(c, index, buffer);
    if (rc != CLAMPI_CACHE_OK) return CLAMPI_ADAPT_KEEP;
    if (d == CLAMPI_ADAPT_GROW)
        a->grows++;
    else
        a->shrinks++;
    a->last = c->c;
    a->period = period_for(a, c);
    return d;
}
