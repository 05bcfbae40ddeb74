/* Hot caching by a helper thread takes one thread per process, whatever the number of
 * matchers (communicators): 64 matchers run beside as many threads as one does, every one of
 * them is read, and the thread ends once the last matcher is gone. Then 2,000 matchers are
 * made and destroyed (a 1 us period, an entry queued) while the thread reads them: a matcher
 * destroyed while it is being read waits for the read (AddressSanitizer and ThreadSanitizer
 * builds check that nothing touches freed memory and that nothing races). Counts only: the
 * deadlines are generous, for a loaded machine. */
#include <dirent.h>
#include <stdio.h>

#include "check.h"
#include "match/match.h"
#include "match_hot_util.h"

#define MANY 64

static int threads_now(void) {
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

int main(void) {
    clampi_match_config c;
    clampi_match_config_default(&c);
    c.kind = CLAMPI_MATCH_LLA_HOT;
    c.hot_period_us = 50;
    c.hot_by = CLAMPI_MATCH_HOT_THREAD;
    /* counted from the first matcher on: a sanitizer's runtime starts a thread of its own
     * when the process makes its first */
    static clampi_matcher *m[MANY];
    uintptr_t got;
    int base = threads_now(), one = 0;
    for (int i = 0; i < MANY; i++) {
        CHECK(clampi_matcher_create(&c, &m[i]) == 0);
        CHECK(clampi_matcher_post(m[i], (clampi_match_key){1, 0, i}, (uintptr_t)(i + 1), &got) == 0);
        if (i == 0) one = threads_now();
    }
    int with = threads_now();
    printf("hot one thread: %d threads before, %d with 1 matcher, %d with %d\n", base, one, with, MANY);
    CHECK(one > base && with == one);
    int unread = MANY;
    for (int t = 0; t < 1000 && unread; t++) {
        unread = 0;
        for (int i = 0; i < MANY; i++) unread += touches(m[i]) == 0;
        if (unread) sleep_ms(10);
    }
    printf("hot one thread: %d of %d matchers never read\n", unread, MANY);
    CHECK(unread == 0);
    for (int i = 0; i < MANY; i++) {
        CHECK(clampi_matcher_cancel(m[i], (uintptr_t)(i + 1)) == 1);
        clampi_matcher_destroy(m[i]);
    }
    int after = threads_now();
    for (int t = 0; t < 1000 && after != with - 1; t++) {
        sleep_ms(10);
        after = threads_now();
    }
    printf("hot one thread: %d threads after the last matcher\n", after);
    CHECK(after == with - 1);

    c.hot_period_us = 1;
    for (int i = 0; i < 2000; i++) {
        clampi_matcher *x;
        CHECK(clampi_matcher_create(&c, &x) == 0);
        CHECK(clampi_matcher_post(x, (clampi_match_key){1, 0, 0}, 7, &got) == 0);
        if (i % 2) sleep_ms(0); /* a yield: the thread may be reading x now */
        CHECK(clampi_matcher_cancel(x, 7) == 1);
        clampi_matcher_destroy(x);
    }
    printf("hot one thread: ok\n");
    return 0;
}
