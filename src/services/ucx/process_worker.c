/* The process workers, shared by every UCX window's process lane (see process_worker.h). */
#include "services/ucx/process_worker.h"

#include <mpi.h>
#include <pthread.h>

#include "services/ucx/context.h"
#include "services/ucx/mpi_polls.h"

static clampi_ucx_process_worker workers[UCS_THREAD_MODE_LAST];
static pthread_mutex_t workers_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned worker_progress(void *arg) {
    clampi_ucx_process_worker *pw = arg;
    return clampi_ucx_poller_may_progress(&pw->poller) ? clampi_ucx_poller_serviced(&pw->poller, pw->worker) : 0;
}

static int worker_arm(void *arg) {
    clampi_ucx_process_worker *pw = arg;
    return clampi_ucx_poller_arm(&pw->poller, pw->worker);
}

static const clampi_ucx_client_ops worker_client = {worker_progress, worker_arm};

int clampi_ucx_process_worker_get(ucs_thread_mode_t mode, clampi_ucx_process_worker **out) {
    if ((int)mode < 0 || mode >= UCS_THREAD_MODE_LAST) return MPI_ERR_ARG;
    clampi_ucx_process_worker *pw = &workers[mode];
    pthread_mutex_lock(&workers_lock);
    int rc = MPI_SUCCESS;
    if (!pw->worker && (rc = clampi_ucx_worker_create(mode, &pw->worker)) == MPI_SUCCESS) {
        pthread_mutex_init(&pw->peers.lock, NULL);
        pw->peers.worker = pw->worker;
        pw->peers.keep_addresses = 1; /* thread lanes' workers connect to ours with them */
        pw->peers.kind = (int)mode;   /* a peer's worker of another mode has another address */
        clampi_ucx_poller_bind(pw->worker, &pw->poller);
    }
    if (rc == MPI_SUCCESS) {
        pw->mode = mode;
        __atomic_add_fetch(&pw->users, 1, __ATOMIC_RELAXED); /* read unlocked by flushes (lane.c) */
        *out = pw;
    }
    pthread_mutex_unlock(&workers_lock);
    return rc;
}

void clampi_ucx_process_worker_put(clampi_ucx_process_worker *pw) {
    pthread_mutex_lock(&workers_lock);
    /* the last user gone: what the closed endpoints left behind, before it idles */
    if (__atomic_sub_fetch(&pw->users, 1, __ATOMIC_RELAXED) == 0)
        while (clampi_ucx_progress(pw->worker))
            ;
    pthread_mutex_unlock(&workers_lock);
}

int clampi_ucx_process_worker_watch(clampi_ucx_process_worker *pw) {
    pthread_mutex_lock(&workers_lock);
    int rc = MPI_SUCCESS;
    if (pw->watchers == 0) rc = clampi_ucx_service_add(&worker_client, pw, &pw->client);
    if (rc == MPI_SUCCESS) pw->watchers++;
    pthread_mutex_unlock(&workers_lock);
    return rc;
}

void clampi_ucx_process_worker_unwatch(clampi_ucx_process_worker *pw) {
    pthread_mutex_lock(&workers_lock);
    /* the service's pass never takes workers_lock: removing under it cannot wait on us */
    if (--pw->watchers == 0) {
        clampi_ucx_service_remove(pw->client);
        pw->client = NULL;
    }
    pthread_mutex_unlock(&workers_lock);
}

void clampi_ucx_process_workers_destroy(void) {
    pthread_mutex_lock(&workers_lock);
    for (int m = 0; m < UCS_THREAD_MODE_LAST; m++) {
        clampi_ucx_process_worker *pw = &workers[m];
        if (pw->client) clampi_ucx_service_remove(pw->client);
        if (pw->worker) {
            clampi_ucx_peers_close_all(&pw->peers);
            pthread_mutex_destroy(&pw->peers.lock);
            clampi_ucx_poller_bind(pw->worker, NULL);
            ucp_worker_destroy(pw->worker);
        }
        *pw = (clampi_ucx_process_worker){0};
    }
    pthread_mutex_unlock(&workers_lock);
}
