/* Cache index: a bucketized cuckoo hash table from (target, offset) to an entry id.
 *
 * Two candidate buckets of 4 slots per key (one 64-byte line each). Insertion looks for
 * a free slot in either bucket, then for a short displacement path (the key in some
 * slot moves to its other bucket, and so on) found before anything moves; if no path
 * exists within CLAMPI_INDEX_MAX_PATH steps the insertion reports a conflict and the
 * caller evicts one of the key's 8 candidate slots. MPI-free. */
#ifndef CLAMPI_CACHE_INDEX_H
#define CLAMPI_CACHE_INDEX_H
#include <stddef.h>
#include <stdint.h>

#define CLAMPI_INDEX_BUCKET 4
#define CLAMPI_INDEX_MAX_PATH 16
#define CLAMPI_INDEX_NONE UINT32_MAX

typedef struct clampi_index_slot {
    uint64_t offset;
    uint32_t target;
    uint32_t id; /* entry id; CLAMPI_INDEX_NONE = empty */
} clampi_index_slot;

typedef struct clampi_index {
    clampi_index_slot *slots; /* nbuckets * CLAMPI_INDEX_BUCKET */
    uint64_t bucket_mask;     /* nbuckets - 1 (nbuckets is a power of two) */
    size_t nslots;
    size_t count;
    uint64_t rng; /* for choosing displacement paths */
} clampi_index;

/* Sizes the table to at least `entries` slots (rounded up to a power of two, >= 8). */
int clampi_index_init(clampi_index *x, size_t entries);
void clampi_index_destroy(clampi_index *x);
void clampi_index_clear(clampi_index *x);

static inline uint64_t clampi_index_hash(uint32_t target, uint64_t offset) {
    uint64_t h = offset ^ ((uint64_t)target * 0x9E3779B97F4A7C15ull);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}
static inline uint64_t clampi_index_bucket1(const clampi_index *x, uint64_t h) { return h & x->bucket_mask; }
static inline uint64_t clampi_index_bucket2(const clampi_index *x, uint64_t h) {
    uint64_t b1 = h & x->bucket_mask, b2 = (h >> 32) & x->bucket_mask;
    return b2 == b1 ? b1 ^ 1 : b2; /* nbuckets >= 2, so b1 ^ 1 is another bucket */
}

/* Entry id stored for (target, offset), or CLAMPI_INDEX_NONE. The hit path. */
static inline uint32_t clampi_index_lookup(const clampi_index *x, uint32_t target, uint64_t offset) {
    uint64_t h = clampi_index_hash(target, offset);
    const clampi_index_slot *s = x->slots + clampi_index_bucket1(x, h) * CLAMPI_INDEX_BUCKET;
    for (int i = 0; i < CLAMPI_INDEX_BUCKET; i++)
        if (s[i].offset == offset && s[i].target == target && s[i].id != CLAMPI_INDEX_NONE) return s[i].id;
    s = x->slots + clampi_index_bucket2(x, h) * CLAMPI_INDEX_BUCKET;
    for (int i = 0; i < CLAMPI_INDEX_BUCKET; i++)
        if (s[i].offset == offset && s[i].target == target && s[i].id != CLAMPI_INDEX_NONE) return s[i].id;
    return CLAMPI_INDEX_NONE;
}

/* Inserts a key that is not present. Returns 0, or -1 on a conflict (no free slot and
 * no displacement path): nothing moved, and `candidates` receives the 8 slot positions
 * the key may live in, for the caller to pick a victim from. */
int clampi_index_insert(clampi_index *x, uint32_t target, uint64_t offset, uint32_t id,
                        size_t candidates[2 * CLAMPI_INDEX_BUCKET]);
/* Removes (target, offset); returns the id it held or CLAMPI_INDEX_NONE. */
uint32_t clampi_index_remove(clampi_index *x, uint32_t target, uint64_t offset);
#endif
