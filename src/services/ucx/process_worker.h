/* The process workers: one UCX worker per thread mode, shared by the process lanes of every
 * UCX window of the process (backends/ucx). A worker opens every transport's interfaces
 * (shared-memory segments, a socket per network device and more: about 200 descriptors
 * with UCX 1.13), so a worker per window made creating one cost milliseconds and kept those
 * descriptors open while it lived. Sharing it, the users share its flushes and fences too:
 * a worker flush or fence covers every user's operations (users flush their endpoints).
 *
 * Its endpoints are shared too (peers.h): one per peer process, made at a window's
 * creation when it decides whether it needs the progress service, else at first use, and
 * closed at MPI_Finalize; a window of peers already connected exchanges no addresses.
 *
 * The progress service (service.h) progresses a process worker while at least one user
 * watches it, through one client and one poller (application waits on any user's behalf
 * keep the service away from it). Workers are created on first use, kept when their last
 * user leaves, and destroyed at MPI_Finalize (clampi_ucx_process_workers_destroy, from the
 * context's finalize callback). */
#ifndef CLAMPI_SERVICES_UCX_PROCESS_WORKER_H
#define CLAMPI_SERVICES_UCX_PROCESS_WORKER_H
#include <ucp/api/ucp.h>

#include "services/ucx/peers.h"
#include "services/ucx/service.h"

typedef struct clampi_ucx_process_worker {
    ucp_worker_h worker;
    ucs_thread_mode_t mode;
    int users;                 /* gets not yet put back */
    int watchers;              /* users that want the service to progress it */
    clampi_ucx_poller poller;  /* for every application wait on the worker */
    clampi_ucx_client *client; /* registered with the service while watchers > 0 */
    clampi_ucx_peers peers;    /* endpoints to other processes' process workers of this mode */
} clampi_ucx_process_worker;

/* The process worker of that mode, created on first use; the caller is a user until it
 * gives it back with clampi_ucx_process_worker_put, once its endpoints on the worker are
 * closed. Returns an MPI error code. */
int clampi_ucx_process_worker_get(ucs_thread_mode_t mode, clampi_ucx_process_worker **out);
void clampi_ucx_process_worker_put(clampi_ucx_process_worker *pw);
/* A user asks the service to progress the worker (it needs the target side progressed while
 * the program computes) / no longer asks. Returns an MPI error code. */
int clampi_ucx_process_worker_watch(clampi_ucx_process_worker *pw);
void clampi_ucx_process_worker_unwatch(clampi_ucx_process_worker *pw);
/* At MPI_Finalize, before the context goes: closes every process worker's endpoints and
 * destroys the worker. */
void clampi_ucx_process_workers_destroy(void);

#endif
