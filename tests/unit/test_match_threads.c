/* Matching engine under threads (MPI_THREAD_MULTIPLE use; run under TSan: label tsan).
 * T threads share one matcher; thread i sends N messages as source i (arrivals in order,
 * tags cycling) and receives N messages from source (i+1) % T with MPI_ANY_TAG receives
 * posted in order, so receive n must get that source's message n (non-overtaking), whether
 * the message or the receive came first. Probes and progress run alongside. Every message must be
 * received exactly once, every receive filled, the order kept, queues empty at the end. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "match/match.h"

#define N 3000
#define T 4
typedef struct {
    _Atomic long msg; /* filled message id + 1 */
} slot;

static clampi_matcher *M;
static slot slots[T][N];
static long msgs[T][N]; /* message ids; cookie = &msgs[s][n] */

static void deliver(uintptr_t recv_cookie, uintptr_t msg_cookie) {
    slot *s = (slot *)recv_cookie;
    long id = *(long *)msg_cookie;
    long prev = atomic_exchange(&s->msg, id + 1);
    CHECK(prev == 0);
}

static void *worker(void *arg) {
    int me = (int)(intptr_t)arg, from = (me + 1) % T;
    for (int n = 0; n < N; n++) {
        uintptr_t got;
        /* send one */
        msgs[me][n] = n;
        clampi_match_key k = {7, me, n % 5};
        if (clampi_matcher_arrive(M, k, (uintptr_t)&msgs[me][n], &got) == 1) deliver(got, (uintptr_t)&msgs[me][n]);
        /* post one */
        clampi_match_key r = {7, from, CLAMPI_MATCH_ANY_TAG};
        if (clampi_matcher_post(M, r, (uintptr_t)&slots[me][n], &got) == 1) deliver((uintptr_t)&slots[me][n], got);
        if (n % 97 == 0) {
            clampi_match_key p = {7, CLAMPI_MATCH_ANY_SOURCE, CLAMPI_MATCH_ANY_TAG};
            clampi_matcher_probe(M, p, 0, &got);
            clampi_matcher_progress(M);
        }
    }
    return NULL;
}

int main(void) {
    for (int k = 0; k < CLAMPI_MATCH_NKINDS; k++) {
        clampi_match_config c;
        clampi_match_config_default(&c);
        c.kind = (clampi_match_kind)k;
        c.hot_period_us = 10;
        CHECK(clampi_matcher_create(&c, &M) == 0);
        for (int i = 0; i < T; i++)
            for (int n = 0; n < N; n++) atomic_store(&slots[i][n].msg, 0);
        pthread_t th[T];
        for (int i = 0; i < T; i++) CHECK(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) == 0);
        for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
        for (int i = 0; i < T; i++)
            for (int n = 0; n < N; n++) CHECK_EQ_INT(atomic_load(&slots[i][n].msg), n + 1); /* in order */
        clampi_match_stats st;
        clampi_matcher_stats(M, &st);
        CHECK_EQ_INT(st.posted_len, 0);
        CHECK_EQ_INT(st.unexpected_len, 0);
        CHECK_EQ_INT(st.matches, T * N);
        printf("match threads %-7s: %d threads x %d messages in order, touches %llu\n", clampi_match_kind_name(c.kind),
               T, N, (unsigned long long)st.touches);
        clampi_matcher_destroy(M);
    }
    return 0;
}
