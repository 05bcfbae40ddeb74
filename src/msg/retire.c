/* Communicators freed while operations on them are pending. MPI_Comm_free only marks a
 * communicator for deallocation: its pending sends and receives complete normally, a
 * matched-probe message can still be received, a posted receive can still be cancelled.
 * So a freed clampi communicator is retired, not destroyed: its MPI handle is gone, its
 * queues and context id stay until nothing names it (mc->live: requests, held messages,
 * queued acknowledgements). Nobody waits for anybody: a message that arrives unexpected
 * on a retired communicator, or after it is gone, can never be received (no receive can
 * be posted on it any more; those posted met it on arrival) and is dropped, which
 * releases a rendezvous sender; the context id's epoch (comm.c) tells a late one from a
 * message of the id's next communicator. */
#include <stdlib.h>

#include "msg/msg_internal.h"

_Atomic int clampi_msg_retired_n; /* retired communicators and endpoint closes */
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static clampi_mcomm *retired; /* under retired_lock */

void clampi_msg_collect(uintptr_t cookie, void *arg) {
    clampi_msg *m = (clampi_msg *)cookie, **list = arg;
    m->next = *list;
    *list = m;
}

/* Arrivals nobody can receive any more (on the MPI carrier the queue stays empty once
 * retired), freed outside the matcher's lock: releasing a rendezvous takes UCX's worker
 * lock, which the AM handler holds when it takes the matcher's. */
void clampi_msg_drop_unexpected(clampi_mcomm *mc) {
    clampi_msg *list = NULL;
    if (mc->matcher) clampi_matcher_drain(mc->matcher, 1, clampi_msg_collect, &list);
    while (list) {
        clampi_msg *m = list;
        list = m->next;
        clampi_msg_free(m);
    }
}

void clampi_msg_retire(clampi_mcomm *mc) {
    clampi_msg_revocation_check(mc);
    clampi_msg_persist_comm_gone(mc->comm);
    clampi_msg_comm_drop_handle(mc); /* the program's handle is being freed */
    mc->ops->retire(mc);
    atomic_store_explicit(&mc->retired, 1, memory_order_release);
    pthread_mutex_lock(&retired_lock);
    mc->retired_next = retired;
    retired = mc;
    atomic_fetch_add(&clampi_msg_retired_n, 1);
    pthread_mutex_unlock(&retired_lock);
}

/* Nothing names mc any more. What is still on the way to it could never be received
 * (a receive would name mc): the AM handler drops it, as stale once the id is reused. */
static int finished(clampi_mcomm *mc) { return atomic_load_explicit(&mc->live, memory_order_acquire) == 0; }

/* Its endpoints closing in the background, then everything else at once. */
static void release(clampi_mcomm *mc) {
    clampi_msg_ucx_close_later(mc);
    clampi_msg_comm_release(mc, 0);
}

void clampi_msg_retired_sweep(void) {
    if (!atomic_load_explicit(&clampi_msg_retired_n, memory_order_relaxed)) return;
    if (pthread_mutex_trylock(&retired_lock) != 0) return; /* another thread sweeps */
    for (clampi_mcomm **p = &retired; *p;) {
        clampi_mcomm *mc = *p;
        clampi_msg_drop_unexpected(mc);
        if (!finished(mc)) {
            p = &mc->retired_next;
            continue;
        }
        *p = mc->retired_next;
        atomic_fetch_sub(&clampi_msg_retired_n, 1);
        release(mc);
    }
    clampi_msg_ucx_closes_reap(0);
    pthread_mutex_unlock(&retired_lock);
}

/* MPI_Finalize: what is still pending never completes now; the endpoints are forced. */
void clampi_msg_retired_release_all(void) {
    pthread_mutex_lock(&retired_lock);
    clampi_msg_ucx_closes_reap(1);
    while (retired) {
        clampi_mcomm *mc = retired;
        retired = mc->retired_next;
        atomic_fetch_sub(&clampi_msg_retired_n, 1);
        if (atomic_load(&mc->live) > 0)
            clampi_msg_comm_abandon(mc);
        else
            clampi_msg_comm_release(mc, 1);
    }
    pthread_mutex_unlock(&retired_lock);
}
