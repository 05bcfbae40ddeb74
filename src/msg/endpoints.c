/* The message worker's endpoints: one per peer process, shared by every communicator the
 * UCX carrier serves (indexed by rank in MPI_COMM_WORLD), and made when this process first
 * sends to that peer (a message, or a synchronous send's acknowledgement). Enabling a
 * communicator only exchanges worker addresses when some member lacks an endpoint or the
 * address to make one, so creating and freeing communicators costs a few collectives, not
 * a connection per pair and communicator; freeing one closes nothing. A process holds
 * connections only to the peers it talks to: a halo exchange in a 10,000-rank job makes a
 * handful, where endpoints to every rank would mean as many connections (over TCP, as
 * many sockets, beyond the usual limit of 1,024 open files). A communicator with a process
 * outside MPI_COMM_WORLD (dynamic processes) gets endpoints of its own at enabling, closed
 * with it. The shared ones go at MPI_Finalize. */
#include <stdlib.h>

#include "services/ucx/context.h"
#include "services/ucx/peers.h"
#include "msg/msg_internal.h"

static clampi_ucx_peers peers = CLAMPI_UCX_PEERS_INIT;

ucp_ep_h clampi_msg_ep_connect(clampi_mcomm *mc, int r) {
    if (!mc->world) return NULL; /* endpoints of its own: all made at enabling */
    ucp_ep_h ep = clampi_ucx_peers_ep(&peers, mc->world[r]);
    if (ep) __atomic_store_n(&mc->eps[r], ep, __ATOMIC_RELEASE);
    return ep;
}

uint64_t clampi_msg_eps_made(void) { return clampi_ucx_peers_made(&peers); }

int clampi_msg_eps_get(MPI_Comm comm, int known, ucp_ep_h *eps, int *shared, int **world) {
    pthread_mutex_lock(&peers.lock);
    peers.worker = clampi_msg_worker();
    pthread_mutex_unlock(&peers.lock);
    int rc = known ? clampi_ucx_peers_known(&peers, comm, world) : clampi_ucx_peers_join(&peers, comm, world);
    if (rc != MPI_SUCCESS) return rc;
    if (!*world) { /* endpoints of its own */
        *shared = 0;
        return clampi_ucx_connect(comm, peers.worker, eps);
    }
    int size;
    PMPI_Comm_size(comm, &size);
    pthread_mutex_lock(&peers.lock);
    for (int r = 0; r < size; r++) eps[r] = peers.ep[(*world)[r]]; /* NULL: made at first use */
    pthread_mutex_unlock(&peers.lock);
    *shared = 1;
    return MPI_SUCCESS;
}

void clampi_msg_eps_close_all(void) { clampi_ucx_peers_close_all(&peers); }
