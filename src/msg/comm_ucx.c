/* A communicator on the UCX carrier: its endpoints when it is enabled, its barrier, and
 * their closing when it goes (forced at MPI_Finalize, in the background when a retired
 * communicator is let go: a flush-mode close may need its peer's progress, and nobody
 * waits for it inside a program's call). Built only with UCX. */
#include <stdlib.h>
#include <string.h>

#include "services/ucx/context.h"
#include "msg/msg_internal.h"

int clampi_msg_ucx_enable(clampi_mcomm *mc) {
    mc->eps = calloc((size_t)mc->size, sizeof *mc->eps);
    mc->seq_out = calloc((size_t)mc->size, sizeof *mc->seq_out);
    mc->seq_in = calloc((size_t)mc->size, sizeof *mc->seq_in);
    mc->stash = calloc((size_t)mc->size, sizeof *mc->stash);
    return !mc->eps || !mc->seq_out || !mc->seq_in || !mc->stash ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

int clampi_msg_ucx_connect(clampi_mcomm *mc, int known) {
    ucp_ep_h *eps = mc->eps;
    mc->eps = NULL;
    /* collective (unless known); all-or-nothing */
    int err = clampi_msg_eps_get(mc->comm, known, eps, &mc->eps_shared, &mc->world);
    if (err != MPI_SUCCESS) {
        free(eps);
        return err;
    }
    mc->eps = eps;
    return MPI_SUCCESS;
}

int clampi_msg_ucx_barrier(clampi_mcomm *mc) {
    return clampi_ucx_barrier(mc->comm, clampi_msg_worker(), clampi_msg_poller());
}

/* Without a collective, a flush-mode close may wait forever for a peer that no longer
 * progresses (it is in MPI_Finalize or a plain MPI call): close forcibly. */
void clampi_msg_ucx_close_forced(clampi_mcomm *mc) {
    if (!mc->eps || mc->eps_shared) return;
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_EP_CLOSE_FLAG_FORCE;
    for (int r = 0; r < mc->size; r++)
        if (mc->eps[r]) {
            clampi_ucx_wait(clampi_msg_worker(), ucp_ep_close_nbx(mc->eps[r], &p));
            mc->eps[r] = NULL;
        }
}

void clampi_msg_ucx_disconnect(clampi_mcomm *mc) {
    if (mc->eps && !mc->eps_shared) clampi_ucx_disconnect(clampi_msg_worker(), mc->eps, mc->size);
}

/* Endpoint closes started by clampi_msg_ucx_close_later, finished by later sweeps; each
 * counts in clampi_msg_retired_n. The caller holds retire.c's lock. */
typedef struct closing {
    void *req;
    struct closing *next;
} closing;
static closing *closes;

void clampi_msg_ucx_close_later(clampi_mcomm *mc) {
    ucp_ep_h *eps = mc->eps_shared ? NULL : mc->eps; /* shared ones stay (endpoints.c) */
    if (eps) mc->eps = NULL;
    for (int r = 0; eps && r < mc->size; r++) {
        if (!eps[r]) continue;
        ucp_request_param_t p;
        memset(&p, 0, sizeof p); /* flush mode: what is queued on it goes out first */
        void *req = ucp_ep_close_nbx(eps[r], &p);
        closing *c = req && !UCS_PTR_IS_ERR(req) ? malloc(sizeof *c) : NULL;
        if (c) {
            c->req = req;
            c->next = closes;
            closes = c;
            atomic_fetch_add(&clampi_msg_retired_n, 1);
        } else if (req && !UCS_PTR_IS_ERR(req)) {
            clampi_ucx_wait(clampi_msg_worker(), req);
        }
    }
    free(eps);
}

/* Finished closes freed; at MPI_Finalize (all) the rest too: a peer may have gone, and
 * UCX releases a request freed in flight when it completes (or with the worker). */
void clampi_msg_ucx_closes_reap(int all) {
    for (closing **p = &closes; *p;) {
        closing *c = *p;
        if (!all && ucp_request_check_status(c->req) == UCS_INPROGRESS) {
            p = &c->next;
            continue;
        }
        ucp_request_free(c->req);
        *p = c->next;
        free(c);
        atomic_fetch_sub(&clampi_msg_retired_n, 1);
    }
}
