/* The UCX progress service (see service.h). */
#define _GNU_SOURCE
#include "services/ucx/service.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/options.h"
#include "common/progress_hook.h"
#include "topo/node.h"

/* Busy passes before arming: a burst of operations (one message after another) is served
 * without an epoll round trip; a quiet process sleeps after this many empty passes. */
#define SPIN_PASSES 64
/* Safety net: the longest sleep, should an event ever be missed. */
#define MAX_SLEEP_MS 100
/* The longest sleep while MPI's progress engine may run passes (drop_hook_when_idle). */
#define HOOK_CHECK_MS 2

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
    int hooked;                 /* 1: MPI's progress engine can run clampi_ucx_service_progress_here; 0: only
                   clampi's spin waits and the MPI's UCX polls (mpi_polls.h) do; -1: nothing does
                   (CLAMPI_PROGRESS_FROM_MPI=false) */
    int in_hook;                /* it is among MPI's progress callbacks (1) or runs after the MPI's UCX
                                   polls (2) now (thread only, while work comes) */
    _Atomic uint64_t driven_ns; /* when an application thread last ran a pass */
    int own_core;               /* the thread has a core of its own (topo/node.h) */
    clampi_ucx_service_stats stats;
} svc = {.lock = PTHREAD_MUTEX_INITIALIZER, .epfd = -1, .wakefd = -1};
/* Serializes starting and stopping the thread (outside svc.lock, which the thread needs):
 * an add racing the removal of the last client waits for the old thread's join. */
static pthread_mutex_t lifecycle = PTHREAD_MUTEX_INITIALIZER;

#define QUIET_NS 1000000u

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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

/* Watched worker i's fd stays in the epoll set but wakes nobody. */
static void quiet_watched(int i) {
    if (svc.watched[i].quiet) return;
    struct epoll_event ev = {.events = 0};
    ev.data.fd = svc.watched[i].fd;
    epoll_ctl(svc.epfd, EPOLL_CTL_MOD, svc.watched[i].fd, &ev);
    svc.watched[i].quiet = 1;
}

int clampi_ucx_service_quiet(ucp_worker_h worker) {
    for (int i = 0; i < svc.nwatched; i++)
        if (svc.watched[i].worker == worker) {
            quiet_watched(i);
            break;
        }
    return 2; /* look again after a short sleep */
}

/* Bound workers and their pollers: a slot is reused only for a worker of the same
 * address (a destroyed worker's slot is emptied first). */
static struct {
    ucp_worker_h worker;
    clampi_ucx_poller *poller;
} bound[CLAMPI_UCX_BOUND_MAX];
static pthread_mutex_t bound_lock = PTHREAD_MUTEX_INITIALIZER;

void clampi_ucx_poller_bind(ucp_worker_h worker, clampi_ucx_poller *p) {
    pthread_mutex_lock(&bound_lock);
    int slot = -1;
    for (int i = 0; i < CLAMPI_UCX_BOUND_MAX; i++) {
        ucp_worker_h w = __atomic_load_n(&bound[i].worker, __ATOMIC_RELAXED);
        if (w == worker) slot = i;
        if (!w && slot < 0 && p) slot = i;
    }
    if (slot >= 0) {
        if (p) { /* the poller first: a reader that finds the worker finds its poller */
            __atomic_store_n(&bound[slot].poller, p, __ATOMIC_RELAXED);
            __atomic_store_n(&bound[slot].worker, worker, __ATOMIC_RELEASE);
        } else {
            __atomic_store_n(&bound[slot].worker, NULL, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&bound_lock);
}

clampi_ucx_poller *clampi_ucx_poller_of(ucp_worker_h worker) {
    if (!worker) return NULL; /* empty slots hold NULL */
    for (int i = 0; i < CLAMPI_UCX_BOUND_MAX; i++)
        if (__atomic_load_n(&bound[i].worker, __ATOMIC_ACQUIRE) == worker)
            return __atomic_load_n(&bound[i].poller, __ATOMIC_RELAXED);
    return NULL;
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
    unsigned n = clampi_ucx_progress(worker);
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

/* Empties the wake-up counter if it is among the k events. */
static void drain_wake(const struct epoll_event *ev, int k) {
    for (int i = 0; i < k; i++)
        if (ev[i].data.fd == svc.wakefd) {
            uint64_t v;
            if (read(svc.wakefd, &v, sizeof v) < 0) { /* nothing to drain */
            }
        }
}

/* One pass over every client (svc.lock held). */
static unsigned pass(void) {
    unsigned n = 0;
    for (clampi_ucx_client *c = svc.clients; c; c = c->next) n += c->ops->progress(c->arg);
    svc.stats.passes++;
    return n;
}

/* How often a waiting thread runs a pass. MPI's progress engine may poll every 40 ns (a
 * shared-memory ping-pong) or every few microseconds (TCP); a pass costs more than such a
 * poll (every transport of every worker: over TCP an epoll_wait system call), and a clock
 * read almost as much. So passes run only while the workers have work: on every call while
 * the last pass here found work, at most every DRIVE_HOT_NS while a pass (anyone's) found
 * work less than DRIVE_HOT_FOR_NS ago (an origin
 * streams operations here), every DRIVE_COLD_NS up to DRIVE_FOR_NS after it, and not at all
 * later (the thread, watching the workers again, finds the next work and starts the
 * passes here again). The clock is read only every `stride`-th call: the stride doubles
 * while no pass is due (up to 64) and halves when one is long overdue. A ping-pong beside
 * a UCX window nobody uses pays a counter per poll. The fields are plain loads and stores:
 * threads racing on them only shift a pass. */
#define DRIVE_HOT_NS 2000u
#define DRIVE_HOT_FOR_NS 200000u
#define DRIVE_COLD_NS 50000u
#define DRIVE_FOR_NS 2000000u
#define DRIVE_STRIDE_MAX 64u
#define DRIVE_PASSES_MAX 32u
static struct {
    _Atomic unsigned calls, stride;
    _Atomic uint64_t work_ns; /* the last pass that found work */
} drive = {0, 1, 0};

static __attribute__((noinline)) void drive_due(unsigned stride);

/* The path of every poll: a counter, nothing saved on the stack. */
void clampi_ucx_service_progress_here(void) {
    unsigned calls = atomic_load_explicit(&drive.calls, memory_order_relaxed) + 1;
    unsigned stride = atomic_load_explicit(&drive.stride, memory_order_relaxed);
    if (calls < stride) {
        atomic_store_explicit(&drive.calls, calls, memory_order_relaxed);
        return;
    }
    drive_due(stride);
}

static void drive_due(unsigned stride) {
    atomic_store_explicit(&drive.calls, 0, memory_order_relaxed);
    if (!__atomic_load_n(&svc.clients, __ATOMIC_RELAXED)) {
        if (stride < DRIVE_STRIDE_MAX) atomic_store_explicit(&drive.stride, 2 * stride, memory_order_relaxed);
        return;
    }
    const uint64_t work = atomic_load_explicit(&drive.work_ns, memory_order_relaxed);
    const uint64_t last = atomic_load_explicit(&svc.driven_ns, memory_order_relaxed);
    uint64_t now = mono_ns(), idle = now - work, since = now - last;
    /* the last pass here found work: the next one follows at once (a stream of operations) */
    uint64_t every = work == last              ? 0
                     : idle < DRIVE_HOT_FOR_NS ? DRIVE_HOT_NS
                     : idle < DRIVE_FOR_NS     ? DRIVE_COLD_NS
                                               : UINT64_MAX;
    if (since < every) {
        if (stride < DRIVE_STRIDE_MAX) atomic_store_explicit(&drive.stride, 2 * stride, memory_order_relaxed);
        return;
    }
    if (since > 4 * every && stride > 1) atomic_store_explicit(&drive.stride, stride / 2, memory_order_relaxed);
    if (pthread_mutex_trylock(&svc.lock) != 0) return; /* the thread (or another) is in a pass */
    if (svc.clients) {
        atomic_store_explicit(&svc.driven_ns, now, memory_order_relaxed);
        /* while passes find work, more passes before MPI's next poll (a stream's puts) */
        unsigned found = 0;
        while (found < DRIVE_PASSES_MAX && pass()) found++;
        if (found) atomic_store_explicit(&drive.work_ns, now, memory_order_relaxed);
        svc.stats.driven += found + (found < DRIVE_PASSES_MAX);
        svc.stats.driven_work += found;
    }
    pthread_mutex_unlock(&svc.lock);
}

/* While MPI's progress engine runs passes (the program waits inside MPI: the last pass is
 * less than DRIVEN_NS old) and the thread has no core of its own, the thread keeps out of
 * the way: it stops watching the workers (their events would only wake it, a third thread
 * on the ranks' cores, to find them progressed) and looks again after a millisecond. With a
 * core of its own it goes on watching: it wakes sooner than a cold pass comes. A program
 * that enters MPI only now and then is not "driven" (svc.lock held). */
#define DRIVEN_NS (4 * DRIVE_COLD_NS)
static int driven_by_mpi(void) {
    if (svc.own_core) return 0;
    if (mono_ns() - atomic_load_explicit(&svc.driven_ns, memory_order_relaxed) >= DRIVEN_NS) return 0;
    for (int i = 0; i < svc.nwatched; i++) quiet_watched(i);
    return 1;
}

/* The thread's pass found work: waiting threads run passes for a while, and MPI's progress
 * engine calls them (svc.lock held). */
static void found_work(void) {
    atomic_store_explicit(&drive.work_ns, mono_ns(), memory_order_relaxed);
    if (svc.in_hook) return;
    if (svc.hooked == 1) {
        svc.in_hook = clampi_progress_hook_add(clampi_ucx_service_progress_here);
    } else if (svc.hooked == 0 && clampi_ucx_mpi_polls_seen()) {
        clampi_ucx_mpi_polls_set(clampi_ucx_service_progress_here);
        svc.in_hook = 2;
    }
}

/* No work for DRIVE_FOR_NS: MPI's polls stop calling clampi (svc.lock held). */
static void drop_hook_when_idle(int stopping) {
    if (svc.in_hook &&
        (stopping || mono_ns() - atomic_load_explicit(&drive.work_ns, memory_order_relaxed) > DRIVE_FOR_NS)) {
        if (svc.in_hook == 2)
            clampi_ucx_mpi_polls_set(NULL);
        else
            clampi_progress_hook_remove(clampi_ucx_service_progress_here);
        svc.in_hook = 0;
    }
}

static void *service_main(void *unused) {
    (void)unused;
    unsigned idle = 0;
    for (;;) {
        pthread_mutex_lock(&svc.lock);
        if (svc.stop) {
            drop_hook_when_idle(1);
            pthread_mutex_unlock(&svc.lock);
            return NULL;
        }
        drop_hook_when_idle(0);
        if (driven_by_mpi()) {
            svc.stats.sleeps++;
            pthread_mutex_unlock(&svc.lock);
            struct epoll_event ev[8];
            drain_wake(ev, epoll_wait(svc.epfd, ev, 8, 1));
            idle = 0;
            continue;
        }
        unsigned n = pass();
        if (n && svc.hooked >= 0) found_work();
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
        if (worst != 1) svc.stats.sleeps++;
        pthread_mutex_unlock(&svc.lock);
        if (worst == 1) continue; /* events arrived while arming */
        struct epoll_event ev[8];
        /* while MPI's polls may run passes, look again soon enough to take them out */
        int k = epoll_wait(svc.epfd, ev, 8, worst == 2 ? 1 : svc.in_hook ? HOOK_CHECK_MS : MAX_SLEEP_MS);
        if (k > 0) {
            pthread_mutex_lock(&svc.lock);
            svc.stats.wakeups++;
            pthread_mutex_unlock(&svc.lock);
        }
        drain_wake(ev, k);
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
    __atomic_store_n(&svc.clients, c, __ATOMIC_RELEASE); /* read without the lock by drive_due */
    if (!svc.hooked) {                                   /* Open MPI's progress engine, and clampi's own spin waits */
        svc.hooked = -1;
        svc.own_core = clampi_node_helper_has_core();
        if (clampi_opt_process(CLAMPI_OPT_PROGRESS_FROM_MPI).u) {
            svc.hooked = clampi_progress_hook_available();
            __atomic_store_n(&clampi_idle_hooks[CLAMPI_IDLE_UCX], clampi_ucx_service_progress_here, __ATOMIC_RELEASE);
        }
    }
    int rc = MPI_SUCCESS;
    if (!svc.running) {
        svc.stop = 0;
        if (pthread_create(&svc.thread, NULL, service_main, NULL) == 0) {
            svc.running = 1;
        } else {
            __atomic_store_n(&svc.clients, c->next, __ATOMIC_RELEASE);
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
            __atomic_store_n(p, c->next, __ATOMIC_RELEASE);
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
