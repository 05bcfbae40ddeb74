#include "cache/ranges.h"

#include <stdlib.h>
#include <string.h>

#define NONE CLAMPI_RANGES_NONE

/* (target, value) pairs compare lexicographically: target first. */
static inline int pair_ge(uint32_t t1, uint64_t v1, uint32_t t2, uint64_t v2) { return t1 != t2 ? t1 > t2 : v1 >= v2; }

/* Node order: (target, start, id), so equal ranges still have distinct keys. */
static inline int key_less(const clampi_range_node *a, uint32_t aid, const clampi_range_node *b, uint32_t bid) {
    if (a->target != b->target) return a->target < b->target;
    if (a->start != b->start) return a->start < b->start;
    return aid < bid;
}

static void update(clampi_range_node *n, uint32_t id) {
    clampi_range_node *x = &n[id];
    x->max_target = x->target;
    x->max_end = x->end;
    for (int side = 0; side < 2; side++) {
        uint32_t c = side ? x->right : x->left;
        if (c != NONE && pair_ge(n[c].max_target, n[c].max_end, x->max_target, x->max_end)) {
            x->max_target = n[c].max_target;
            x->max_end = n[c].max_end;
        }
    }
}

int clampi_ranges_init(clampi_ranges *r, size_t capacity) {
    memset(r, 0, sizeof *r);
    r->root = NONE;
    r->rng = 0x9E3779B97F4A7C15ull;
    return clampi_ranges_reserve(r, capacity);
}

void clampi_ranges_destroy(clampi_ranges *r) {
    free(r->nodes);
    memset(r, 0, sizeof *r);
    r->root = NONE;
}

int clampi_ranges_reserve(clampi_ranges *r, size_t capacity) {
    if (capacity <= r->capacity) return 0;
    clampi_range_node *n = realloc(r->nodes, capacity * sizeof *n);
    if (!n) return -1;
    r->nodes = n;
    r->capacity = capacity;
    return 0;
}

void clampi_ranges_clear(clampi_ranges *r) { r->root = NONE; }

/* Splits subtree t into keys < key(id) (left) and >= (right). */
static void split(clampi_range_node *n, uint32_t t, uint32_t id, uint32_t *l, uint32_t *rr) {
    if (t == NONE) {
        *l = *rr = NONE;
        return;
    }
    if (key_less(&n[t], t, &n[id], id)) {
        split(n, n[t].right, id, &n[t].right, rr);
        *l = t;
    } else {
        split(n, n[t].left, id, l, &n[t].left);
        *rr = t;
    }
    update(n, t);
}

static uint32_t merge(clampi_range_node *n, uint32_t a, uint32_t b) {
    if (a == NONE) return b;
    if (b == NONE) return a;
    if (n[a].prio > n[b].prio) {
        n[a].right = merge(n, n[a].right, b);
        update(n, a);
        return a;
    }
    n[b].left = merge(n, a, n[b].left);
    update(n, b);
    return b;
}

static uint32_t insert_at(clampi_range_node *n, uint32_t t, uint32_t id) {
    if (t == NONE) return id;
    if (n[id].prio > n[t].prio) {
        split(n, t, id, &n[id].left, &n[id].right);
        update(n, id);
        return id;
    }
    if (key_less(&n[id], id, &n[t], t))
        n[t].left = insert_at(n, n[t].left, id);
    else
        n[t].right = insert_at(n, n[t].right, id);
    update(n, t);
    return t;
}

void clampi_ranges_insert(clampi_ranges *r, uint32_t id, uint32_t target, uint64_t start, uint64_t end) {
    clampi_range_node *x = &r->nodes[id];
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    x->target = target;
    x->start = start;
    x->end = end;
    x->left = x->right = NONE;
    x->prio = (uint32_t)(r->rng >> 32);
    update(r->nodes, id);
    r->root = insert_at(r->nodes, r->root, id);
}

static uint32_t remove_at(clampi_range_node *n, uint32_t t, uint32_t id) {
    if (t == NONE) return NONE;
    if (t == id) return merge(n, n[t].left, n[t].right);
    if (key_less(&n[id], id, &n[t], t))
        n[t].left = remove_at(n, n[t].left, id);
    else
        n[t].right = remove_at(n, n[t].right, id);
    update(n, t);
    return t;
}

void clampi_ranges_remove(clampi_ranges *r, uint32_t id) { r->root = remove_at(r->nodes, r->root, id); }

uint32_t clampi_ranges_find_containing(const clampi_ranges *r, uint32_t target, uint64_t start, uint64_t end) {
    const clampi_range_node *n = r->nodes;
    uint32_t t = r->root;
    /* Walk the nodes whose key is <= (target, start); any of them, or any node in the
     * left subtree of one of them, may contain the range if its end reaches `end`. */
    while (t != NONE) {
        int key_le = n[t].target != target ? n[t].target < target : n[t].start <= start;
        if (!key_le) {
            t = n[t].left;
            continue;
        }
        if (n[t].target == target && n[t].end >= end) return t;
        uint32_t l = n[t].left;
        if (l != NONE && pair_ge(n[l].max_target, n[l].max_end, target, end)) {
            /* Every key in l is <= (target, start): find one whose (target, end) is big enough. */
            for (t = l;;) {
                if (pair_ge(n[t].target, n[t].end, target, end)) return t;
                uint32_t ll = n[t].left;
                t = (ll != NONE && pair_ge(n[ll].max_target, n[ll].max_end, target, end)) ? ll : n[t].right;
            }
        }
        t = n[t].right;
    }
    return NONE;
}

static void collect(const clampi_range_node *n, uint32_t t, uint32_t target, uint64_t start, uint64_t end,
                    uint32_t *ids, size_t max, size_t *count) {
    while (t != NONE) {
        /* Nothing in this subtree ends after `start` at this target. */
        if (!pair_ge(n[t].max_target, n[t].max_end, target, start + 1)) return;
        int key_before_end = n[t].target != target ? n[t].target < target : n[t].start < end;
        if (!key_before_end) {
            t = n[t].left;
            continue;
        }
        if (n[t].target == target && n[t].end > start) {
            if (*count < max) ids[*count] = t;
            (*count)++;
        }
        collect(n, n[t].left, target, start, end, ids, max, count);
        t = n[t].right;
    }
}

size_t clampi_ranges_find_overlapping(const clampi_ranges *r, uint32_t target, uint64_t start, uint64_t end,
                                      uint32_t *ids, size_t max) {
    size_t count = 0;
    if (end > start) collect(r->nodes, r->root, target, start, end, ids, max, &count);
    return count;
}
