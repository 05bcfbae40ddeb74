#include "cache/inflight.h"

#include <stdlib.h>
#include <string.h>

#define NONE CLAMPI_INFLIGHT_NONE

int clampi_inflight_init(clampi_inflight *f, uint32_t ntargets) {
    memset(f, 0, sizeof *f);
    f->ntargets = ntargets;
    f->free_head = NONE;
    return clampi_ranges_init(&f->matchable, 0) == 0 ? 0 : -1;
}

void clampi_inflight_destroy(clampi_inflight *f) {
    free(f->recs);
    free(f->head);
    free(f->tail);
    free(f->busy_targets);
    clampi_ranges_destroy(&f->matchable);
    memset(f, 0, sizeof *f);
}

/* Per-target arrays are made on first use: windows that never miss pay nothing. */
static int ensure_targets(clampi_inflight *f) {
    if (f->head) return 0;
    f->head = malloc(f->ntargets * sizeof *f->head);
    f->tail = malloc(f->ntargets * sizeof *f->tail);
    f->busy_targets = malloc(f->ntargets * sizeof *f->busy_targets);
    if (!f->head || !f->tail || !f->busy_targets) {
        free(f->head);
        free(f->tail);
        free(f->busy_targets);
        f->head = f->tail = f->busy_targets = NULL;
        return -1;
    }
    for (uint32_t t = 0; t < f->ntargets; t++) f->head[t] = f->tail[t] = NONE;
    return 0;
}

static uint32_t new_record(clampi_inflight *f, uint32_t target) {
    if (ensure_targets(f) != 0) return NONE;
    if (f->free_head == NONE) {
        size_t cap = f->capacity ? f->capacity * 2 : 64;
        if (cap >= NONE) return NONE;
        clampi_inflight_record *r = realloc(f->recs, cap * sizeof *r);
        if (!r) return NONE;
        f->recs = r;
        if (clampi_ranges_reserve(&f->matchable, cap) != 0) return NONE;
        for (size_t i = f->capacity; i < cap; i++) r[i].next = i + 1 < cap ? (uint32_t)(i + 1) : NONE;
        f->free_head = (uint32_t)f->capacity;
        f->capacity = cap;
    }
    uint32_t id = f->free_head;
    clampi_inflight_record *r = &f->recs[id];
    f->free_head = r->next;
    r->next = NONE;
    r->target = target;
    if (f->head[target] == NONE) {
        f->head[target] = id;
        f->busy_targets[f->nbusy++] = target;
    } else {
        f->recs[f->tail[target]].next = id;
    }
    f->tail[target] = id;
    f->live++;
    return id;
}

uint32_t clampi_inflight_add_fill(clampi_inflight *f, uint32_t target, uint64_t offset, uint64_t length, void *dest,
                                  int cacheable) {
    uint32_t id = new_record(f, target);
    if (id == NONE) return NONE;
    clampi_inflight_record *r = &f->recs[id];
    r->offset = offset;
    r->length = length;
    r->dest = dest;
    r->source = NONE;
    r->cacheable = (uint8_t)(cacheable != 0);
    r->matchable = 1;
    clampi_ranges_insert(&f->matchable, id, target, offset, offset + length);
    return id;
}

uint32_t clampi_inflight_find(const clampi_inflight *f, uint32_t target, uint64_t offset, uint64_t length) {
    if (f->live == 0) return NONE;
    return clampi_ranges_find_containing(&f->matchable, target, offset, offset + length);
}

int clampi_inflight_add_copy(clampi_inflight *f, uint32_t source, uint64_t offset, uint64_t length, void *dest) {
    uint32_t id = new_record(f, f->recs[source].target);
    if (id == NONE) return -1;
    clampi_inflight_record *r = &f->recs[id];
    r->offset = offset;
    r->length = length;
    r->dest = dest;
    r->source = source;
    r->cacheable = 0;
    r->matchable = 0;
    return 0;
}

static void unmatch(clampi_inflight *f, uint32_t id) {
    clampi_inflight_record *r = &f->recs[id];
    r->cacheable = 0;
    if (r->matchable) {
        r->matchable = 0;
        clampi_ranges_remove(&f->matchable, id);
    }
}

void clampi_inflight_forget_overlapping(clampi_inflight *f, uint32_t target, uint64_t offset, uint64_t length) {
    if (f->live == 0 || length == 0) return;
    /* Matchable FILLs are in the range tree; cacheable but unmatchable ones cannot
     * exist (both flags drop together), so the tree finds every FILL that matters. */
    uint32_t ids[64];
    size_t n;
    do {
        n = clampi_ranges_find_overlapping(&f->matchable, target, offset, offset + length, ids, 64);
        size_t take = n < 64 ? n : 64;
        for (size_t i = 0; i < take; i++) unmatch(f, ids[i]);
    } while (n > 64);
}

void clampi_inflight_forget_all(clampi_inflight *f) {
    for (size_t b = 0; b < f->nbusy; b++)
        for (uint32_t id = f->head[f->busy_targets[b]]; id != NONE; id = f->recs[id].next)
            if (f->recs[id].source == NONE) unmatch(f, id);
}

static void complete_chain(clampi_inflight *f, uint32_t target, clampi_inflight_fill_fn fill, void *ctx) {
    uint32_t first = f->head[target];
    /* Issue order: a COPY always comes after the FILL it reads from. */
    for (uint32_t id = first; id != NONE; id = f->recs[id].next) {
        clampi_inflight_record *r = &f->recs[id];
        if (r->source == NONE) {
            if (r->cacheable && fill) fill(ctx, target, r->offset, r->length, r->dest);
        } else {
            const clampi_inflight_record *s = &f->recs[r->source];
            memmove(r->dest, s->dest + (r->offset - s->offset), r->length);
        }
    }
    for (uint32_t id = first, next; id != NONE; id = next) {
        next = f->recs[id].next;
        if (f->recs[id].matchable) clampi_ranges_remove(&f->matchable, id);
        f->recs[id].next = f->free_head;
        f->free_head = id;
        f->live--;
    }
    f->head[target] = f->tail[target] = NONE;
}

void clampi_inflight_complete(clampi_inflight *f, uint32_t target, clampi_inflight_fill_fn fill, void *ctx) {
    if (!clampi_inflight_pending(f, target)) return;
    complete_chain(f, target, fill, ctx);
    for (size_t b = 0; b < f->nbusy; b++)
        if (f->busy_targets[b] == target) {
            f->busy_targets[b] = f->busy_targets[--f->nbusy];
            break;
        }
}

void clampi_inflight_complete_all(clampi_inflight *f, clampi_inflight_fill_fn fill, void *ctx) {
    for (size_t b = 0; b < f->nbusy; b++) complete_chain(f, f->busy_targets[b], fill, ctx);
    f->nbusy = 0;
    clampi_ranges_clear(&f->matchable);
}
