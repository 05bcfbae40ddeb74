/* For the hot-caching tests: a sleep, and how often a matcher's queues were read. */
#ifndef CLAMPI_TESTS_MATCH_HOT_UTIL_H
#define CLAMPI_TESTS_MATCH_HOT_UTIL_H
#include <time.h>

#include "match/match.h"

static inline void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline unsigned long long touches(clampi_matcher *m) {
    clampi_match_stats st;
    clampi_matcher_stats(m, &st);
    return (unsigned long long)st.touches;
}
#endif
