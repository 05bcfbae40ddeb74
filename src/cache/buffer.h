/* Cache storage: one contiguous byte region with a boundary-tag allocator.
 *
 * Blocks carry a 16-byte header (size, previous block's size) so a freed block merges
 * with free neighbours at once (coalescing). Free blocks sit in segregated lists by
 * power-of-two size class; allocation is first fit within the smallest class that can
 * hold the request. MPI-free. */
#ifndef CLAMPI_CACHE_BUFFER_H
#define CLAMPI_CACHE_BUFFER_H
#include <stddef.h>
#include <stdint.h>

#define CLAMPI_BUFFER_ALIGN 16
#define CLAMPI_BUFFER_CLASSES 48

typedef struct clampi_buffer {
    unsigned char *base;                       /* region start (CLAMPI_BUFFER_ALIGN aligned) */
    size_t capacity;                           /* region bytes */
    size_t used;                               /* bytes in allocated blocks, headers included */
    size_t nblocks_used;                       /* allocated blocks */
    size_t populated;                          /* bytes from base whose pages are mapped (high-water mark) */
    size_t ahead;                              /* bytes prepared for inserts not yet allocated */
    int huge;                                  /* advised for transparent huge pages */
    uint64_t free_head[CLAMPI_BUFFER_CLASSES]; /* offset+1 of first free block per class; 0 = none */
} clampi_buffer;

/* Allocates the region. Returns 0, or -1 if memory could not be had (b stays empty). */
int clampi_buffer_init(clampi_buffer *b, size_t capacity);
void clampi_buffer_destroy(clampi_buffer *b);
/* Frees every block: the whole region becomes one free block. */
void clampi_buffer_reset(clampi_buffer *b);
/* The largest request that can ever succeed in this buffer. */
size_t clampi_buffer_max_request(const clampi_buffer *b);
/* Returns len bytes (aligned), or NULL when no free block is large enough. */
void *clampi_buffer_alloc(clampi_buffer *b, size_t len);
void clampi_buffer_free(clampi_buffer *b, void *p);
/* Maps, ahead of time, the pages an allocation of len bytes would take that are not mapped
 * yet (the region is reserved, not touched, when made: its first use of each page faults).
 * Called while a get is on the wire, it takes those faults off the insert that follows;
 * several calls before their allocations map for all of them, in order. Changes no
 * contents. Returns the bytes newly mapped (0: nothing to do). */
size_t clampi_buffer_prepare(clampi_buffer *b, size_t len);
/* Size of the free block that freeing p would produce (p's block plus free neighbours). */
size_t clampi_buffer_hole_if_freed(const clampi_buffer *b, const void *p);
/* Largest free block's usable bytes (a fragmentation measure; O(free blocks)). */
size_t clampi_buffer_largest_free(const clampi_buffer *b);
/* Number of free blocks (fragmentation measure, for tests). */
size_t clampi_buffer_free_blocks(const clampi_buffer *b);
#endif
