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

static void free_unexpected(uintptr_t cookie, void *arg) {
    (void)arg;
    clampi_msg_free((clampi_msg *)cookie);
}

/* Arrivals nobody can receive any more (on the MPI carrier the queue stays empty once retired). */
static void drop_unexpected(clampi_mcomm *mc) {
    if (mc->matcher) clampi_matcher_drain(mc->matcher, 1, free_unexpected, NULL);
}

/* The program's error handler of the communicator this thread disables, while the
 * preload's stands in (msg.h); MPI_ERRHANDLER_NULL: the communicator's own is the program's. */
static _Thread_local MPI_Errhandler disabling_eh = MPI_ERRHANDLER_NULL;

void clampi_msg_disabling_errhandler(MPI_Errhandler eh) { disabling_eh = eh; }

/* The errors of operations still pending go to the freed communicator's error handler (as
 * MPI_Wait's do in Open MPI): a communicator of this process alone (a split of
 * MPI_COMM_SELF: no attribute is copied) takes it over. */
static void keep_error_handler(clampi_mcomm *mc) {
    if (atomic_load(&mc->live) == 0) return;
    MPI_Errhandler eh = disabling_eh, own = MPI_ERRHANDLER_NULL;
    if (eh == MPI_ERRHANDLER_NULL) {
        if (PMPI_Comm_get_errhandler(mc->comm, &own) != MPI_SUCCESS) return;
        eh = own;
    }
    if (PMPI_Comm_split(MPI_COMM_SELF, 0, 0, &mc->err_comm) == MPI_SUCCESS)
        PMPI_Comm_set_errhandler(mc->err_comm, eh);
    else
        mc->err_comm = MPI_COMM_NULL;
    if (own != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&own);
}

void clampi_msg_retire(clampi_mcomm *mc) {
    clampi_msg_revocation_check(mc);
    keep_error_handler(mc);
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
        drop_unexpected(mc);
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
