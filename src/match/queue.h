/* One ordered matching queue behind a small table of operations; the matcher holds two
 * (posted, unexpected). Implementations: queue_list.c, queue_lla.c, queue_bins.c.
 * Not thread-safe: the matcher's lock covers them. */
#ifndef CLAMPI_MATCH_QUEUE_H
#define CLAMPI_MATCH_QUEUE_H
#include "match/match.h"

typedef struct clampi_mq clampi_mq;
typedef struct clampi_mq_ops {
    /* Appends at the tail. 0, or -1 out of memory. */
    int (*push)(clampi_mq *q, clampi_match_key key, uintptr_t cookie);
    /* First entry (in push order) matching key, both sides may hold wildcards; 1 and its
     * cookie (removed if remove), or 0. *depth = entries compared before it (or all). */
    int (*find)(clampi_mq *q, clampi_match_key key, int remove, uintptr_t *cookie, size_t *depth);
    /* Removes the entry holding cookie: 1, or 0 if absent. */
    int (*remove_cookie)(clampi_mq *q, uintptr_t cookie);
    /* Removes the first entry in order: 1 and its cookie, or 0 if empty. */
    int (*pop)(clampi_mq *q, uintptr_t *cookie);
    /* Reads every key (hot caching); returns something derived from them. */
    uint64_t (*touch)(clampi_mq *q);
    void (*destroy)(clampi_mq *q);
} clampi_mq_ops;

struct clampi_mq {
    const clampi_mq_ops *ops;
    size_t len;
};

clampi_mq *clampi_mq_list_create(void);
clampi_mq *clampi_mq_lla_create(unsigned width, int simd);
/* The key compare an lla queue chose: 0 scalar, 1 SSE2, 2 AVX2 (tests). */
int clampi_mq_lla_simd(const clampi_mq *q);
clampi_mq *clampi_mq_bins_create(unsigned nbins);

/* Context id of a hole (never a real context, never matches). */
#define CLAMPI_MQ_HOLE 0xffffffffu

/* The one key comparison: contexts equal, sources and tags equal or either a wildcard. */
static inline int clampi_mq_key_match(clampi_match_key e, clampi_match_key q) {
    return e.context == q.context &&
           (e.source == q.source || e.source == CLAMPI_MATCH_ANY_SOURCE || q.source == CLAMPI_MATCH_ANY_SOURCE) &&
           (e.tag == q.tag || e.tag == CLAMPI_MATCH_ANY_TAG || q.tag == CLAMPI_MATCH_ANY_TAG);
}
#endif
