#include <errno.h>
#include <time.h>

#include "match/hot.h"
#include "match/matcher_internal.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* While both queues are empty a matcher's period doubles, up to IDLE_BACKOFF periods: a
 * thread waking every 50 us for nothing takes a core that a rank spinning in MPI may need
 * (a node whose CPUs other nodes' ranks share: emulated nodes on one host, a VM). A queue
 * worth keeping hot is long-lived, so the first read after it fills may come that late. */
#define IDLE_BACKOFF 64

/* The process's THREAD matchers and the one thread that reads them. The thread runs
 * while the list is not empty and ends when it empties; the next matcher starts it again
 * (in a forked child, which has no thread, the child's next matcher). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake, touched; /* wake: the list changed; touched: a read ended */
static pthread_once_t conds_once = PTHREAD_ONCE_INIT;
static clampi_matcher *list;
static const clampi_matcher *touching; /* read outside the lock right now */
static int running;                    /* the thread serves the list */
static uint64_t sleeping_until;        /* the thread's next wake-up, while it waits */

/* fork: the child has no thread; its matchers are read again once it makes one */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void) {
    pthread_mutex_unlock(&lock);
    running = 0;
    touching = NULL;
    sleeping_until = 0;
}

static void conds_init(void) {
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &ca);
    pthread_cond_init(&touched, &ca);
    pthread_condattr_destroy(&ca);
}

static uint64_t period_ns(const clampi_matcher *m) { return (uint64_t)m->cfg.hot_period_us * 1000u * m->hot_periods; }

static void *hot_thread(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    while (list) {
        uint64_t now = now_ns(), due = UINT64_MAX;
        clampi_matcher *m = NULL;
        for (clampi_matcher *p = list; p; p = p->hot_next)
            if (p->hot_due_ns < due) due = (m = p)->hot_due_ns;
        if (due > now) {
            struct timespec dl = {(time_t)(due / 1000000000u), (long)(due % 1000000000u)};
            sleeping_until = due;
            pthread_cond_timedwait(&wake, &lock, &dl);
            sleeping_until = 0;
            continue; /* the list may have changed */
        }
        touching = m;
        pthread_mutex_unlock(&lock);
        size_t entries = clampi_matcher_touch(m);
        pthread_mutex_lock(&lock);
        touching = NULL;
        m->hot_periods = entries ? 1 : m->hot_periods < IDLE_BACKOFF ? 2 * m->hot_periods : IDLE_BACKOFF;
        m->hot_due_ns = now_ns() + period_ns(m);
        pthread_cond_broadcast(&touched);
    }
    running = 0;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int clampi_hot_start(clampi_matcher *m) {
    atomic_store(&m->last_touch_ns, now_ns());
    if (m->cfg.hot_by != CLAMPI_MATCH_HOT_THREAD) return 0;
    pthread_once(&conds_once, conds_init);
    pthread_mutex_lock(&lock);
    m->hot_periods = 1;
    m->hot_due_ns = now_ns() + period_ns(m);
    m->hot_next = list;
    list = m;
    m->hot_listed = 1;
    int err = 0;
    if (!running) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&a, 256 << 10); /* it only reads queues */
        err = pthread_create(&t, &a, hot_thread, NULL);
        pthread_attr_destroy(&a);
        if (err == 0) running = 1;
    }
    if (err != 0) {
        list = m->hot_next;
        m->hot_listed = 0;
    } else if (sleeping_until > m->hot_due_ns) {
        pthread_cond_signal(&wake); /* due before the thread would wake */
    }
    pthread_mutex_unlock(&lock);
    return err ? -1 : 0;
}

void clampi_hot_stop(clampi_matcher *m) {
    if (!m->hot_listed) return;
    pthread_mutex_lock(&lock);
    for (clampi_matcher **p = &list; *p; p = &(*p)->hot_next)
        if (*p == m) {
            *p = m->hot_next;
            break;
        }
    m->hot_listed = 0;
    /* no wake-up: the thread finds the list changed at its next deadline (an empty list
     * ends it then) */
    while (touching == m) pthread_cond_wait(&touched, &lock);
    pthread_mutex_unlock(&lock);
}

void clampi_matcher_progress(clampi_matcher *m) {
    if (!m->hot || m->cfg.hot_by != CLAMPI_MATCH_HOT_PROGRESS) return;
    uint64_t now = now_ns(), last = atomic_load_explicit(&m->last_touch_ns, memory_order_relaxed);
    if (now - last < (uint64_t)m->cfg.hot_period_us * 1000u) return;
    if (!atomic_compare_exchange_strong(&m->last_touch_ns, &last, now)) return; /* another thread does it */
    clampi_matcher_touch(m);
}
