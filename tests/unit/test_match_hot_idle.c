/* The hot-caching thread backs off while both queues are empty: in 300 ms with nothing
 * queued, a 50 us period would give about 6,000 reads; backed off to 64 periods (3.2 ms)
 * at most about 100. The bound is an upper one, so a slow or loaded machine (fewer
 * wake-ups) never fails it, and it grows with the time the sleep really took. Then, with an entry queued, the thread reads the queues again:
 * at least one more read within 2 s (a deadline a loaded machine meets too). */
#include <stdio.h>
#include <time.h>

#include "check.h"
#include "match/match.h"
#include "match_hot_util.h"

int main(void) {
    clampi_match_config c;
    clampi_match_config_default(&c);
    c.kind = CLAMPI_MATCH_LLA_HOT;
    c.hot_period_us = 50;
    c.hot_by = CLAMPI_MATCH_HOT_THREAD;
    clampi_matcher *m;
    CHECK(clampi_matcher_create(&c, &m) == 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sleep_ms(300);
    unsigned long long idle = touches(m);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* the sleep may last longer on a loaded machine: the bound follows the time it took
     * (one read per ms is three times the backed-off rate, a twentieth of the unbacked) */
    const double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("hot idle: %llu reads in %.0f ms with empty queues\n", idle, ms);
    CHECK((double)idle < 100 + ms);
    uintptr_t got;
    clampi_match_key k = {1, 0, 0};
    CHECK(clampi_matcher_post(m, k, 1, &got) == 0);
    unsigned long long before = touches(m);
    for (int i = 0; i < 200 && touches(m) == before; i++) sleep_ms(10);
    printf("hot busy: reads resumed (%llu -> %llu)\n", before, touches(m));
    CHECK(touches(m) > before);
    CHECK(clampi_matcher_cancel(m, 1) == 1);
    clampi_matcher_destroy(m);
    printf("hot idle back-off: ok\n");
    return 0;
}
