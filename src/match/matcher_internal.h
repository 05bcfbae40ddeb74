/* The matcher's fields, shared by matcher.c and hot.c only. */
#ifndef CLAMPI_MATCH_MATCHER_INTERNAL_H
#define CLAMPI_MATCH_MATCHER_INTERNAL_H
#include <pthread.h>
#include <stdatomic.h>

#include "match/queue.h"

struct clampi_matcher {
    pthread_mutex_t lock; /* covers both queues and st */
    clampi_match_config cfg;
    clampi_mq *posted, *unexpected;
    clampi_match_stats st;
    _Atomic size_t last_depth;
    /* hot caching */
    int hot;
    _Atomic uint64_t sink, touches, last_touch_ns;
    /* THREAD: on the process's hot list (hot.c's lock covers these) */
    struct clampi_matcher *hot_next;
    uint64_t hot_due_ns;
    unsigned hot_periods;
    int hot_listed;
};
#endif
