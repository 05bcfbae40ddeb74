/* First-fit, boundary-tagged allocator over one byte range. See arena.h. */
#include "coll/engine/arena.h"

#include <string.h>

#define HDR CLAMPI_ARENA_ALIGN
#define NIL UINT64_MAX
#define MAGIC_USED 0x636c616d70692b55ull /* "clampi+U" */
#define MAGIC_FREE 0x636c616d70692d46ull /* "clampi-F" */

typedef struct blk {
    uint64_t size;      /* whole block, header included; multiple of 64 */
    uint64_t prev_size; /* size of the block just before, 0 for the first */
    uint64_t magic;     /* MAGIC_USED or MAGIC_FREE */
    uint64_t next_free; /* free list links (offsets), valid when free */
    uint64_t prev_free;
    uint64_t pad[3];
} blk;
_Static_assert(sizeof(blk) == HDR, "block header must be 64 bytes");

static inline blk *at(const clampi_coll_arena *a, uint64_t off) { return (blk *)(a->base + off); }
static inline uint64_t off_of(const clampi_coll_arena *a, const blk *b) {
    return (uint64_t)((const char *)b - a->base);
}

static void list_remove(clampi_coll_arena *a, blk *b) {
    if (b->prev_free != NIL)
        at(a, b->prev_free)->next_free = b->next_free;
    else
        a->free_head = b->next_free;
    if (b->next_free != NIL) at(a, b->next_free)->prev_free = b->prev_free;
}

static void list_push(clampi_coll_arena *a, blk *b) {
    b->magic = MAGIC_FREE;
    b->prev_free = NIL;
    b->next_free = a->free_head;
    if (a->free_head != NIL) at(a, a->free_head)->prev_free = off_of(a, b);
    a->free_head = off_of(a, b);
}

int clampi_coll_arena_init(clampi_coll_arena *a, void *mem, size_t bytes) {
    memset(a, 0, sizeof *a);
    uintptr_t p = (uintptr_t)mem, q = (p + HDR - 1) & ~(uintptr_t)(HDR - 1);
    if (bytes < (q - p) + 2 * HDR) {
        a->free_head = NIL;
        return -1;
    }
    a->base = (char *)q;
    a->size = (bytes - (q - p)) & ~(size_t)(HDR - 1);
    a->free_head = NIL;
    blk *b = at(a, 0);
    b->size = a->size;
    b->prev_size = 0;
    list_push(a, b);
    return 0;
}

void *clampi_coll_arena_alloc(clampi_coll_arena *a, size_t n) {
    if (a->base == NULL || n > a->size) return NULL;
    uint64_t need = ((n ? n : 1) + HDR - 1) / HDR * HDR + HDR;
    for (uint64_t o = a->free_head; o != NIL; o = at(a, o)->next_free) {
        blk *b = at(a, o);
        if (b->size < need) continue;
        list_remove(a, b);
        if (b->size - need >= 2 * HDR) { /* split: the tail stays free */
            blk *t = at(a, o + need);
            t->size = b->size - need;
            t->prev_size = need;
            uint64_t after = o + b->size;
            if (after < a->size) at(a, after)->prev_size = t->size;
            b->size = need;
            list_push(a, t);
        }
        b->magic = MAGIC_USED;
        a->in_use += b->size;
        a->nallocs++;
        return (char *)b + HDR;
    }
    return NULL;
}

int clampi_coll_arena_contains(const clampi_coll_arena *a, const void *p, size_t n) {
    const char *c = (const char *)p;
    return a->base != NULL && c >= a->base && c <= a->base + a->size && n <= (size_t)(a->base + a->size - c);
}

static blk *live_block(const clampi_coll_arena *a, const void *p) {
    if (!clampi_coll_arena_contains(a, p, 1) || ((uintptr_t)p & (HDR - 1)) || (const char *)p < a->base + HDR)
        return NULL;
    blk *b = (blk *)((char *)p - HDR);
    if (b->magic != MAGIC_USED || b->size < 2 * HDR || off_of(a, b) + b->size > a->size) return NULL;
    return b;
}

int clampi_coll_arena_free(clampi_coll_arena *a, void *p) {
    blk *b = live_block(a, p);
    if (b == NULL) return -1;
    a->in_use -= b->size;
    a->nallocs--;
    uint64_t o = off_of(a, b);
    uint64_t next = o + b->size;
    if (next < a->size && at(a, next)->magic == MAGIC_FREE) { /* merge the next block */
        blk *nb = at(a, next);
        list_remove(a, nb);
        b->size += nb->size;
        nb->magic = 0;
    }
    if (b->prev_size != 0 && at(a, o - b->prev_size)->magic == MAGIC_FREE) { /* merge into prev */
        blk *pb = at(a, o - b->prev_size);
        list_remove(a, pb);
        pb->size += b->size;
        b->magic = 0;
        b = pb;
        o = off_of(a, b);
    }
    next = o + b->size;
    if (next < a->size) at(a, next)->prev_size = b->size;
    list_push(a, b);
    return 0;
}

size_t clampi_coll_arena_usable(const clampi_coll_arena *a, const void *p) {
    blk *b = live_block(a, p);
    return b ? b->size - HDR : 0;
}

size_t clampi_coll_arena_largest_free(const clampi_coll_arena *a) {
    uint64_t best = 0;
    for (uint64_t o = a->free_head; o != NIL; o = at(a, o)->next_free)
        if (at(a, o)->size > best) best = at(a, o)->size;
    return best ? best - HDR : 0;
}

int clampi_coll_arena_check(const clampi_coll_arena *a) {
    if (a->base == NULL) return -1;
    uint64_t o = 0, prev = 0, used = 0, nfree = 0, nalloc = 0;
    int prev_free = 0;
    while (o < a->size) {
        blk *b = at(a, o);
        if (b->size < HDR || b->size % HDR || o + b->size > a->size || b->prev_size != prev) return -2;
        if (b->magic == MAGIC_FREE) {
            if (prev_free) return -3; /* two adjacent free blocks: coalescing missed */
            nfree++;
            prev_free = 1;
        } else if (b->magic == MAGIC_USED) {
            used += b->size;
            nalloc++;
            prev_free = 0;
        } else {
            return -4;
        }
        prev = b->size;
        o += b->size;
    }
    if (o != a->size || used != a->in_use || nalloc != a->nallocs) return -5;
    uint64_t listed = 0, back = NIL;
    for (uint64_t f = a->free_head; f != NIL; f = at(a, f)->next_free) {
        if (f >= a->size || at(a, f)->magic != MAGIC_FREE || at(a, f)->prev_free != back) return -6;
        back = f;
        if (++listed > nfree) return -7;
    }
    return listed == nfree ? 0 : -8;
}
