/* Adaptive sizing of a get cache's index and buffer. MPI-free.
 *
 * The policy watches the cache's own counters over observation periods (a period is
 * `period` cache lookups, fewer for a small cache so that a too-small start is left
 * quickly) and decides new sizes at the end of each period:
 *  - grow the index when conflict misses (misses on keys an index conflict evicted, see
 *    cache.c's ghosts) are a noticeable share (2 %) of the inserts (x2; x4 from a
 *    quarter; x8 from a half: thrashing must end fast);
 *  - grow the buffer on capacity misses (keys a full buffer evicted, coming back) and
 *    failed inserts (same factors), and at once to hold 8 of the longest refused get when
 *    gets were too large to cache. Evictions alone never grow the cache: a stream of
 *    gets that never come back evicts on every insert and gains nothing from memory;
 *  - keep the index large enough for the buffer at the observed mean get size
 *    (load factor at most 1/2 when the buffer is full);
 *  - shrink (down to 4x what is in use) only after `quiet_periods` consecutive periods
 *    in steady state (no evictions, no failures, few inserts) with less than 1/16 of
 *    the index and of the buffer in use: hysteresis, so sizes do not oscillate; or at an
 *    epoch end (the cache is being invalidated, the resize costs nothing) when the
 *    epoch evicted nothing and used less than 1/16 of both.
 * Every size stays within [min, max]. Applying a decision (clampi_adapt_step) moves
 * the cached entries into the resized cache; none are lost unless they no longer fit. */
#ifndef CLAMPI_CACHE_ADAPT_H
#define CLAMPI_CACHE_ADAPT_H
#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"

typedef struct clampi_adapt_limits {
    size_t min_index, max_index;   /* index entries */
    size_t min_buffer, max_buffer; /* buffer bytes */
    uint64_t period;               /* cache lookups per observation period (at most; a
                                        small cache is observed over nentries/4, >= 32) */
    unsigned quiet_periods;        /* steady, under-used periods before a shrink */
} clampi_adapt_limits;

#define CLAMPI_ADAPT_DEFAULT_LIMITS \
    { 1024, (size_t)1 << 22, (size_t)64 << 10, (size_t)1 << 30, 256, 16 }

typedef struct clampi_adapt {
    clampi_adapt_limits lim;
    clampi_cache_counters last;  /* the cache's counters when this period began */
    clampi_cache_counters epoch; /* ... and at the last epoch end (invalidation) */
    uint64_t period;             /* lookups in the current period */
    unsigned quiet;              /* consecutive periods that qualified for a shrink */
    uint64_t grows, shrinks;     /* decisions applied */
} clampi_adapt;

enum { CLAMPI_ADAPT_KEEP = 0, CLAMPI_ADAPT_GROW = 1, CLAMPI_ADAPT_SHRINK = 2 };

/* Starts observing c. lim NULL: CLAMPI_ADAPT_DEFAULT_LIMITS. */
void clampi_adapt_init(clampi_adapt *a, const clampi_adapt_limits *lim, const clampi_cache *c);

/* Whether an observation period is over (cheap: call it at flush points). */
static inline int clampi_adapt_due(const clampi_adapt *a, const clampi_cache *c) {
    return c->c.hits + c->c.lookups_missed - a->last.hits - a->last.lookups_missed >= a->period;
}

/* Ends the current period: decides KEEP, GROW or SHRINK and the new sizes (the current
 * ones for KEEP). Pure: changes only a's observation state. */
int clampi_adapt_decide(clampi_adapt *a, const clampi_cache *c, size_t *index_entries, size_t *buffer_bytes);

/* If a period is over, decides and applies the decision to c, keeping the cached
 * entries. With epoch_end (callers about to invalidate the cache): first judges the
 * epoch (shrink if it evicted nothing and used under 1/16), and a resize empties the
 * cache. Returns the decision applied (KEEP when the resize could not get memory). */
int clampi_adapt_step(clampi_adapt *a, clampi_cache *c, int epoch_end);
#endif
