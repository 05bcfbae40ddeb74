/* Process-wide UCX context shared by every clampi part that drives UCX (see context.h). */
#include "services/ucx/context.h"

#include "services/finalize.h"
#include "services/ucx/process_worker.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t context_once = PTHREAD_ONCE_INIT;
static ucp_context_h context;
static ucs_status_t context_status = UCS_ERR_NO_RESOURCE;

/* A step of MPI_Finalize (services/finalize.h): every UCX window is gone by then, those
 * the program left freed by the step before it. */
static void context_finalize(void) {
    clampi_ucx_process_workers_destroy();
    if (context) {
        ucp_cleanup(context);
        context = NULL;
    }
}

static void context_init(void) {
    ucp_config_t *config;
    context_status = ucp_config_read(NULL, NULL, &config);
    if (context_status != UCS_OK) return;
    /* UCX 1.13's native TCP put (PUT_REQ/PUT_ACK) crashes the target's receive path when a
     * thread's worker and the process worker of the same rank talk to each other while
     * a progress thread polls (seen 1 run in 8 of the thread-scope differential test over
     * UCX_TLS=tcp, never with it off in 60 runs). clampi's context emulates puts with active
     * messages instead, unless the user chose otherwise; MPI's own UCX context is untouched. */
    if (!getenv("UCX_TCP_PUT_ENABLE")) ucp_config_modify(config, "PUT_ENABLE", "n");
    ucp_params_t params;
    memset(&params, 0, sizeof params);
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    /* WAKEUP: the progress service sleeps on the workers' event fds (service.h) */
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 1;
    context_status = ucp_init(&params, config, &context);
    ucp_config_release(config);
    if (context_status != UCS_OK) {
        context = NULL;
        return;
    }
    clampi_finalize_at(CLAMPI_FINALIZE_UCX, context_finalize);
}

int clampi_ucx_context(ucp_context_h *ctx) {
    pthread_once(&context_once, context_init);
    if (context_status != UCS_OK || !context) {
        fprintf(stderr, "clampi: UCX could not start: %s\n", ucs_status_string(context_status));
        return MPI_ERR_OTHER;
    }
    *ctx = context;
    return MPI_SUCCESS;
}

int clampi_ucx_status_to_mpi(ucs_status_t status) { return status == UCS_OK ? MPI_SUCCESS : MPI_ERR_OTHER; }

int clampi_ucx_worker_create(ucs_thread_mode_t mode, ucp_worker_h *worker) {
    ucp_context_h ctx;
    int rc = clampi_ucx_context(&ctx);
    if (rc != MPI_SUCCESS) return rc;
    ucp_worker_params_t params;
    memset(&params, 0, sizeof params);
    params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    params.thread_mode = mode;
    ucs_status_t st = ucp_worker_create(ctx, &params, worker);
    if (st != UCS_OK) {
        fprintf(stderr, "clampi: ucp_worker_create: %s\n", ucs_status_string(st));
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

int clampi_ucx_worker_address_exchange(MPI_Comm comm, ucp_worker_h worker, void **blob, size_t **offsets) {
    ucp_address_t *addr;
    size_t addr_len;
    if (ucp_worker_get_address(worker, &addr, &addr_len) != UCS_OK) return MPI_ERR_OTHER;
    int size, rc = MPI_ERR_NO_MEM;
    PMPI_Comm_size(comm, &size);
    int *lens = malloc(sizeof(int) * (size_t)size);
    int *displs = malloc(sizeof(int) * (size_t)size);
    size_t *offs = malloc(sizeof(size_t) * ((size_t)size + 1));
    char *all = NULL;
    int mylen = (int)addr_len;
    /* Every rank must reach the same collectives, even when a malloc failed: agree first. */
    int ok = lens && displs && offs, all_ok;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (!all_ok) goto out;
    rc = PMPI_Allgather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, comm);
    if (rc != MPI_SUCCESS) goto out;
    size_t total = 0;
    for (int r = 0; r < size; r++) {
        displs[r] = (int)total;
        offs[r] = total;
        total += (size_t)lens[r];
    }
    offs[size] = total;
    all = malloc(total ? total : 1);
    ok = all != NULL;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (!all_ok) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    rc = PMPI_Allgatherv(addr, mylen, MPI_BYTE, all, lens, displs, MPI_BYTE, comm);
out:
    ucp_worker_release_address(worker, addr);
    free(lens);
    free(displs);
    if (rc != MPI_SUCCESS) {
        free(all);
        free(offs);
        return rc;
    }
    *blob = all;
    *offsets = offs;
    return MPI_SUCCESS;
}

ucp_ep_h clampi_ucx_ep_create(ucp_worker_h worker, const void *addr) {
    ucp_ep_params_t params;
    memset(&params, 0, sizeof params);
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    params.address = (const ucp_address_t *)addr;
    ucp_ep_h ep = NULL;
    return ucp_ep_create(worker, &params, &ep) == UCS_OK ? ep : NULL;
}

int clampi_ucx_connect(MPI_Comm comm, ucp_worker_h worker, ucp_ep_h *eps) {
    void *blob;
    size_t *offs;
    int rc = clampi_ucx_worker_address_exchange(comm, worker, &blob, &offs);
    if (rc != MPI_SUCCESS) return rc;
    int size;
    PMPI_Comm_size(comm, &size);
    int ok = 1;
    for (int r = 0; r < size; r++) {
        eps[r] = ok ? clampi_ucx_ep_create(worker, (char *)blob + offs[r]) : NULL;
        ok = eps[r] != NULL;
    }
    free(blob);
    free(offs);
    int all_ok;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (!all_ok) {
        clampi_ucx_disconnect(worker, eps, size);
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

void clampi_ucx_disconnect(ucp_worker_h worker, ucp_ep_h *eps, int n) {
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    param.op_attr_mask = 0; /* no UCP_EP_CLOSE_FLAG_FORCE: flush mode, pending operations complete */
    void **reqs = calloc((size_t)(n > 0 ? n : 1), sizeof(void *));
    for (int r = 0; r < n; r++) {
        if (!eps[r]) continue;
        void *req = ucp_ep_close_nbx(eps[r], &param);
        eps[r] = NULL;
        if (reqs)
            reqs[r] = req;
        else
            clampi_ucx_wait(worker, req);
    }
    if (reqs) {
        for (int r = 0; r < n; r++) clampi_ucx_wait(worker, reqs[r]);
        free(reqs);
    }
}

ucs_status_t clampi_ucx_wait(ucp_worker_h worker, void *request) {
    if (request == NULL) return UCS_OK;
    if (UCS_PTR_IS_ERR(request)) return UCS_PTR_STATUS(request);
    clampi_ucx_poller *poller = clampi_ucx_poller_of(worker); /* NULL: the service never watches it */
    ucs_status_t st;
    while ((st = ucp_request_check_status(request)) == UCS_INPROGRESS) { clampi_ucx_poller_progress(poller, worker); }
    ucp_request_free(request);
    return st;
}

static int wait_progressing(MPI_Request req, ucp_worker_h worker, clampi_ucx_poller *poller) {
    int rc, done = 0;
    while (!done) {
        if (worker) { /* a noted poll must progress: the service stays away meanwhile */
            clampi_ucx_poller_progress(poller, worker);
        }
        rc = PMPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

int clampi_ucx_barrier(MPI_Comm comm, ucp_worker_h worker, clampi_ucx_poller *poller) {
    MPI_Request req;
    int rc = PMPI_Ibarrier(comm, &req);
    return rc != MPI_SUCCESS ? rc : wait_progressing(req, worker, poller);
}

int clampi_ucx_agree_max(MPI_Comm comm, int *value, ucp_worker_h worker, clampi_ucx_poller *poller) {
    MPI_Request req;
    int rc = PMPI_Iallreduce(MPI_IN_PLACE, value, 1, MPI_INT, MPI_MAX, comm, &req);
    return rc != MPI_SUCCESS ? rc : wait_progressing(req, worker, poller);
}
