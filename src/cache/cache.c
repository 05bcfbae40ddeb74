/* Get cache engine.
 *
 * Eviction. The CLaMPI paper (Di Girolamo, Vella, Hoefler, IPDPS'17) evicts in two
 * situations and scores victims by recency (temporal locality) and by the contiguous
 * space their eviction gives back (so that a large entry is not refused because the
 * buffer is fragmented). We follow that:
 *  - index conflict (the key's 8 candidate slots are full and no cuckoo displacement
 *    path exists): evict the least recently used of the 8 entries in those slots;
 *  - buffer full: among the CLAMPI_CACHE_VICTIM_WINDOW least recently used entries,
 *    evict the oldest whose block, merged with its free neighbours, would hold the new
 *    entry; if none would, the one that frees the largest hole; repeat until it fits.
 * Where we differ: the paper scores every entry on each eviction; we look at a fixed
 * window at the cold end of an LRU list, which bounds the cost of an eviction and keeps
 * the hit path to a constant-time list update.
 *
 * Ghosts. An eviction leaves the key's fingerprint (and the eviction's kind) in a
 * direct-mapped table; caching that key again (after a miss) counts as a conflict or
 * capacity miss.
 * The adaptive sizing (adapt.c) grows on those, not on evictions: a stream of gets that
 * never come back evicts all the time, and a larger cache would only cost it memory and
 * page faults. The table remembers about GHOSTS_MIN keys at least, 4 per index slot
 * above that (at most GHOSTS_MAX), so a working set many times the cache is still seen
 * coming back; calloc'd, so only the slots evictions touch cost pages. */
#include "cache/cache.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define CLAMPI_CACHE_VICTIM_WINDOW 8
#define GHOSTS_MIN ((size_t)1 << 16)
#define GHOSTS_MAX ((size_t)1 << 22)

static size_t ghost_slot(const clampi_cache *c, uint64_t h) { return (size_t)h & c->ghost_mask; }
/* Never 0 (an empty slot); bit 0 is the eviction's kind (1: conflict). */
static uint32_t ghost_print(uint64_t h) { return (uint32_t)(h >> 32) | 2u; }

static void ghost_leave(clampi_cache *c, uint32_t target, uint64_t offset, int conflict) {
    if (!c->ghosts) return;
    uint64_t h = clampi_index_hash(target, offset);
    c->ghosts[ghost_slot(c, h)] = (ghost_print(h) & ~1u) | (conflict ? 1u : 0u);
}

/* A key being cached after a miss: was it evicted lately? Counts the kind and forgets the
 * ghost. (Here rather than in the lookup: the lookup's hit path stays as it was.) */
static void ghost_meet(clampi_cache *c, uint32_t target, uint64_t offset) {
    if (!c->ghosts) return;
    uint64_t h = clampi_index_hash(target, offset);
    uint32_t *g = &c->ghosts[ghost_slot(c, h)];
    if (*g == 0 || (*g & ~1u) != (ghost_print(h) & ~1u)) return;
    if (*g & 1u)
        c->c.conflict_misses++;
    else
        c->c.capacity_misses++;
    *g = 0;
}

static void lru_unlink(clampi_cache *c, uint32_t id) {
    clampi_cache_entry *e = &c->entries[id];
    if (e->lru_prev != NONE)
        c->entries[e->lru_prev].lru_next = e->lru_next;
    else
        c->lru_head = e->lru_next;
    if (e->lru_next != NONE)
        c->entries[e->lru_next].lru_prev = e->lru_prev;
    else
        c->lru_tail = e->lru_prev;
}

static void lru_push_front(clampi_cache *c, uint32_t id) {
    clampi_cache_entry *e = &c->entries[id];
    e->lru_prev = NONE;
    e->lru_next = c->lru_head;
    if (c->lru_head != NONE) c->entries[c->lru_head].lru_prev = id;
    c->lru_head = id;
    if (c->lru_tail == NONE) c->lru_tail = id;
}

static void reset_entries(clampi_cache *c) {
    c->lru_head = c->lru_tail = NONE;
    c->free_head = NONE;
    c->fresh = 0;
    c->count = 0;
    c->bytes = 0;
}

static void release_all(clampi_cache *c) {
    clampi_index_destroy(&c->index);
    clampi_buffer_destroy(&c->buffer);
    clampi_ranges_destroy(&c->ranges);
    free(c->entries);
    c->entries = NULL;
    free(c->ghosts);
    c->ghosts = NULL;
    c->ghost_mask = 0;
    c->nentries = 0;
    reset_entries(c);
}

/* Builds index, buffer, ranges and entries into `c` (whose counters are kept). */
static int build(clampi_cache *c, size_t index_entries, size_t buffer_bytes) {
    if (index_entries == 0 || buffer_bytes == 0 || index_entries >= NONE) return CLAMPI_CACHE_NOMEM;
    if (clampi_index_init(&c->index, index_entries) != 0) return CLAMPI_CACHE_NOMEM;
    c->nentries = c->index.nslots;
    c->entries = calloc(c->nentries, sizeof *c->entries);
    size_t nghosts = GHOSTS_MIN;
    while (nghosts < c->nentries * 4 && nghosts < GHOSTS_MAX) nghosts <<= 1;
    c->ghosts = calloc(nghosts, sizeof *c->ghosts);
    c->ghost_mask = nghosts - 1;
    if (!c->entries || !c->ghosts || clampi_buffer_init(&c->buffer, buffer_bytes) != 0 ||
        clampi_ranges_init(&c->ranges, c->nentries) != 0) {
        release_all(c);
        return CLAMPI_CACHE_NOMEM;
    }
    reset_entries(c);
    return CLAMPI_CACHE_OK;
}

int clampi_cache_init(clampi_cache *c, size_t index_entries, size_t buffer_bytes) {
    memset(c, 0, sizeof *c);
    reset_entries(c);
    return build(c, index_entries, buffer_bytes);
}

void clampi_cache_destroy(clampi_cache *c) { release_all(c); }

int clampi_cache_usable(const clampi_cache *c) { return c->nentries > 0; }

size_t clampi_cache_max_entry(const clampi_cache *c) { return clampi_buffer_max_request(&c->buffer); }

void clampi_cache_prepare(clampi_cache *c, uint64_t length) {
    if (c->nentries) clampi_buffer_prepare(&c->buffer, length);
}

const void *clampi_cache_lookup_slow(clampi_cache *c, uint32_t target, uint64_t offset, uint64_t length, uint32_t id) {
    if (id != NONE && c->entries[id].length >= length) {
        c->c.hits++;
    } else {
        id = clampi_ranges_find_containing(&c->ranges, target, offset, offset + length);
        if (id == NONE) {
            c->c.lookups_missed++;
            return NULL;
        }
        c->c.hits++;
        c->c.subrange_hits++;
    }
    clampi_cache_entry *e = &c->entries[id];
    e->last_use = ++c->clock;
    if (c->lru_head != id) {
        lru_unlink(c, id);
        lru_push_front(c, id);
    }
    return e->data + (offset - e->offset);
}

static void drop(clampi_cache *c, uint32_t id) {
    clampi_cache_entry *e = &c->entries[id];
    clampi_index_remove(&c->index, e->target, e->offset);
    clampi_ranges_remove(&c->ranges, id);
    clampi_buffer_free(&c->buffer, e->data);
    lru_unlink(c, id);
    c->count--;
    c->bytes -= e->length;
    e->data = NULL;
    e->lru_next = c->free_head;
    c->free_head = id;
}

static void evict(clampi_cache *c, uint32_t id, int conflict) {
    ghost_leave(c, c->entries[id].target, c->entries[id].offset, conflict);
    drop(c, id);
    c->c.evictions++;
    if (conflict)
        c->c.conflict_evictions++;
    else
        c->c.capacity_evictions++;
}

/* Buffer full: pick a victim from the cold end of the LRU list (see top of file). */
static uint32_t capacity_victim(const clampi_cache *c, size_t need) {
    uint32_t best = NONE;
    size_t best_hole = 0;
    uint32_t id = c->lru_tail;
    for (int i = 0; i < CLAMPI_CACHE_VICTIM_WINDOW && id != NONE; i++, id = c->entries[id].lru_prev) {
        size_t hole = clampi_buffer_hole_if_freed(&c->buffer, c->entries[id].data);
        if (hole >= need) return id; /* oldest that makes room */
        if (best == NONE || hole > best_hole) {
            best = id;
            best_hole = hole;
        }
    }
    return best;
}

/* Index conflict: the least recently used entry among the key's candidate slots. */
static uint32_t conflict_victim(const clampi_cache *c, const size_t cand[2 * CLAMPI_INDEX_BUCKET]) {
    uint32_t best = NONE;
    for (int i = 0; i < 2 * CLAMPI_INDEX_BUCKET; i++) {
        uint32_t id = c->index.slots[cand[i]].id;
        if (id != NONE && (best == NONE || c->entries[id].last_use < c->entries[best].last_use)) best = id;
    }
    return best;
}

int clampi_cache_insert(clampi_cache *c, uint32_t target, uint64_t offset, uint64_t length, const void *src) {
    if (!c->nentries) {
        c->c.failed_inserts++;
        return CLAMPI_CACHE_NOMEM;
    }
    if (length == 0) return CLAMPI_CACHE_OK;
    if (length > clampi_cache_max_entry(c)) {
        clampi_cache_note_too_large(c, length);
        return CLAMPI_CACHE_TOO_LARGE;
    }
    /* Already covered (another get completed the same bytes first): nothing to add. */
    uint32_t same = clampi_index_lookup(&c->index, target, offset);
    if (same != NONE && c->entries[same].length >= length) return CLAMPI_CACHE_OK;
    if (clampi_ranges_find_containing(&c->ranges, target, offset, offset + length) != NONE) return CLAMPI_CACHE_OK;
    ghost_meet(c, target, offset);
    if (same != NONE) drop(c, same); /* a shorter range at the same start: replace it */

    /* Storage first (its evictions also free index slots and entries). */
    void *data;
    while ((data = clampi_buffer_alloc(&c->buffer, length)) == NULL) {
        uint32_t v = capacity_victim(c, length);
        if (v == NONE) {
            c->c.failed_inserts++;
            return CLAMPI_CACHE_NOSPACE;
        }
        evict(c, v, 0);
    }
    if (c->free_head == NONE && c->fresh < c->nentries) { /* take a never-used id */
        c->entries[c->fresh].lru_next = NONE;
        c->free_head = c->fresh++;
    }
    if (c->free_head == NONE) evict(c, c->lru_tail, 1); /* every index slot is in use */
    uint32_t id = c->free_head;
    size_t cand[2 * CLAMPI_INDEX_BUCKET];
    if (clampi_index_insert(&c->index, target, offset, id, cand) != 0) {
        uint32_t v = conflict_victim(c, cand);
        evict(c, v, 1); /* frees one of this key's own slots: the retry cannot fail */
        id = c->free_head;
        clampi_index_insert(&c->index, target, offset, id, cand);
    }
    c->free_head = c->entries[id].lru_next;
    clampi_cache_entry *e = &c->entries[id];
    e->target = target;
    e->offset = offset;
    e->length = length;
    e->data = data;
    e->last_use = ++c->clock;
    memcpy(data, src, length);
    clampi_ranges_insert(&c->ranges, id, target, offset, offset + length);
    lru_push_front(c, id);
    c->count++;
    c->bytes += length;
    c->c.inserts++;
    c->c.bytes_inserted += length;
    return CLAMPI_CACHE_OK;
}

void clampi_cache_note_too_large(clampi_cache *c, uint64_t length) {
    c->c.too_large++;
    c->c.failed_inserts++;
    if (length > c->c.max_refused) c->c.max_refused = length;
}

void clampi_cache_invalidate(clampi_cache *c) {
    c->c.invalidations++;
    if (!c->nentries || c->count == 0) return;
    clampi_index_clear(&c->index);
    clampi_buffer_reset(&c->buffer);
    clampi_ranges_clear(&c->ranges);
    reset_entries(c);
}

size_t clampi_cache_invalidate_range(clampi_cache *c, uint32_t target, uint64_t offset, uint64_t length) {
    if (!c->nentries || c->count == 0 || length == 0) return 0;
    uint32_t ids[64];
    size_t total = 0, n;
    do { /* batches of 64; each round removes what it found */
        n = clampi_ranges_find_overlapping(&c->ranges, target, offset, offset + length, ids, 64);
        size_t take = n < 64 ? n : 64;
        for (size_t i = 0; i < take; i++) drop(c, ids[i]);
        total += take;
    } while (n > 64);
    c->c.write_invalidated += total;
    return total;
}

static int rebuild(clampi_cache *c, size_t index_entries, size_t buffer_bytes, int keep) {
    clampi_cache next;
    memset(&next, 0, sizeof next);
    if (build(&next, index_entries, buffer_bytes) != CLAMPI_CACHE_OK) return CLAMPI_CACHE_NOMEM;
    next.clock = c->clock;
    /* Moving entries is not caching new data: the counters stay those of c. */
    for (uint32_t id = keep ? c->lru_tail : NONE; id != NONE; id = c->entries[id].lru_prev) {
        const clampi_cache_entry *e = &c->entries[id];
        if (e->length <= clampi_cache_max_entry(&next))
            clampi_cache_insert(&next, e->target, e->offset, e->length, e->data);
    }
    next.c = c->c;
    release_all(c);
    *c = next;
    c->c.resizes++;
    return CLAMPI_CACHE_OK;
}

int clampi_cache_resize(clampi_cache *c, size_t index_entries, size_t buffer_bytes) {
    return rebuild(c, index_entries, buffer_bytes, 0);
}

int clampi_cache_resize_keep(clampi_cache *c, size_t index_entries, size_t buffer_bytes) {
    return rebuild(c, index_entries, buffer_bytes, 1);
}
