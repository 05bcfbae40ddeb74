/* Interposed calls for flush_count (flush_probe.h). The executable is linked with
 * -rdynamic, so the MPI library's and UCX's calls to these names resolve here; each counts
 * and forwards to the next definition (dlsym RTLD_NEXT). Lock sharing: every lock word any
 * thread takes is entered in a table with the set of threads that took it; a flush's lock is
 * "shared" when a thread other than the flusher took the same word at any time. */
#define _GNU_SOURCE
#include "flush_probe.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucp/api/ucp.h>

#define MAX_THREADS 64
#define FLUSH_WORDS 64 /* distinct lock words / workers remembered per flush */
#define MAP_CAP 4096

typedef struct {
    long flushes, locks, progress, ep_flushes, workers, shared;
    const void *lock_word[FLUSH_WORDS]; /* this thread's flush-time lock words (for sharing) */
    int nwords;
    const void *worker[FLUSH_WORDS]; /* workers progressed in the current flush */
    int nworkers;
    int in_flush;
} counters;

static counters per_thread[MAX_THREADS];
static int nthreads_seen;
static __thread int my_index = -1;
static struct {
    uintptr_t key;
    uint64_t threads;
} map[MAP_CAP];

static counters *me(void) {
    if (my_index < 0) my_index = __atomic_fetch_add(&nthreads_seen, 1, __ATOMIC_RELAXED) % MAX_THREADS;
    return &per_thread[my_index];
}

static void note_lock(const void *word) {
    counters *c = me();
    uintptr_t k = (uintptr_t)word;
    for (uint32_t i = (uint32_t)(k >> 4) % MAP_CAP, n = 0; n < MAP_CAP; i = (i + 1) % MAP_CAP, n++) {
        uintptr_t cur = __atomic_load_n(&map[i].key, __ATOMIC_ACQUIRE);
        if (cur == 0 && __atomic_compare_exchange_n(&map[i].key, &cur, k, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            cur = k;
        if (cur == k) {
            __atomic_fetch_or(&map[i].threads, 1ull << my_index, __ATOMIC_RELAXED);
            break;
        }
    }
    if (!c->in_flush) return;
    c->locks++;
    for (int i = 0; i < c->nwords; i++)
        if (c->lock_word[i] == word) return;
    if (c->nwords < FLUSH_WORDS) c->lock_word[c->nwords++] = word;
}

#define NEXT(ret, name, ...)                \
    static ret (*next_##name)(__VA_ARGS__); \
    if (!next_##name) next_##name = dlsym(RTLD_NEXT, #name)

int pthread_mutex_lock(pthread_mutex_t *m) {
    NEXT(int, pthread_mutex_lock, pthread_mutex_t *);
    note_lock(m);
    return next_pthread_mutex_lock(m);
}
int pthread_mutex_trylock(pthread_mutex_t *m) {
    NEXT(int, pthread_mutex_trylock, pthread_mutex_t *);
    int rc = next_pthread_mutex_trylock(m);
    if (rc == 0) note_lock(m);
    return rc;
}
int pthread_spin_lock(pthread_spinlock_t *s) {
    NEXT(int, pthread_spin_lock, pthread_spinlock_t *);
    note_lock((const void *)s);
    return next_pthread_spin_lock(s);
}
int pthread_spin_trylock(pthread_spinlock_t *s) {
    NEXT(int, pthread_spin_trylock, pthread_spinlock_t *);
    int rc = next_pthread_spin_trylock(s);
    if (rc == 0) note_lock((const void *)s);
    return rc;
}

unsigned ucp_worker_progress(ucp_worker_h w) {
    NEXT(unsigned, ucp_worker_progress, ucp_worker_h);
    counters *c = me();
    if (c->in_flush) {
        c->progress++;
        int seen = 0;
        for (int i = 0; i < c->nworkers && !seen; i++) seen = c->worker[i] == (const void *)w;
        if (!seen && c->nworkers < FLUSH_WORDS) c->worker[c->nworkers++] = w;
    }
    return next_ucp_worker_progress(w);
}
ucs_status_ptr_t ucp_ep_flush_nbx(ucp_ep_h ep, const ucp_request_param_t *p) {
    NEXT(ucs_status_ptr_t, ucp_ep_flush_nbx, ucp_ep_h, const ucp_request_param_t *);
    counters *c = me();
    if (c->in_flush) c->ep_flushes++;
    return next_ucp_ep_flush_nbx(ep, p);
}
ucs_status_ptr_t ucp_worker_flush_nbx(ucp_worker_h w, const ucp_request_param_t *p) {
    NEXT(ucs_status_ptr_t, ucp_worker_flush_nbx, ucp_worker_h, const ucp_request_param_t *);
    counters *c = me();
    if (c->in_flush) c->ep_flushes++;
    return next_ucp_worker_flush_nbx(w, p);
}

void fp_enter(void) {
    counters *c = me();
    c->in_flush = 1;
    c->nworkers = 0;
}
void fp_leave(void) {
    counters *c = me();
    c->in_flush = 0;
    c->flushes++;
    c->workers += c->nworkers;
}

void fp_reset(void) {
    for (int i = 0; i < MAX_THREADS; i++) {
        int keep = per_thread[i].in_flush;
        memset(&per_thread[i], 0, sizeof per_thread[i]);
        per_thread[i].in_flush = keep;
    }
    memset(map, 0, sizeof map);
}

static uint64_t threads_of(const void *word) {
    uintptr_t k = (uintptr_t)word;
    for (uint32_t i = (uint32_t)(k >> 4) % MAP_CAP, n = 0; n < MAP_CAP; i = (i + 1) % MAP_CAP, n++) {
        if (map[i].key == k) return map[i].threads;
        if (map[i].key == 0) break;
    }
    return 0;
}

void fp_report(long flushes) {
    long locks = 0, progress = 0, epf = 0, workers = 0, shared = 0, words = 0, flushers = 0;
    for (int t = 0; t < MAX_THREADS; t++) {
        counters *c = &per_thread[t];
        if (!c->flushes) continue;
        flushers++;
        locks += c->locks, progress += c->progress, epf += c->ep_flushes, workers += c->workers;
        words += c->nwords;
        for (int i = 0; i < c->nwords; i++)
            if (threads_of(c->lock_word[i]) & ~(1ull << t)) shared++;
    }
    double f = flushes > 0 ? (double)flushes : 1;
    printf(" locks_per_flush=%.2f lock_words=%.2f shared_lock_words=%.2f workers_per_flush=%.2f "
           "progress_per_flush=%.2f ep_flushes_per_flush=%.2f",
           locks / f, flushers ? (double)words / flushers : 0, flushers ? (double)shared / flushers : 0, workers / f,
           progress / f, epf / f);
}
