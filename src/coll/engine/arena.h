/* A first-fit allocator over one byte range, MPI-free: the shared heap's allocator.
 *
 * Blocks tile the range; each starts with a 64-byte header holding its size, the size
 * of the block before it (boundary tag for coalescing) and, when free, links of the
 * doubly linked free list (as offsets from the range start, so the metadata means the
 * same in every process that maps the range). Payloads are 64-byte aligned. Freeing
 * coalesces with both neighbours, so freeing everything yields one free block again.
 * Not thread-safe: the caller locks. */
#ifndef CLAMPI_COLL_ARENA_H
#define CLAMPI_COLL_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define CLAMPI_ARENA_ALIGN 64

typedef struct clampi_coll_arena {
    char *base;         /* first header (64-byte aligned) */
    size_t size;        /* bytes managed (multiple of 64) */
    uint64_t free_head; /* offset of the first free block, or UINT64_MAX */
    size_t in_use;      /* bytes in allocated blocks, headers included */
    size_t nallocs;     /* live allocations */
} clampi_coll_arena;

/* Manages [mem, mem + bytes). Returns 0, or -1 if the range holds no block. */
int clampi_coll_arena_init(clampi_coll_arena *a, void *mem, size_t bytes);
/* 64-byte aligned block of at least n bytes (n = 0 gives a unique minimal block), or
 * NULL when no free block is large enough. */
void *clampi_coll_arena_alloc(clampi_coll_arena *a, size_t n);
/* Frees p (from clampi_coll_arena_alloc). Returns 0, or -1 if p is not a live block. */
int clampi_coll_arena_free(clampi_coll_arena *a, void *p);
/* 1 if [p, p + n) lies inside the managed range. */
int clampi_coll_arena_contains(const clampi_coll_arena *a, const void *p, size_t n);
/* Usable bytes of the block p (>= the size asked for). */
size_t clampi_coll_arena_usable(const clampi_coll_arena *a, const void *p);
/* Largest payload a single allocation could get now. */
size_t clampi_coll_arena_largest_free(const clampi_coll_arena *a);
/* Walks every block and checks the invariants (tiling, boundary tags, free list,
 * no two adjacent free blocks). Returns 0 if consistent. For tests. */
int clampi_coll_arena_check(const clampi_coll_arena *a);

#endif
