/* "bins": entries binned by a hash of (context, source), entries with a wildcard source in
 * one list of their own, every entry stamped with a sequence number at push. A search
 * with a specific source looks at one bin and at the wildcard list (only at wildcard
 * entries older than the bin's match) and takes the older match, so MPI's order holds
 * across bins; a search with MPI_ANY_SOURCE walks every bin the same way. This is the
 * binned/hashed matching of Flajslik, Dinan and Underwood, "Mitigating MPI message
 * matching misery" (ISC 2016), reduced to source bins; tags are compared in the bin. */
#include <stdlib.h>

#include "match/queue.h"

typedef struct node {
    struct node *prev, *next;
    uint64_t seq;
    clampi_match_key key;
    uintptr_t cookie;
} node;

typedef struct {
    node *head, *tail;
} chain;

typedef struct {
    clampi_mq base;
    uint64_t next_seq;
    unsigned mask;
    chain wild; /* entries whose source is CLAMPI_MATCH_ANY_SOURCE */
    chain bins[];
} bins_q;

static chain *bin_of(bins_q *b, clampi_match_key k) {
    if (k.source == CLAMPI_MATCH_ANY_SOURCE) return &b->wild;
    uint32_t h = (k.context * 0x9e3779b1u) ^ ((uint32_t)k.source * 0x85ebca6bu);
    h ^= h >> 15;
    return &b->bins[h & b->mask];
}

static void chain_unlink(bins_q *b, chain *c, node *n) {
    if (n->prev)
        n->prev->next = n->next;
    else
        c->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        c->tail = n->prev;
    b->base.len--;
    free(n);
}

static int bins_push(clampi_mq *q, clampi_match_key key, uintptr_t cookie) {
    bins_q *b = (bins_q *)q;
    node *n = malloc(sizeof *n);
    if (!n) return -1;
    chain *c = bin_of(b, key);
    n->seq = b->next_seq++;
    n->key = key;
    n->cookie = cookie;
    n->next = NULL;
    n->prev = c->tail;
    if (c->tail)
        c->tail->next = n;
    else
        c->head = n;
    c->tail = n;
    q->len++;
    return 0;
}

/* First match in c older than *best (updates *best, *best_chain); counts comparisons. */
static void chain_search(chain *c, clampi_match_key key, node **best, chain **best_chain, size_t *d) {
    for (node *n = c->head; n && (!*best || n->seq < (*best)->seq); n = n->next) {
        ++*d;
        if (clampi_mq_key_match(n->key, key)) {
            *best = n;
            *best_chain = c;
            return;
        }
    }
}

static int bins_find(clampi_mq *q, clampi_match_key key, int remove, uintptr_t *cookie, size_t *depth) {
    bins_q *b = (bins_q *)q;
    node *best = NULL;
    chain *bc = NULL;
    size_t d = 0;
    if (key.source != CLAMPI_MATCH_ANY_SOURCE) {
        chain_search(bin_of(b, key), key, &best, &bc, &d);
    } else {
        for (unsigned i = 0; i <= b->mask; i++) chain_search(&b->bins[i], key, &best, &bc, &d);
    }
    chain_search(&b->wild, key, &best, &bc, &d);
    if (!best) {
        *depth = d;
        return 0;
    }
    *depth = d ? d - 1 : 0;
    *cookie = best->cookie;
    if (remove) chain_unlink(b, bc, best);
    return 1;
}

static int bins_remove_cookie(clampi_mq *q, uintptr_t cookie) {
    bins_q *b = (bins_q *)q;
    for (unsigned i = 0; i <= b->mask + 1; i++) {
        chain *c = i <= b->mask ? &b->bins[i] : &b->wild;
        for (node *n = c->head; n; n = n->next)
            if (n->cookie == cookie) {
                chain_unlink(b, c, n);
                return 1;
            }
    }
    return 0;
}

static int bins_pop(clampi_mq *q, uintptr_t *cookie) {
    bins_q *b = (bins_q *)q;
    chain *oldest = b->wild.head ? &b->wild : NULL;
    for (unsigned i = 0; i <= b->mask; i++)
        if (b->bins[i].head && (!oldest || b->bins[i].head->seq < oldest->head->seq)) oldest = &b->bins[i];
    if (!oldest) return 0;
    *cookie = oldest->head->cookie;
    chain_unlink(b, oldest, oldest->head);
    return 1;
}

static uint64_t bins_touch(clampi_mq *q) {
    bins_q *b = (bins_q *)q;
    uint64_t sum = 0;
    for (unsigned i = 0; i <= b->mask + 1; i++)
        for (node *n = (i <= b->mask ? b->bins[i] : b->wild).head; n; n = n->next) sum += (uint32_t)n->key.tag;
    return sum;
}

static void bins_destroy(clampi_mq *q) {
    uintptr_t c;
    while (bins_pop(q, &c)) {}
    free(q);
}

static const clampi_mq_ops bins_ops = {bins_push, bins_find, bins_remove_cookie, bins_pop, bins_touch, bins_destroy};

clampi_mq *clampi_mq_bins_create(unsigned nbins) {
    if (nbins < 1 || nbins > (1u << 20)) return NULL;
    unsigned n = 1;
    while (n < nbins) n <<= 1;
    bins_q *b = calloc(1, sizeof *b + n * sizeof(chain));
    if (!b) return NULL;
    b->base.ops = &bins_ops;
    b->mask = n - 1;
    return &b->base;
}
