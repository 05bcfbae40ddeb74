/* The UCX progress service (see service.h). */
#define _GNU_SOURCE
#include "services/ucx/service.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* Busy passes before arming: a burst of operations (one message after another) is served
 * without an epoll round trip; a quiet process sleeps after this many empty passes. */
#define SPIN_PASSES 64
/* Safety net: the longest sleep, should an event ever be missed. */
#define MAX_SLEEP_MS 100

struct clampi_ucx_client {
    const clampi_ucx_client_ops *ops;
    void *arg;
    clampi_ucx_client *next;
};

typedef struct watched { /* a worker whose event fd is in the epoll set */
    ucp_worker_h worker;
    int fd;
    int quiet; /* its fd is in the set with no events (clampi_ucx_service_quiet) */
    clampi_ucx_client *owner;
} watched;

static struct {
    pthread_mutex_t lock; /* clients, watched; held by the thread during a pass */
    clampi_ucx_client *clients;
    watched *watched;
    int nwatched, capwatched;
    pthread_t thread;
    int running, stop;
    int epfd, wakefd;
    clampi_ucx_client *current; /* the client whose arm callback runs (thread only) */
    clampi_ucx_service_stats stats;
} svc = {.lock = PTHREAD_MUTEX_INITIALIZER, .epfd = -1, .wakefd = -1};
/* Serializes starting and stopping the thread (outside svc.lock, which the thread needs):
 * an add racing the removal of the last client waits for the old thread's join. */
static pthread_mutex_t lifecycle = PTHREAD_MUTEX_INITIALIZER;

void clampi_ucx_service_wake(void) {
    uint64_t one = 1;
    if (__atomic_load_n(&svc.wakefd, __ATOMIC_ACQUIRE) >= 0 && write(svc.wakefd, &one, sizeof one) < 0) {
        /* the counter is full: the thread is awake anyway */
    }
}

int clampi_ucx_service_arm(ucp_worker_h worker) {
    int i;
    for (i = 0; i < svc.nwatched && svc.watched[i].worker != worker; i++) {}
    if (i == svc.nwatched) {
        int fd = -1;
        if (ucp_worker_get_efd(worker, &fd) != UCS_OK || fd < 0) return 2;
        if (svc.nwatched == svc.capwatched) {
            int cap = svc.capwatched ? 2 * svc.capwatched : 16;
            watched *w = realloc(svc.watched, (size_t)cap * sizeof *w);
            if (!w) return 2;
            svc.watched = w;
            svc.capwatched = cap;
        }
        struct epoll_event ev = {.events = EPOLLIN};
        ev.data.fd = fd;
        if (epoll_ctl(svc.epfd, EPOLL_CTL_ADD, fd, &ev) != 0 && errno != EEXIST) return 2;
        svc.watched[svc.nwatched++] = (watched){worker, fd, 0, svc.current};
    } else if (svc.watched[i].quiet) {
        struct epoll_event ev = {.events = EPOLLIN};
        ev.data.fd = svc.watched[i].fd;
        if (epoll_ctl(svc.epfd, EPOLL_CTL_MOD, svc.watched[i].fd, &ev) != 0) return 2;
        svc.watched[i].quiet = 0;
    }
    ucs_status_t st = ucp_worker_arm(worker);
    return st == UCS_OK ? 0 : st == UCS_ERR_BUSY ? 1 : 2;
}

int clampi_ucx_service_quiet(ucp_worker_h worker) {
    for (int i = 0; i < svc.nwatched; i++)
        if (svc.watched[i].worker == worker) {
            if (!svc.watched[i].quiet) {
                struct epoll_event ev = {.events = 0};
                ev.data.fd = svc.watched[i].fd;
                epoll_ctl(svc.epfd, EPOLL_CTL_MOD, svc.watched[i].fd, &ev);
                svc.watched[i].quiet = 1;
            }
            break;
        }
    return 2; /* look again after a short sleep */
}

#define QUIET_NS 1000000u

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int clampi_ucx_poller_may_progress(clampi_ucx_poller *p) {
    if (__atomic_exchange_n(&p->polled, 0, __ATOMIC_RELAXED) || __atomic_load_n(&p->busy, __ATOMIC_RELAXED)) {
        p->seen_ns = mono_ns();
        p->quiet = 1;
        return 0;
    }
    if (p->quiet) {
        if (mono_ns() - p->seen_ns < QUIET_NS) return 0;
        p->quiet = 0; /* a whole millisecond without the application: take over */
        __atomic_store_n(&p->takeovers, p->takeovers + 1, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&p->serviced, p->serviced + 1, __ATOMIC_RELAXED);
    return 1;
}

unsigned clampi_ucx_poller_serviced(clampi_ucx_poller *p, ucp_worker_h worker) {
    __atomic_store_n(&p->service_busy, 1, __ATOMIC_RELAXED);
    unsigned n = ucp_worker_progress(worker);
    __atomic_store_n(&p->service_busy, 0, __ATOMIC_RELAXED);
    return n;
}

int clampi_ucx_poller_arm(clampi_ucx_poller *p, ucp_worker_h worker) {
    return p->quiet ? clampi_ucx_service_quiet(worker) : clampi_ucx_service_arm(worker);
}

/* Forgets the workers a removed client had watched (caller holds the lock). A worker's
 * fd leaves the epoll set by itself when the worker is destroyed; removing it here too
 * keeps a reused fd number from being mistaken for the old one. */
static void unwatch(clampi_ucx_client *c) {
    for (int i = 0; i < svc.nwatched;) {
        if (svc.watched[i].owner == c) {
            epoll_ctl(svc.epfd, EPOLL_CTL_DEL, svc.watched[i].fd, NULL);
            svc.watched[i] = svc.watched[--svc.nwatched];
        } else {
            i++;
        }
    }
}

static void *service_main(void *unused) {
    (void)unused;
    unsigned idle = 0;
    for (;;) {
        pthread_mutex_lock(&svc.lock);
        if (svc.stop) {
            pthread_mutex_unlock(&svc.lock);
            return NULL;
        }
        unsigned n = 0;
        for (clampi_ucx_client *c = svc.clients; c; c = c->next) n += c->ops->progress(c->arg);
        svc.stats.passes++;
        if (n || ++idle < SPIN_PASSES) {
            if (n) idle = 0;
            pthread_mutex_unlock(&svc.lock);
            continue;
        }
        int worst = 0;
        for (clampi_ucx_client *c = svc.clients; c && worst != 1; c = c->next) {
            svc.current = c;
            int r = c->ops->arm(c->arg);
            if (r > worst) worst = r;
        }
        svc.current = NULL;
        pthread_mutex_unlock(&svc.lock);
        if (worst == 1) continue; /* events arrived while arming */
        struct epoll_event ev[8];
        svc.stats.sleeps++;
        int k = epoll_wait(svc.epfd, ev, 8, worst == 2 ? 1 : MAX_SLEEP_MS);
        if (k > 0) svc.stats.wakeups++;
        for (int i = 0; i < k; i++) {
            if (ev[i].data.fd == svc.wakefd) {
                uint64_t v;
                if (read(svc.wakefd, &v, sizeof v) < 0) { /* nothing to drain */
                }
            }
        }
        idle = 0;
    }
}

int clampi_ucx_service_add(const clampi_ucx_client_ops *ops, void *arg, clampi_ucx_client **out) {
    clampi_ucx_client *c = calloc(1, sizeof *c);
    if (!c) return MPI_ERR_NO_MEM;
    c->ops = ops;
    c->arg = arg;
    pthread_mutex_lock(&lifecycle);
    pthread_mutex_lock(&svc.lock);
    if (svc.epfd < 0) {
        svc.epfd = epoll_create1(EPOLL_CLOEXEC);
        int wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN};
        ev.data.fd = wfd;
        if (svc.epfd < 0 || wfd < 0 || epoll_ctl(svc.epfd, EPOLL_CTL_ADD, wfd, &ev) != 0) {
            if (wfd >= 0) close(wfd);
            if (svc.epfd >= 0) close(svc.epfd);
            svc.epfd = -1;
            pthread_mutex_unlock(&svc.lock);
            pthread_mutex_unlock(&lifecycle);
            free(c);
            return MPI_ERR_OTHER;
        }
        __atomic_store_n(&svc.wakefd, wfd, __ATOMIC_RELEASE);
    }
    c->next = svc.clients;
    svc.clients = c;
    int rc = MPI_SUCCESS;
    if (!svc.running) {
        svc.stop = 0;
        if (pthread_create(&svc.thread, NULL, service_main, NULL) == 0) {
            svc.running = 1;
        } else {
            svc.clients = c->next;
            free(c);
            c = NULL;
            rc = MPI_ERR_OTHER;
        }
    }
    pthread_mutex_unlock(&svc.lock);
    pthread_mutex_unlock(&lifecycle);
    *out = c;
    return rc;
}

void clampi_ucx_service_remove(clampi_ucx_client *c) {
    if (!c) return;
    pthread_mutex_lock(&lifecycle);
    pthread_mutex_lock(&svc.lock);
    for (clampi_ucx_client **p = &svc.clients; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    unwatch(c);
    int last = svc.clients == NULL && svc.running;
    if (last) svc.stop = 1;
    pthread_mutex_unlock(&svc.lock);
    free(c);
    if (last) {
        clampi_ucx_service_wake();
        pthread_join(svc.thread, NULL);
        pthread_mutex_lock(&svc.lock);
        svc.running = 0;
        pthread_mutex_unlock(&svc.lock);
    }
    pthread_mutex_unlock(&lifecycle);
}

void clampi_ucx_service_get_stats(clampi_ucx_service_stats *s) {
    pthread_mutex_lock(&svc.lock);
    *s = svc.stats;
    pthread_mutex_unlock(&svc.lock);
}
