#include "cache/buffer.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Block header. `size` is the whole block (header included), a multiple of
 * CLAMPI_BUFFER_ALIGN; its low bit says "allocated". `prev_size` is the size of the
 * block physically before this one (0 for the first), which makes merging backwards
 * O(1). A free block keeps its list links right after the header. */
typedef struct block {
    uint64_t size;
    uint64_t prev_size;
} block;
typedef struct free_links {
    uint64_t next, prev; /* offset+1 of neighbours in the class list; 0 = none */
} free_links;

#define HDR ((size_t)sizeof(block))
#define MIN_BLOCK (HDR + sizeof(free_links))
#define USED_BIT 1ull
#define HUGE_BYTES ((size_t)2 << 20) /* a transparent huge page */
#define CHUNK_BYTES ((size_t)64 << 10)

static inline block *at(const clampi_buffer *b, uint64_t off) { return (block *)(b->base + off); }
static inline uint64_t off_of(const clampi_buffer *b, const block *k) {
    return (uint64_t)((const unsigned char *)k - b->base);
}
static inline uint64_t bsize(const block *k) { return k->size & ~USED_BIT; }
static inline int is_used(const block *k) { return (int)(k->size & USED_BIT); }
static inline free_links *links(block *k) { return (free_links *)(k + 1); }

static int size_class(uint64_t size) {
    int c = 63 - __builtin_clzll(size); /* floor(log2) */
    return c < CLAMPI_BUFFER_CLASSES ? c : CLAMPI_BUFFER_CLASSES - 1;
}

static void list_push(clampi_buffer *b, block *k) {
    int c = size_class(bsize(k));
    free_links *l = links(k);
    l->prev = 0;
    l->next = b->free_head[c];
    if (l->next) links(at(b, l->next - 1))->prev = off_of(b, k) + 1;
    b->free_head[c] = off_of(b, k) + 1;
}

static void list_remove(clampi_buffer *b, block *k) {
    int c = size_class(bsize(k));
    free_links *l = links(k);
    if (l->prev)
        links(at(b, l->prev - 1))->next = l->next;
    else
        b->free_head[c] = l->next;
    if (l->next) links(at(b, l->next - 1))->prev = l->prev;
}

static block *next_block(const clampi_buffer *b, block *k) {
    uint64_t n = off_of(b, k) + bsize(k);
    return n < b->capacity ? at(b, n) : NULL;
}

static block *prev_block(const clampi_buffer *b, block *k) {
    return k->prev_size ? at(b, off_of(b, k) - k->prev_size) : NULL;
}

int clampi_buffer_init(clampi_buffer *b, size_t capacity) {
    memset(b, 0, sizeof *b);
    capacity &= ~(size_t)(CLAMPI_BUFFER_ALIGN - 1);
    if (capacity < MIN_BLOCK) return -1;
    void *p = NULL;
    /* A buffer of a few huge pages or more asks for them (transparent huge pages): the
     * kernel maps and clears 2 MiB at a time instead of faulting per 4 KiB page. */
    const size_t huge = HUGE_BYTES;
    if (posix_memalign(&p, capacity >= 2 * huge ? huge : 64, capacity) != 0) return -1;
    int advised = capacity >= 2 * huge && madvise(p, capacity & ~(huge - 1), MADV_HUGEPAGE) == 0;
    b->base = p;
    b->capacity = capacity;
    b->huge = advised;
    clampi_buffer_reset(b);
    return 0;
}

void clampi_buffer_destroy(clampi_buffer *b) {
    free(b->base);
    memset(b, 0, sizeof *b);
}

void clampi_buffer_reset(clampi_buffer *b) {
    memset(b->free_head, 0, sizeof b->free_head);
    b->ahead = 0;
    b->used = 0;
    b->nblocks_used = 0;
    if (!b->base) return;
    block *k = at(b, 0);
    k->size = b->capacity;
    k->prev_size = 0;
    list_push(b, k);
}

size_t clampi_buffer_max_request(const clampi_buffer *b) { return b->base ? b->capacity - HDR : 0; }

static uint64_t block_size_for(size_t len) {
    uint64_t need = (uint64_t)len + HDR;
    need = (need + CLAMPI_BUFFER_ALIGN - 1) & ~(uint64_t)(CLAMPI_BUFFER_ALIGN - 1);
    return need < MIN_BLOCK ? MIN_BLOCK : need;
}

/* First fit within the smallest class that can hold need bytes: the block, or NULL. */
static block *find_fit(const clampi_buffer *b, uint64_t need) {
    for (int c = size_class(need); c < CLAMPI_BUFFER_CLASSES; c++)
        for (uint64_t o = b->free_head[c]; o; o = links(at(b, o - 1))->next)
            if (bsize(at(b, o - 1)) >= need) return at(b, o - 1);
    return NULL;
}

/* Maps [populated, end) (end within the region) and on to the next chunk boundary: one
 * madvise, or a write to each page that changes nothing (kernels before 5.14). A region
 * advised for huge pages gets whole huge pages from its first touch of each, so asking
 * again for every page of one (a call per insert in a stream of misses, about 1 us each)
 * maps nothing: it takes them 2 MiB at a time; a small region 64 KiB at a time. */
static size_t populate_to(clampi_buffer *b, size_t end) {
    const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    const size_t chunk = b->huge ? HUGE_BYTES : CHUNK_BYTES;
    size_t to = (end + chunk - 1) & ~(chunk - 1);
    if (to > b->capacity) to = b->capacity;
    uintptr_t lo = ((uintptr_t)b->base + b->populated) & ~(uintptr_t)(ps - 1);
    uintptr_t hi = ((uintptr_t)b->base + to + ps - 1) & ~(uintptr_t)(ps - 1);
    const size_t before = b->populated;
    if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) != 0) {
        for (uintptr_t p = (uintptr_t)b->base + b->populated; p < (uintptr_t)b->base + to; p = (p | (ps - 1)) + 1)
            __atomic_fetch_or((unsigned char *)p, 0, __ATOMIC_RELAXED);
    }
    /* the whole last page is mapped now */
    size_t mapped = (size_t)(hi - (uintptr_t)b->base);
    b->populated = mapped < b->capacity ? mapped : b->capacity;
    return b->populated - before;
}

size_t clampi_buffer_prepare(clampi_buffer *b, size_t len) {
    if (!b->base || b->populated >= b->capacity || len > clampi_buffer_max_request(b)) return 0;
    const size_t need = block_size_for(len);
    block *k = find_fit(b, need);
    if (!k) return 0; /* an eviction makes the room, in mapped memory */
    /* Fresh memory is taken from the front of the free block at the mapped end, insert
     * after insert: this one lands after those prepared before it. MIN_BLOCK: the split's
     * header of the free rest. */
    size_t o = (size_t)off_of(b, k), end = o + need + MIN_BLOCK;
    if (o + bsize(k) >= b->populated) end += b->ahead;
    b->ahead += need;
    if (end > o + bsize(k)) end = o + bsize(k);
    return end > b->populated ? populate_to(b, end) : 0;
}

void *clampi_buffer_alloc(clampi_buffer *b, size_t len) {
    if (!b->base || len > clampi_buffer_max_request(b)) return NULL;
    uint64_t need = block_size_for(len);
    block *k = find_fit(b, need);
    if (!k) return NULL;
    uint64_t o = off_of(b, k), have = bsize(k);
    if (o + need > b->populated) b->populated = o + need; /* the caller's copy maps it */
    b->ahead = b->ahead > need ? b->ahead - need : 0;
    list_remove(b, k);
    if (have - need >= MIN_BLOCK) { /* split: the tail stays free */
        block *rest = at(b, o + need);
        rest->size = have - need;
        rest->prev_size = need;
        block *after = next_block(b, rest);
        if (after) after->prev_size = rest->size;
        list_push(b, rest);
        have = need;
    }
    k->size = have | USED_BIT;
    b->used += have;
    b->nblocks_used++;
    return k + 1;
}

void clampi_buffer_free(clampi_buffer *b, void *p) {
    if (!p) return;
    block *k = (block *)p - 1;
    uint64_t size = bsize(k);
    b->used -= size;
    b->nblocks_used--;
    k->size = size;
    block *n = next_block(b, k);
    if (n && !is_used(n)) { /* merge forward */
        list_remove(b, n);
        k->size += bsize(n);
    }
    block *pv = prev_block(b, k);
    if (pv && !is_used(pv)) { /* merge backward */
        list_remove(b, pv);
        pv->size += k->size;
        k = pv;
    }
    n = next_block(b, k);
    if (n) n->prev_size = k->size;
    list_push(b, k);
}

size_t clampi_buffer_hole_if_freed(const clampi_buffer *b, const void *p) {
    block *k = (block *)p - 1;
    uint64_t hole = bsize(k);
    block *n = next_block(b, k);
    if (n && !is_used(n)) hole += bsize(n);
    block *pv = prev_block(b, k);
    if (pv && !is_used(pv)) hole += bsize(pv);
    return hole - HDR;
}

size_t clampi_buffer_largest_free(const clampi_buffer *b) {
    uint64_t best = 0;
    for (int c = 0; c < CLAMPI_BUFFER_CLASSES; c++)
        for (uint64_t o = b->free_head[c]; o; o = links(at(b, o - 1))->next)
            if (bsize(at(b, o - 1)) > best) best = bsize(at(b, o - 1));
    return best ? best - HDR : 0;
}

size_t clampi_buffer_free_blocks(const clampi_buffer *b) {
    size_t n = 0;
    for (int c = 0; c < CLAMPI_BUFFER_CLASSES; c++)
        for (uint64_t o = b->free_head[c]; o; o = links(at(b, o - 1))->next) n++;
    return n;
}
