/* The service's and the application's turns on a worker (clampi_ucx_poller,
 * backends/ucx/service.h), without a worker or MPI:
 *  - while an application thread is inside the worker's progress (busy), the service never
 *    takes the worker, even after a millisecond without a new poll (one UCX progress call
 *    that copies a window of rendezvous messages lasts milliseconds; a service that took
 *    over then spun on UCX's worker lock on the application's core: MPICH osu_bw 0.46x at
 *    1 MiB on the UCX carrier);
 *  - once the application is out and has not polled for a millisecond, the service does;
 *  - while the service is inside the worker's progress (service_busy), the application's
 *    progress does not enter the worker (here: the worker is NULL, entering it crashes)
 *    but yields and notes its poll, so the service hands the worker back. */
#include <stdio.h>
#include <time.h>

#include "backends/ucx/service.h"
#include "check.h"

static void sleep_ms(double ms) {
    struct timespec ts = {0, (long)(ms * 1e6)};
    nanosleep(&ts, NULL);
}

int main(void) {
    clampi_ucx_poller p = {0};
    /* the application polls and stays inside one long progress call */
    clampi_ucx_poller_note(&p);
    __atomic_store_n(&p.busy, 1, __ATOMIC_RELAXED);
    int took = 0;
    for (int i = 0; i < 30; i++) { /* 3 ms */
        took += clampi_ucx_poller_may_progress(&p);
        sleep_ms(0.1);
    }
    CHECK_EQ_INT(took, 0);
    /* it leaves and stays away: the service takes over after a millisecond */
    __atomic_store_n(&p.busy, 0, __ATOMIC_RELAXED);
    CHECK_EQ_INT(clampi_ucx_poller_may_progress(&p), 0);
    sleep_ms(1.5);
    CHECK_EQ_INT(clampi_ucx_poller_may_progress(&p), 1);
    /* the service is inside the worker: the application does not enter it */
    __atomic_store_n(&p.service_busy, 1, __ATOMIC_RELAXED);
    CHECK_EQ_INT((int)clampi_ucx_poller_progress(&p, NULL), 0);
    CHECK_EQ_INT(__atomic_load_n(&p.polled, __ATOMIC_RELAXED), 1); /* noted: the service stops */
    __atomic_store_n(&p.service_busy, 0, __ATOMIC_RELAXED);
    CHECK_EQ_INT(clampi_ucx_poller_may_progress(&p), 0);
    printf("ucx_poller ok\n");
    return 0;
}
