/* Shared UCX context for every part of clampi that drives UCX directly (RMA windows on the UCX
 * backend, RMA extensions, message matching over UCX active messages).
 *
 * MPI-facing: clampi_ucx_connect is collective over an MPI communicator (it uses PMPI_ calls).
 * The context is created once per process on first use and destroyed at MPI_Finalize (through
 * an attribute delete callback on MPI_COMM_SELF, which MPI runs first thing in MPI_Finalize);
 * every worker/endpoint a part creates must be gone by then (parts free theirs when their
 * windows/communicators are freed; what the program left is freed in MPI_Finalize before:
 * windows by their own MPI_COMM_SELF attribute, set after this one).
 * A shared service (src/services/): below the backends and the message layer, which both
 * use it; it uses nothing above src/common/. */
#ifndef CLAMPI_SERVICES_UCX_CONTEXT_H
#define CLAMPI_SERVICES_UCX_CONTEXT_H

#include <mpi.h>
#include <stddef.h>
#include <ucp/api/ucp.h>

#include "services/ucx/service.h"

/* Process-wide UCX context, created on first use (thread-safe, pthread_once), features
 * RMA | AMO32 | AMO64 | AM, mt_workers_shared = 1. Returns MPI_SUCCESS, or MPI_ERR_OTHER
 * (with a message on stderr) if UCX cannot start; MPI must be initialized. */
int clampi_ucx_context(ucp_context_h *ctx);

/* A worker on that context with the given thread mode (UCS_THREAD_MODE_SINGLE /
 * SERIALIZED / MULTI). Destroy with ucp_worker_destroy. Returns an MPI error code. */
int clampi_ucx_worker_create(ucs_thread_mode_t mode, ucp_worker_h *worker);

/* Collective over comm: exchanges the worker addresses of all ranks (allgather of lengths,
 * allgatherv of addresses) and returns them packed: *blob holds them back to back,
 * (*offsets)[r] is where rank r's address starts, (*offsets)[size] the total length.
 * The caller frees *blob and *offsets with free(). Returns an MPI error code. */
int clampi_ucx_worker_address_exchange(MPI_Comm comm, ucp_worker_h worker, void **blob, size_t **offsets);
/* An endpoint of worker to the worker whose address (as exchanged above) is addr; NULL if
 * UCX refuses it. Local: no MPI call. */
ucp_ep_h clampi_ucx_ep_create(ucp_worker_h worker, const void *addr);

/* Collective over comm: exchange worker addresses and create one endpoint per rank of comm
 * (eps[rank], own rank included). eps must hold comm_size entries. Returns an MPI error code
 * (MPI_ERR_OTHER if an endpoint cannot be created; then no endpoint is left open). */
int clampi_ucx_connect(MPI_Comm comm, ucp_worker_h worker, ucp_ep_h *eps);

/* Close endpoints (flush mode) and wait, progressing the worker. NULL entries are skipped. */
void clampi_ucx_disconnect(ucp_worker_h worker, ucp_ep_h *eps, int n);

/* Wait for a UCX request / status pointer as returned by the ucp_*_nbx calls (NULL = done,
 * UCS_PTR_IS_ERR = failed), progressing worker; releases the request. Returns its status.
 * Every round is noted on the worker's poller when the progress service may watch it
 * (clampi_ucx_poller_of, service.h), so a long wait keeps the service away from it. */
ucs_status_t clampi_ucx_wait(ucp_worker_h worker, void *request);

/* Collective over comm: a barrier that keeps progressing worker while it waits (MPI_Ibarrier
 * + MPI_Test loop), so that peers whose operations need this process's progress (software
 * RMA emulation over TCP, active messages) can finish before everyone moves on. worker may be
 * NULL (plain barrier). poller (may be NULL): the worker's, noted each round so that the
 * progress service keeps away (service.h). Returns an MPI error code. */
int clampi_ucx_barrier(MPI_Comm comm, ucp_worker_h worker, clampi_ucx_poller *poller);
/* The same wait for the largest *value over comm (MPI_Iallreduce with MPI_MAX, in place):
 * a barrier that also agrees on a flag. */
int clampi_ucx_agree_max(MPI_Comm comm, int *value, ucp_worker_h worker, clampi_ucx_poller *poller);

/* MPI error code for a UCX status (UCS_OK -> MPI_SUCCESS, otherwise MPI_ERR_OTHER). */
int clampi_ucx_status_to_mpi(ucs_status_t status);

#endif
