/* The get cache engine: (target, offset, length) -> bytes. MPI-free.
 *
 * Index (cuckoo hash on (target, offset)) for the exact-start hit path, a range tree for
 * sub-range hits and for invalidating the ranges a write overlaps, a byte buffer with a
 * coalescing allocator for the data, and an LRU list for eviction. Index and buffer can
 * be resized while running (clampi_cache_resize), dropping what is cached. */
#ifndef CLAMPI_CACHE_CACHE_H
#define CLAMPI_CACHE_CACHE_H
#include <stddef.h>
#include <stdint.h>

#include "cache/buffer.h"
#include "cache/index.h"
#include "cache/ranges.h"

typedef struct clampi_cache_entry {
    uint64_t offset, length;
    uint64_t last_use;   /* cache clock at the last hit or insert */
    unsigned char *data; /* in the buffer */
    uint32_t target;
    uint32_t lru_prev, lru_next; /* LRU list, most recent at head; also the free list */
} clampi_cache_entry;

typedef struct clampi_cache_counters {
    uint64_t hits, subrange_hits, lookups_missed;
    uint64_t inserts, failed_inserts, too_large;
    uint64_t evictions, conflict_evictions, capacity_evictions, write_invalidated;
    /* Misses on a key an eviction of that kind dropped earlier: the misses a larger
     * index (conflict) or buffer (capacity) would have served. A first touch is neither. */
    uint64_t conflict_misses, capacity_misses;
    uint64_t invalidations, resizes;
    uint64_t bytes_inserted; /* data bytes of successful inserts (mean get size) */
    uint64_t max_refused;    /* longest length refused as too large */
} clampi_cache_counters;

typedef struct clampi_cache {
    clampi_index index;
    clampi_buffer buffer;
    clampi_ranges ranges;
    clampi_cache_entry *entries; /* one per index slot */
    size_t nentries;             /* index slots = entry capacity */
    uint32_t free_head;          /* freed entry ids, linked through lru_next */
    uint32_t fresh;              /* ids >= fresh were never used (not touched: a large,
                                    mostly idle cache costs no page faults) */
    uint32_t lru_head, lru_tail;
    size_t count; /* entries cached */
    size_t bytes; /* data bytes cached */
    uint64_t clock;
    /* Ghosts: fingerprints of the keys evicted lately (cache.c), one word per slot. */
    uint32_t *ghosts;
    size_t ghost_mask;
    clampi_cache_counters c;
} clampi_cache;

enum { CLAMPI_CACHE_OK = 0, CLAMPI_CACHE_NOMEM = -1, CLAMPI_CACHE_TOO_LARGE = -2, CLAMPI_CACHE_NOSPACE = -3 };

/* Sets up index and buffer. Returns CLAMPI_CACHE_OK, or NOMEM (the cache is then empty
 * and every lookup misses, every insert fails). */
int clampi_cache_init(clampi_cache *c, size_t index_entries, size_t buffer_bytes);
void clampi_cache_destroy(clampi_cache *c);
int clampi_cache_usable(const clampi_cache *c);

/* Sub-range lookup and LRU update: the part of clampi_cache_lookup not inlined. */
const void *clampi_cache_lookup_slow(clampi_cache *c, uint32_t target, uint64_t offset, uint64_t length, uint32_t id);

/* Bytes cached for [offset, offset+length) at target, or NULL. Counts the hit and
 * refreshes the entry's recency. `length` > 0. Inline: the exact-start hit on the most
 * recently used entry is the hot path of a cached get. */
static inline const void *clampi_cache_lookup(clampi_cache *c, uint32_t target, uint64_t offset, uint64_t length) {
    if (!c->nentries) return NULL;
    uint32_t id = clampi_index_lookup(&c->index, target, offset);
    if (id == c->lru_head && id != CLAMPI_INDEX_NONE && c->entries[id].length >= length) {
        c->c.hits++;
        c->entries[id].last_use = ++c->clock;
        return c->entries[id].data;
    }
    return clampi_cache_lookup_slow(c, target, offset, length, id);
}
/* Caches a copy of src as [offset, offset+length) at target, evicting as needed.
 * TOO_LARGE (longer than the buffer can ever hold) changes nothing. */
int clampi_cache_insert(clampi_cache *c, uint32_t target, uint64_t offset, uint64_t length, const void *src);
/* Drops every entry. */
void clampi_cache_invalidate(clampi_cache *c);
/* Drops every entry overlapping [offset, offset+length) at target; returns how many. */
size_t clampi_cache_invalidate_range(clampi_cache *c, uint32_t target, uint64_t offset, uint64_t length);
/* Drops everything and rebuilds with new sizes; on NOMEM the old sizes stay in force. */
int clampi_cache_resize(clampi_cache *c, size_t index_entries, size_t buffer_bytes);
/* Like clampi_cache_resize, but moves the cached entries into the new index and buffer
 * (least recent first, so recency order survives); what no longer fits is dropped. */
int clampi_cache_resize_keep(clampi_cache *c, size_t index_entries, size_t buffer_bytes);
/* Records that a get of `length` bytes could not be cached because it is larger than
 * the buffer can hold (for callers that check clampi_cache_max_entry themselves). */
void clampi_cache_note_too_large(clampi_cache *c, uint64_t length);
/* The largest length clampi_cache_insert accepts. */
size_t clampi_cache_max_entry(const clampi_cache *c);
/* Called when a get of length bytes that will be inserted is on the wire: maps the pages
 * of the buffer its insert would take, if not mapped yet (clampi_buffer_prepare), so the
 * insert at completion does not fault on them. */
void clampi_cache_prepare(clampi_cache *c, uint64_t length);
#endif
