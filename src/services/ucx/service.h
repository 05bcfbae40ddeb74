/* The UCX progress service: one progress thread per process for every part of clampi that
 * needs the target side of UCX progressed while the program computes outside MPI (UCX
 * windows whose transports emulate RMA with active messages, thread lanes whose owner is
 * busy, matched messages on MPIs that do not call clampi's progress).
 *
 * Event-driven: when a pass over every client finds nothing to do, the thread arms each
 * client's workers (ucp_worker_arm) and sleeps in epoll_wait on their event fds (and an
 * eventfd for clampi_ucx_service_wake), so an arriving message wakes it within
 * microseconds and an idle process costs no CPU. The thread exists while at least one
 * client is registered. A program waiting inside MPI runs the passes itself where the MPI
 * lets it (clampi_ucx_service_progress_here). */
#ifndef CLAMPI_SERVICES_UCX_SERVICE_H
#define CLAMPI_SERVICES_UCX_SERVICE_H

#include <sched.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "services/ucx/mpi_polls.h"

typedef struct clampi_ucx_client clampi_ucx_client;

typedef struct clampi_ucx_client_ops {
    /* Drive the client's workers once (taking whatever locks they need, never waiting for
     * one); return the number of events handled. */
    unsigned (*progress)(void *arg);
    /* Arm every worker of the client with clampi_ucx_service_arm (same locking). Return 0 if
     * all are armed (the thread may sleep), 1 if one has pending events (progress again),
     * 2 if one could not be armed now (its lock is held elsewhere: sleep briefly). */
    int (*arm)(void *arg);
} clampi_ucx_client_ops;

/* Registers a client; starts the thread with the first one. Returns an MPI error code. */
int clampi_ucx_service_add(const clampi_ucx_client_ops *ops, void *arg, clampi_ucx_client **out);
/* Unregisters: when it returns the thread no longer calls the client (its workers may then
 * be destroyed). Stops the thread with the last client. */
void clampi_ucx_service_remove(clampi_ucx_client *c);
/* For arm callbacks: arms worker (its event fd joins the thread's epoll set on first use).
 * 0 armed, 1 events pending, 2 the worker cannot sleep-wait (no wakeup support). */
int clampi_ucx_service_arm(ucp_worker_h worker);
/* For arm callbacks of a client whose worker an application thread is driving right now
 * (it polls in a wait loop): the worker's fd stops waking the thread, which looks again
 * after a short sleep (1 ms); a later clampi_ucx_service_arm watches it again. Returns 2. */
int clampi_ucx_service_quiet(ucp_worker_h worker);
/* A worker that application threads also drive, in wait loops (a ping-pong, a blocking
 * get). UCX's worker lock is a spinlock: a service thread woken per event and progressing
 * the same worker took the waiter's core and lock whenever ranks and threads outnumbered
 * cores (MPICH osu_latency under the preload: ~1 us to 300-700 us per message; MPICH's
 * large_acc_flush_local on a UCX window: 46 % of the origin's time in the spinlock). So
 * the service keeps out of the way: it stops progressing and watching the worker as soon
 * as it sees an application poll, and takes over again only after a whole millisecond
 * without one (the program computes, or waits inside another MPI call). */
typedef struct clampi_ucx_poller {
    _Atomic int polled;       /* set by application threads, cleared by the service */
    _Atomic int busy;         /* an application thread is inside the worker's progress right now */
    _Atomic int service_busy; /* the service thread is */
    int quiet;                /* service side only (the thread, or a waiting thread's pass: under the service's lock) */
    uint64_t seen_ns;         /* service side only: when it last saw an application poll */
    uint64_t serviced;        /* passes in which the service progressed the worker (tests) */
    uint64_t takeovers;       /* times it took the worker over after a millisecond without a poll (tests) */
} clampi_ucx_poller;
/* Application side, before each wait loop: written only when clear, so a spinning waiter
 * reads a line it owns and no atomic add sits on the progress path. */
static inline void clampi_ucx_poller_note(clampi_ucx_poller *p) {
    if (!__atomic_load_n(&p->polled, __ATOMIC_RELAXED)) __atomic_store_n(&p->polled, 1, __ATOMIC_RELAXED);
}
/* Application side: one call of the worker's progress, marked busy meanwhile. A single call
 * can last milliseconds (UCX runs every queued rendezvous copy of a window of large
 * messages in it); a service that took that for a millisecond without a poll spun on the
 * worker's lock on the application's core, and halved osu_bw at 1 MiB on MPICH. The marks
 * are a heuristic, not a lock: relaxed, so the two sides may briefly both enter (the worker
 * is UCS_THREAD_MODE_MULTI: that is only contention, as before), and with several
 * application threads one may clear busy while another is inside. Neither side skips for
 * long: the application skips only while the service is inside one call, having noted a
 * poll that makes the service hand the worker back after it. */
static inline unsigned clampi_ucx_poller_progress(clampi_ucx_poller *p, ucp_worker_h worker) {
    if (!p) return clampi_ucx_progress(worker); /* a worker the service does not watch */
    clampi_ucx_poller_note(p);
    if (__atomic_load_n(&p->service_busy, __ATOMIC_RELAXED)) {
        /* The service took over (the application was away for a millisecond) and may be in
         * a long call: spinning on the lock would halve the core they share; the noted
         * poll makes the service hand the worker back after its call. */
        sched_yield();
        return 0;
    }
    __atomic_store_n(&p->busy, 1, __ATOMIC_RELAXED);
    unsigned n = clampi_ucx_progress(worker);
    __atomic_store_n(&p->busy, 0, __ATOMIC_RELAXED);
    return n;
}
/* The poller of a worker the service may watch. The owners of such workers (the process
 * workers, the message layer's worker) bind it when they create the worker and unbind it
 * before they destroy it; clampi_ucx_wait (context.h) looks it up, so no wait on a watched
 * worker leaves the service free to spin on the worker beside it. Up to
 * CLAMPI_UCX_BOUND_MAX workers (there are at most four); poller NULL unbinds. Thread
 * lanes' workers are not bound: the service takes their lane's mutex, which their owner
 * holds while it progresses them (backends/ucx/progress.c). */
#define CLAMPI_UCX_BOUND_MAX 8
void clampi_ucx_poller_bind(ucp_worker_h worker, clampi_ucx_poller *p);
/* The poller bound to worker, NULL for a worker the service never watches. Lock-free: a
 * scan of CLAMPI_UCX_BOUND_MAX words. */
clampi_ucx_poller *clampi_ucx_poller_of(ucp_worker_h worker);
/* Service side, in a progress callback: whether to progress the poller's worker now. */
int clampi_ucx_poller_may_progress(clampi_ucx_poller *p);
/* Service side, once clampi_ucx_poller_may_progress said yes: the worker's progress,
 * marked service_busy meanwhile. */
unsigned clampi_ucx_poller_serviced(clampi_ucx_poller *p, ucp_worker_h worker);
/* Service side, in an arm callback: clampi_ucx_service_arm, or clampi_ucx_service_quiet
 * while the application polls. */
int clampi_ucx_poller_arm(clampi_ucx_poller *p, ucp_worker_h worker);
/* A pass over every client from an application thread that waits: inside MPI (Open MPI's
 * progress engine, or MPICH's polls of its UCX worker (mpi_polls.h), call it while the
 * workers have work: the thread adds it to the MPI's progress callbacks when a pass finds
 * work and takes it out after 2 ms without) or in
 * clampi's own spin waits (clampi_idle). Rate-limited (service.c) and skipped while the
 * thread or another caller is in a pass. While such passes come, a thread without a core of
 * its own sleeps: a target waiting in MPI_Barrier applies an origin's emulated puts itself
 * instead of waking a third thread on its cores. CLAMPI_PROGRESS_FROM_MPI=false: never. */
void clampi_ucx_service_progress_here(void);
/* Wakes the thread if it sleeps (work it alone will progress was just issued). */
void clampi_ucx_service_wake(void);

typedef struct clampi_ucx_service_stats {
    uint64_t passes;      /* progress passes over every client, by the thread or a waiting thread */
    uint64_t sleeps;      /* times the thread slept in epoll_wait */
    uint64_t wakeups;     /* sleeps ended by an event (not by the time-out) */
    uint64_t driven;      /* passes run by clampi_ucx_service_progress_here (waiting threads) */
    uint64_t driven_work; /* ... of which found work (a waiting target applied operations) */
} clampi_ucx_service_stats;
void clampi_ucx_service_get_stats(clampi_ucx_service_stats *s);
#endif
