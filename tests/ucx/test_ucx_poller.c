/* The service's and the application's turns on a worker (clampi_ucx_poller,
 * services/ucx/service.h), without a worker or MPI. This executable defines
 * ucp_worker_progress itself (the static library's calls bind to it ahead of libucp): it
 * records the poller's marks during each call.
 *  - while an application thread is inside the worker's progress (busy), the service never
 *    takes the worker, even after a millisecond without a new poll (one UCX progress call
 *    that copies a window of rendezvous messages lasts milliseconds; a service that took
 *    over then spun on UCX's worker lock on the application's core: MPICH osu_bw 0.49x at
 *    1 MiB on the UCX carrier);
 *  - once the application is out and has not polled for a millisecond, the service does;
 *  - while the service is inside the worker's progress (service_busy), the application's
 *    progress does not enter the worker but yields and notes its poll, so the service
 *    hands the worker back;
 *  - each side's progress call really marks itself (busy, service_busy) while inside;
 *  - clampi_ucx_wait (services/ucx/context.h) finds the poller bound to its worker and notes
 *    its polls there, so a wait that was handed no poller still keeps the service away
 *    (a memory handle's waits once did not: a third of the origin's time in UCX's spinlock);
 *    an unbound worker has no poller, and unbinding forgets it. */
#include <stdio.h>
#include <time.h>

#include "services/ucx/context.h"
#include "services/ucx/service.h"
#include "check.h"

static clampi_ucx_poller p;
static int calls, busy_seen, service_busy_seen;

unsigned ucp_worker_progress(ucp_worker_h worker) {
    (void)worker;
    calls++;
    busy_seen += __atomic_load_n(&p.busy, __ATOMIC_RELAXED);
    service_busy_seen += __atomic_load_n(&p.service_busy, __ATOMIC_RELAXED);
    return 0;
}

/* Requests for clampi_ucx_wait: in progress for that many more checks. */
static int rounds_left;
ucs_status_t ucp_request_check_status(void *request) {
    (void)request;
    return rounds_left-- > 0 ? UCS_INPROGRESS : UCS_OK;
}
void ucp_request_free(void *request) { (void)request; }

/* A wait of 5 rounds on w: returns the calls of the worker's progress it made. */
static int wait_rounds(ucp_worker_h w) {
    static char request;
    int before = calls;
    rounds_left = 5;
    CHECK_EQ_INT((int)clampi_ucx_wait(w, &request), (int)UCS_OK);
    return calls - before;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static void sleep_ms(double ms) {
    struct timespec ts = {0, (long)(ms * 1e6)};
    nanosleep(&ts, NULL);
}

int main(void) {
    ucp_worker_h w = (ucp_worker_h)&p; /* never dereferenced: the fake above */
    /* each side marks itself inside the worker */
    CHECK_EQ_INT((int)clampi_ucx_poller_progress(&p, w), 0);
    CHECK_EQ_INT(calls, 1);
    CHECK_EQ_INT(busy_seen, 1);
    CHECK_EQ_INT(__atomic_load_n(&p.busy, __ATOMIC_RELAXED), 0); /* and clears the mark after */
    clampi_ucx_poller_serviced(&p, w);
    CHECK_EQ_INT(calls, 2);
    CHECK_EQ_INT(service_busy_seen, 1);
    CHECK_EQ_INT(__atomic_load_n(&p.service_busy, __ATOMIC_RELAXED), 0);

    /* the application polls and stays inside one long progress call: 3 ms */
    clampi_ucx_poller_note(&p);
    __atomic_store_n(&p.busy, 1, __ATOMIC_RELAXED);
    int took = 0;
    for (int i = 0; i < 30; i++) {
        sleep_ms(0.1);
        took += clampi_ucx_poller_may_progress(&p);
    }
    CHECK_EQ_INT(took, 0);
    /* it leaves: the service waits a millisecond from the last time it saw it inside
     * (checked only if this thread was not descheduled meanwhile), then takes over */
    double t0 = now_ms();
    CHECK_EQ_INT(clampi_ucx_poller_may_progress(&p), 0); /* still inside: seen now */
    __atomic_store_n(&p.busy, 0, __ATOMIC_RELAXED);
    int early = clampi_ucx_poller_may_progress(&p);
    if (now_ms() - t0 < 0.5) CHECK_EQ_INT(early, 0);
    sleep_ms(1.5);
    CHECK_EQ_INT(clampi_ucx_poller_may_progress(&p), 1);

    /* the service is inside the worker: the application does not enter it */
    __atomic_store_n(&p.service_busy, 1, __ATOMIC_RELAXED);
    int before = calls;
    CHECK_EQ_INT((int)clampi_ucx_poller_progress(&p, w), 0);
    CHECK_EQ_INT(calls, before);
    CHECK_EQ_INT(__atomic_load_n(&p.polled, __ATOMIC_RELAXED), 1); /* noted: the service stops */
    __atomic_store_n(&p.service_busy, 0, __ATOMIC_RELAXED);
    CHECK_EQ_INT(clampi_ucx_poller_may_progress(&p), 0);

    /* clampi_ucx_wait on a bound worker notes its polls on the worker's poller */
    static clampi_ucx_poller other;
    ucp_worker_h w2 = (ucp_worker_h)&other, unbound = (ucp_worker_h)&calls;
    clampi_ucx_poller_bind(w, &p);
    clampi_ucx_poller_bind(w2, &other);
    CHECK(clampi_ucx_poller_of(w) == &p && clampi_ucx_poller_of(w2) == &other);
    CHECK(clampi_ucx_poller_of(unbound) == NULL && clampi_ucx_poller_of(NULL) == NULL);
    __atomic_store_n(&p.polled, 0, __ATOMIC_RELAXED);
    CHECK_EQ_INT(wait_rounds(w), 5);
    CHECK_EQ_INT(__atomic_load_n(&p.polled, __ATOMIC_RELAXED), 1);
    CHECK_EQ_INT(__atomic_load_n(&other.polled, __ATOMIC_RELAXED), 0);
    /* while the service is inside the bound worker, the wait yields instead of entering it */
    __atomic_store_n(&p.service_busy, 1, __ATOMIC_RELAXED);
    CHECK_EQ_INT(wait_rounds(w), 0);
    __atomic_store_n(&p.service_busy, 0, __ATOMIC_RELAXED);
    /* an unbound worker: progressed every round, nothing noted anywhere */
    __atomic_store_n(&p.polled, 0, __ATOMIC_RELAXED);
    CHECK_EQ_INT(wait_rounds(unbound), 5);
    CHECK_EQ_INT(__atomic_load_n(&p.polled, __ATOMIC_RELAXED), 0);
    /* unbound: forgotten, its slot reused */
    clampi_ucx_poller_bind(w, NULL);
    CHECK(clampi_ucx_poller_of(w) == NULL && clampi_ucx_poller_of(w2) == &other);
    CHECK_EQ_INT(wait_rounds(w), 5);
    CHECK_EQ_INT(__atomic_load_n(&p.polled, __ATOMIC_RELAXED), 0);
    clampi_ucx_poller_bind(w2, NULL);
    printf("ucx_poller ok\n");
    return 0;
}
