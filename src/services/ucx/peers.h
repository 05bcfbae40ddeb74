/* A worker's endpoints to other processes, one per peer (indexed by rank in
 * MPI_COMM_WORLD), shared by every communicator or window that reaches that peer through
 * the worker, and made when first asked for. Joining a communicator exchanges worker
 * addresses only when some member has neither an endpoint nor an address here, so
 * communicators and windows made over peers already known cost one small allreduce, not
 * an address exchange and a connection per pair. Endpoints stay until MPI_Finalize
 * (clampi_ucx_peers_close_all). A communicator with a process outside MPI_COMM_WORLD
 * (dynamic processes) cannot use the table: its users make endpoints of their own. */
#ifndef CLAMPI_SERVICES_UCX_PEERS_H
#define CLAMPI_SERVICES_UCX_PEERS_H
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

typedef struct clampi_ucx_peers {
    pthread_mutex_t lock;
    ucp_worker_h worker; /* set by the owner before the first join */
    int keep_addresses;  /* keep a peer's address after its endpoint is made (other workers connect with it) */
    int kind;            /* which of its owner's workers this is (the thread mode): a communicator's
                          * ranks share a table only if they all join tables of the same kind */
    int world_size;      /* 0 until the first join */
    ucp_ep_h *ep;        /* by MPI_COMM_WORLD rank; under lock */
    void **addr;         /* a peer's worker address (until its endpoint is made, or always) */
    signed char *direct; /* clampi_ucx_peers_one_sided's answer: 0 not asked yet, 1 yes, -1 no */
    uint64_t made;       /* endpoints made so far (atomic) */
    uint64_t exchanges;  /* joins that had to exchange addresses (atomic) */
} clampi_ucx_peers;

#define CLAMPI_UCX_PEERS_INIT \
    { .lock = PTHREAD_MUTEX_INITIALIZER }

/* Collective over comm: every member's endpoint or address is known here afterwards.
 * *world (malloc'd, the caller frees it) maps comm's ranks to MPI_COMM_WORLD's; NULL when a
 * member is outside MPI_COMM_WORLD or joins a table of another kind (then nothing was
 * exchanged: make endpoints of your own, clampi_ucx_connect). Everyone returns the same
 * code and the same answer. */
int clampi_ucx_peers_join(clampi_ucx_peers *p, MPI_Comm comm, int **world);
/* The same answer without a collective, for a communicator whose members all joined this
 * table before (a communicator made from one that joined and got *world): *world, or an
 * error if some member is unknown here (the caller agrees on it with the others). */
int clampi_ucx_peers_known(clampi_ucx_peers *p, MPI_Comm comm, int **world);
/* The endpoint to the process of MPI_COMM_WORLD rank w, made now if there is none yet;
 * NULL if UCX refuses it or its address was never joined. Not inside UCX's callbacks. */
ucp_ep_h clampi_ucx_peers_ep(clampi_ucx_peers *p, int w);
/* That process's worker address (keep_addresses tables only; NULL if never joined). */
const void *clampi_ucx_peers_address(clampi_ucx_peers *p, int w);
static inline uint64_t clampi_ucx_peers_made(clampi_ucx_peers *p) {
    return __atomic_load_n(&p->made, __ATOMIC_RELAXED);
}
/* 1 if UCX reaches the process of MPI_COMM_WORLD rank w with an RMA lane and an atomic
 * lane ("put[" and "amo#" in ucp_ep_print_info: no emulation by the peer's CPU), 0 if not,
 * -1 if there is no endpoint to it. Asked of UCX once per peer. */
int clampi_ucx_peers_one_sided(clampi_ucx_peers *p, int w);
/* The same question for any endpoint (asked of UCX every time). */
int clampi_ucx_ep_one_sided(ucp_ep_h ep);
/* MPI_Finalize: closes every endpoint (forced: the peers may have gone) and forgets all. */
void clampi_ucx_peers_close_all(clampi_ucx_peers *p);
#endif
