#include "cache/index.h"

#include <stdlib.h>
#include <string.h>

int clampi_index_init(clampi_index *x, size_t entries) {
    memset(x, 0, sizeof *x);
    size_t nbuckets = 2;
    while (nbuckets * CLAMPI_INDEX_BUCKET < entries) {
        if (nbuckets > SIZE_MAX / 2 / CLAMPI_INDEX_BUCKET / sizeof(clampi_index_slot)) return -1;
        nbuckets *= 2;
    }
    void *p = NULL;
    if (posix_memalign(&p, 64, nbuckets * CLAMPI_INDEX_BUCKET * sizeof(clampi_index_slot)) != 0) return -1;
    x->slots = p;
    x->nslots = nbuckets * CLAMPI_INDEX_BUCKET;
    x->bucket_mask = nbuckets - 1;
    x->rng = 0x853c49e6748fea9bull;
    clampi_index_clear(x);
    return 0;
}

void clampi_index_destroy(clampi_index *x) {
    free(x->slots);
    memset(x, 0, sizeof *x);
}

void clampi_index_clear(clampi_index *x) {
    for (size_t i = 0; i < x->nslots; i++) {
        x->slots[i].id = CLAMPI_INDEX_NONE;
        x->slots[i].target = 0;
        x->slots[i].offset = 0;
    }
    x->count = 0;
}

static uint64_t next_rand(clampi_index *x) {
    x->rng ^= x->rng << 13;
    x->rng ^= x->rng >> 7;
    x->rng ^= x->rng << 17;
    return x->rng;
}

static long free_slot_in(const clampi_index *x, uint64_t bucket) {
    for (int i = 0; i < CLAMPI_INDEX_BUCKET; i++)
        if (x->slots[bucket * CLAMPI_INDEX_BUCKET + i].id == CLAMPI_INDEX_NONE)
            return (long)(bucket * CLAMPI_INDEX_BUCKET + i);
    return -1;
}

/* The bucket a slot's key would move to. */
static uint64_t other_bucket(const clampi_index *x, size_t slot) {
    const clampi_index_slot *s = &x->slots[slot];
    uint64_t h = clampi_index_hash(s->target, s->offset);
    uint64_t here = slot / CLAMPI_INDEX_BUCKET, b1 = clampi_index_bucket1(x, h);
    return here == b1 ? clampi_index_bucket2(x, h) : b1;
}

int clampi_index_insert(clampi_index *x, uint32_t target, uint64_t offset, uint32_t id,
                        size_t candidates[2 * CLAMPI_INDEX_BUCKET]) {
    uint64_t h = clampi_index_hash(target, offset);
    uint64_t b[2] = {clampi_index_bucket1(x, h), clampi_index_bucket2(x, h)};
    long dst = free_slot_in(x, b[0]);
    if (dst < 0) dst = free_slot_in(x, b[1]);
    if (dst < 0) {
        /* Search a displacement path first, move only once one is found: a failed
         * search leaves the table untouched. */
        size_t path[CLAMPI_INDEX_MAX_PATH + 1];
        int len = 0;
        long freed = -1;
        path[0] = b[next_rand(x) & 1] * CLAMPI_INDEX_BUCKET + (next_rand(x) % CLAMPI_INDEX_BUCKET);
        for (len = 1; len <= CLAMPI_INDEX_MAX_PATH; len++) {
            uint64_t ob = other_bucket(x, path[len - 1]);
            freed = free_slot_in(x, ob);
            if (freed >= 0) break;
            if (len == CLAMPI_INDEX_MAX_PATH) break;
            size_t nxt = ob * CLAMPI_INDEX_BUCKET + (next_rand(x) % CLAMPI_INDEX_BUCKET);
            for (int i = 0; i < len; i++)
                if (path[i] == nxt) {
                    nxt = (size_t)-1;
                    break;
                }
            if (nxt == (size_t)-1) break; /* the walk loops: give up */
            path[len] = nxt;
        }
        if (freed < 0) {
            for (int i = 0; i < CLAMPI_INDEX_BUCKET; i++) {
                candidates[i] = b[0] * CLAMPI_INDEX_BUCKET + i;
                candidates[CLAMPI_INDEX_BUCKET + i] = b[1] * CLAMPI_INDEX_BUCKET + i;
            }
            return -1;
        }
        /* Shift keys along the path, last first. */
        x->slots[freed] = x->slots[path[len - 1]];
        for (int i = len - 1; i > 0; i--) x->slots[path[i]] = x->slots[path[i - 1]];
        dst = (long)path[0];
    }
    x->slots[dst].target = target;
    x->slots[dst].offset = offset;
    x->slots[dst].id = id;
    x->count++;
    return 0;
}

uint32_t clampi_index_remove(clampi_index *x, uint32_t target, uint64_t offset) {
    uint64_t h = clampi_index_hash(target, offset);
    uint64_t b[2] = {clampi_index_bucket1(x, h), clampi_index_bucket2(x, h)};
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < CLAMPI_INDEX_BUCKET; i++) {
            clampi_index_slot *s = &x->slots[b[j] * CLAMPI_INDEX_BUCKET + i];
            if (s->id != CLAMPI_INDEX_NONE && s->target == target && s->offset == offset) {
                uint32_t id = s->id;
                s->id = CLAMPI_INDEX_NONE;
                x->count--;
                return id;
            }
        }
    return CLAMPI_INDEX_NONE;
}
