/* Range tree: byte ranges [start, end) per target, ordered by (target, start), with
 * each subtree's largest (target, end) kept in its root (an interval treap). Answers
 * "which range contains [a, b) at target t" and "which ranges overlap it" in
 * O(log n) (plus the overlaps reported). Nodes live in a caller-sized array and are
 * named by id, so the cache and the in-flight table each keep one beside their
 * records. MPI-free. */
#ifndef CLAMPI_CACHE_RANGES_H
#define CLAMPI_CACHE_RANGES_H
#include <stddef.h>
#include <stdint.h>

#define CLAMPI_RANGES_NONE UINT32_MAX

typedef struct clampi_range_node {
    uint64_t start, end; /* this range */
    uint64_t max_end;    /* largest end in the subtree among nodes of target max_target */
    uint32_t target, max_target;
    uint32_t left, right, prio;
} clampi_range_node;

typedef struct clampi_ranges {
    clampi_range_node *nodes;
    size_t capacity;
    uint32_t root;
    uint64_t rng;
} clampi_ranges;

int clampi_ranges_init(clampi_ranges *r, size_t capacity);
void clampi_ranges_destroy(clampi_ranges *r);
/* Grows the node array (ids stay valid). */
int clampi_ranges_reserve(clampi_ranges *r, size_t capacity);
void clampi_ranges_clear(clampi_ranges *r);
/* Adds node `id` (< capacity, not in the tree) for [start, end) at target. */
void clampi_ranges_insert(clampi_ranges *r, uint32_t id, uint32_t target, uint64_t start, uint64_t end);
void clampi_ranges_remove(clampi_ranges *r, uint32_t id);
/* Some node whose range contains [start, end) at target, or CLAMPI_RANGES_NONE. */
uint32_t clampi_ranges_find_containing(const clampi_ranges *r, uint32_t target, uint64_t start, uint64_t end);
/* Writes up to `max` ids of nodes overlapping [start, end) at target; returns how many
 * overlap in all (may exceed max: call again after removing). */
size_t clampi_ranges_find_overlapping(const clampi_ranges *r, uint32_t target, uint64_t start, uint64_t end,
                                      uint32_t *ids, size_t max);
#endif
