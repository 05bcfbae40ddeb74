/* Target-side progress for UCX windows.
 *
 * Over shared memory (sysv/posix/cma/xpmem) UCX RMA and atomics are one-sided: the target
 * CPU is not involved. Over TCP (and any transport without RMA/AMO lanes) UCX emulates them
 * with active messages that the TARGET's worker must progress: a target busy outside clampi
 * stalls its origins. The same holds over shared memory for memory that UCX did not
 * allocate itself (CMPI_Win_create, dynamic windows): posix/sysv can only map memory they
 * allocated, cma moves large messages only, so small RMA to such memory is emulated too.
 * clampi_progress=auto therefore starts a progress thread when the window's memory is not
 * UCX-allocated (CMPI_Win_allocate on a UCX window allocates with UCX) nor, on every rank,
 * in one node-shared heap (reached by load and store: setup.c) or UCX reaches a
 * peer without an RMA lane ("put[" in ucp_ep_print_info) or an atomic lane ("amo#"; asked
 * once per peer of the process worker: services/ucx/peers.h); =thread always; =none never.
 * Asking makes an endpoint, so each process asks about CLAMPI_PROGRESS_PROBES peers at
 * most (every peer in a smaller communicator), at offsets spread over the communicator:
 * its right neighbour, usually on its node, up to the far side, usually on other nodes.
 * The window's processes then agree: if any found such a peer, all start the thread (a
 * process's own sample may have missed the peers that reach it through emulation).
 * The window then watches the process worker (one
 * client of the process's UCX progress service for every window on it: process_worker.h)
 * and is a client itself for its thread lanes. The service is one event-driven thread for
 * every window and the message layer, which sleeps in epoll_wait on the workers' event
 * fds when idle. */
#include <stdlib.h>
#include <time.h>

#include "common/options.h"
#include "services/ucx/service.h"
#include "backends/ucx/ucx_win.h"

int clampi_ucx_auto_wants_thread(clampi_ucx_win *u) {
    if (!u->mem_one_sided) return 1;
    const int n = u->nranks;
    long k = (long)clampi_opt_process(CLAMPI_OPT_PROGRESS_PROBES).u;
    if (!u->world || k > n - 1) k = n - 1; /* endpoints of its own: all made already */
    for (long j = 0; j < k; j++) {
        const int t = (int)((u->rank + 1 + j * (n - 1) / k) % n); /* j = 0: the right neighbour */
        ucp_ep_h ep = clampi_ucx_lane_ep_peek(u, &u->main, t);
        if (!ep) return -1;
        int one_sided =
            u->world ? clampi_ucx_peers_one_sided(&u->main.pw->peers, u->world[t]) : clampi_ucx_ep_one_sided(ep);
        if (one_sided <= 0) return 1;
    }
    return 0;
}

/* Thread lanes (mpi_win_scope=thread) have workers of their own that only their owner
 * thread progressed: an operation their worker could not send at once (over TCP: every
 * operation on a new endpoint until its wireup, which needs both sides' progress, is
 * done) stayed queued at the origin until that thread's next flush, however long it
 * computed. The progress thread progresses every ready lane too, under the lane's mutex,
 * taken only if free (trylock: never waits for an owner thread, which progresses its
 * worker itself while it holds the mutex). Returns whether anything progressed. */
static unsigned progress_thread_lanes(clampi_ucx_win *u) {
    unsigned n = 0;
    if (pthread_mutex_trylock(&u->threads_lock) != 0)
        return 0; /* a lane is being added or everything flushed: next round */
    for (clampi_ucx_thread *th = u->threads; th; th = th->next) {
        if (!__atomic_load_n(&th->lane_ready, __ATOMIC_ACQUIRE)) continue;
        if (pthread_mutex_trylock(&th->lane.mutex) != 0) continue;
        n += clampi_ucx_progress(th->lane.worker);
        pthread_mutex_unlock(&th->lane.mutex);
    }
    pthread_mutex_unlock(&u->threads_lock);
    return n;
}

/* The window as a client of the UCX progress service (services/ucx/service.h), for its
 * thread lanes; the process worker is the process worker's client. */
static unsigned window_progress(void *arg) {
    clampi_ucx_win *u = arg;
    return __atomic_load_n(&u->threads, __ATOMIC_ACQUIRE) ? progress_thread_lanes(u) : 0;
}

static int window_arm(void *arg) {
    clampi_ucx_win *u = arg;
    int worst = 0;
    if (!__atomic_load_n(&u->threads, __ATOMIC_ACQUIRE)) return worst;
    if (pthread_mutex_trylock(&u->threads_lock) != 0) return 2;
    for (clampi_ucx_thread *th = u->threads; th && worst != 1; th = th->next) {
        if (!__atomic_load_n(&th->lane_ready, __ATOMIC_ACQUIRE)) continue;
        if (pthread_mutex_trylock(&th->lane.mutex) != 0) { /* its owner is progressing it */
            worst = worst > 2 ? worst : 2;
            continue;
        }
        int r = clampi_ucx_service_arm(th->lane.worker);
        pthread_mutex_unlock(&th->lane.mutex);
        if (r == 1 || r > worst) worst = r;
    }
    pthread_mutex_unlock(&u->threads_lock);
    return worst;
}

static const clampi_ucx_client_ops window_client = {window_progress, window_arm};

int clampi_ucx_progress_start(clampi_ucx_win *u, clampi_progress_kind kind) {
    int want = kind == CLAMPI_PROGRESS_THREAD || (kind == CLAMPI_PROGRESS_AUTO && u->auto_thread);
    if (!want) return MPI_SUCCESS;
    int rc = clampi_ucx_process_worker_watch(u->main.pw);
    if (rc != MPI_SUCCESS) return rc;
    u->watching = 1;
    return clampi_ucx_service_add(&window_client, u, &u->progress_client);
}

void clampi_ucx_progress_stop(clampi_ucx_win *u) {
    clampi_ucx_service_remove(u->progress_client);
    u->progress_client = NULL;
    if (u->watching) clampi_ucx_process_worker_unwatch(u->main.pw);
    u->watching = 0;
}
