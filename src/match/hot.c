#include <errno.h>
#include <time.h>

#include "match/hot.h"
#include "match/matcher_internal.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* While both queues are empty the thread's period doubles, up to IDLE_BACKOFF periods: a
 * thread waking every 50 us for nothing takes a core that a rank spinning in MPI may need
 * (a node whose CPUs other nodes' ranks share: emulated nodes on one host, a VM). A queue
 * worth keeping hot is long-lived, so the first read after it fills may come that late. */
#define IDLE_BACKOFF 64

static void *hot_thread(void *arg) {
    clampi_matcher *m = arg;
    unsigned periods = 1;
    pthread_mutex_lock(&m->stop_lock);
    while (!m->stop) {
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        uint64_t ns = (uint64_t)dl.tv_nsec + (uint64_t)m->cfg.hot_period_us * 1000u * periods;
        dl.tv_sec += (time_t)(ns / 1000000000u);
        dl.tv_nsec = (long)(ns % 1000000000u);
        int r = pthread_cond_timedwait(&m->stop_cond, &m->stop_lock, &dl);
        if (m->stop) break;
        if (r == ETIMEDOUT) {
            pthread_mutex_unlock(&m->stop_lock);
            size_t entries = clampi_matcher_touch(m);
            periods = entries ? 1 : periods < IDLE_BACKOFF ? 2 * periods : IDLE_BACKOFF;
            pthread_mutex_lock(&m->stop_lock);
        }
    }
    pthread_mutex_unlock(&m->stop_lock);
    return NULL;
}

int clampi_hot_start(clampi_matcher *m) {
    pthread_mutex_init(&m->stop_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&m->stop_cond, &ca);
    pthread_condattr_destroy(&ca);
    m->stop = 0;
    atomic_store(&m->last_touch_ns, now_ns());
    if (m->cfg.hot_by != CLAMPI_MATCH_HOT_THREAD) return 0;
    if (pthread_create(&m->thread, NULL, hot_thread, m) != 0) return -1;
    m->has_thread = 1;
    return 0;
}

void clampi_hot_stop(clampi_matcher *m) {
    if (m->has_thread) {
        pthread_mutex_lock(&m->stop_lock);
        m->stop = 1;
        pthread_cond_signal(&m->stop_cond);
        pthread_mutex_unlock(&m->stop_lock);
        pthread_join(m->thread, NULL);
        m->has_thread = 0;
    }
    pthread_cond_destroy(&m->stop_cond);
    pthread_mutex_destroy(&m->stop_lock);
}

void clampi_matcher_progress(clampi_matcher *m) {
    if (!m->hot || m->cfg.hot_by != CLAMPI_MATCH_HOT_PROGRESS) return;
    uint64_t now = now_ns(), last = atomic_load_explicit(&m->last_touch_ns, memory_order_relaxed);
    if (now - last < (uint64_t)m->cfg.hot_period_us * 1000u) return;
    if (!atomic_compare_exchange_strong(&m->last_touch_ns, &last, now)) return; /* another thread does it */
    clampi_matcher_touch(m);
}
