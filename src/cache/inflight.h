/* Gets in flight: what must happen when the MPI flush that completes them returns.
 *
 * A FILL record is a get issued to the network whose destination (the user's origin
 * buffer) will hold [offset, offset+length) of the target once completed; it may then
 * be entered in the cache. A COPY record is a later get for bytes inside a FILL that is
 * still in flight: no second network get is issued; at completion its bytes are copied
 * from the FILL's destination. Records are chained per target so completing one target
 * touches only its records. MPI-free. */
#ifndef CLAMPI_CACHE_INFLIGHT_H
#define CLAMPI_CACHE_INFLIGHT_H
#include <stddef.h>
#include <stdint.h>

#include "cache/ranges.h"

#define CLAMPI_INFLIGHT_NONE UINT32_MAX

typedef struct clampi_inflight_record {
    uint64_t offset, length;
    unsigned char *dest;
    uint32_t target;
    uint32_t source;   /* COPY: the FILL it copies from; FILL: CLAMPI_INFLIGHT_NONE */
    uint32_t next;     /* next record of the same target (insertion order), or free list */
    uint8_t cacheable; /* FILL: may enter the cache at completion */
    uint8_t matchable; /* FILL: later gets may be served from it */
} clampi_inflight_record;

typedef struct clampi_inflight {
    clampi_inflight_record *recs;
    clampi_ranges matchable; /* FILL records later gets may copy from */
    uint32_t *head, *tail;   /* per target chains */
    uint32_t *busy_targets;  /* targets with a non-empty chain (a stack) */
    size_t nbusy;
    uint32_t ntargets;
    size_t capacity, live;
    uint32_t free_head;
} clampi_inflight;

/* Called once the flush covering a target has returned: `fill` is told about each
 * cacheable FILL (in issue order) so it can enter the cache. */
typedef void (*clampi_inflight_fill_fn)(void *ctx, uint32_t target, uint64_t offset, uint64_t length, const void *data);

int clampi_inflight_init(clampi_inflight *f, uint32_t ntargets);
void clampi_inflight_destroy(clampi_inflight *f);
/* Records a FILL; returns its id, or CLAMPI_INFLIGHT_NONE if memory ran out (the get
 * then simply stays uncached). */
uint32_t clampi_inflight_add_fill(clampi_inflight *f, uint32_t target, uint64_t offset, uint64_t length, void *dest,
                                  int cacheable);
/* A matchable FILL in flight that contains [offset, offset+length) at target, or NONE. */
uint32_t clampi_inflight_find(const clampi_inflight *f, uint32_t target, uint64_t offset, uint64_t length);
/* Records a COPY from FILL `source`. Returns 0, or -1 if memory ran out. */
int clampi_inflight_add_copy(clampi_inflight *f, uint32_t source, uint64_t offset, uint64_t length, void *dest);
/* A write to [offset, offset+length) at target: FILLs overlapping it neither enter the
 * cache nor serve later gets. */
void clampi_inflight_forget_overlapping(clampi_inflight *f, uint32_t target, uint64_t offset, uint64_t length);
/* Invalidation: no FILL in flight enters the cache or serves later gets. */
void clampi_inflight_forget_all(clampi_inflight *f);
/* Whether any record waits on target. */
static inline int clampi_inflight_pending(const clampi_inflight *f, uint32_t target) {
    return f->head && f->head[target] != CLAMPI_INFLIGHT_NONE;
}
/* The flush for target returned: runs the FILL callbacks and COPYs, frees the records. */
void clampi_inflight_complete(clampi_inflight *f, uint32_t target, clampi_inflight_fill_fn fill, void *ctx);
/* The same for every target. */
void clampi_inflight_complete_all(clampi_inflight *f, clampi_inflight_fill_fn fill, void *ctx);
#endif
