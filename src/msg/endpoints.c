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
#include "msg/msg_internal.h"

static pthread_mutex_t eps_lock = PTHREAD_MUTEX_INITIALIZER;
static ucp_ep_h *by_world;   /* under eps_lock; world_size entries */
static void **addr_by_world; /* a peer's worker address until its endpoint is made (eps_lock) */
static int world_size;
static _Atomic uint64_t eps_made;

/* comm's ranks in MPI_COMM_WORLD (MPI_UNDEFINED for a process outside it). */
static int world_ranks(MPI_Comm comm, int size, int *w) {
    MPI_Group g, wg;
    int rc = PMPI_Comm_group(comm, &g);
    if (rc != MPI_SUCCESS) return rc;
    rc = PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    if (rc == MPI_SUCCESS) {
        int *r = malloc(sizeof *r * (size_t)size);
        if (!r) rc = MPI_ERR_NO_MEM;
        for (int i = 0; r && i < size; i++) r[i] = i;
        if (r) rc = PMPI_Group_translate_ranks(g, size, r, wg, w);
        free(r);
        PMPI_Group_free(&wg);
    }
    PMPI_Group_free(&g);
    return rc;
}

/* The worker addresses of comm's members that have neither an endpoint nor an address
 * here, kept for clampi_msg_ep_connect. 1 if all kept. */
static int fill(MPI_Comm comm, ucp_worker_h worker, int size, const int *w) {
    void *blob;
    size_t *offs;
    if (clampi_ucx_worker_address_exchange(comm, worker, &blob, &offs) != MPI_SUCCESS) return 0;
    int ok = 1;
    pthread_mutex_lock(&eps_lock);
    for (int r = 0; ok && r < size; r++) {
        if (by_world[w[r]] || addr_by_world[w[r]]) continue;
        size_t len = offs[r + 1] - offs[r];
        void *a = malloc(len);
        if (a) memcpy(a, (char *)blob + offs[r], len);
        addr_by_world[w[r]] = a;
        ok = a != NULL;
    }
    pthread_mutex_unlock(&eps_lock);
    free(blob);
    free(offs);
    return ok;
}

ucp_ep_h clampi_msg_ep_connect(clampi_mcomm *mc, int r) {
    if (!mc->world) return NULL; /* endpoints of its own: all made at enabling */
    int w = mc->world[r];
    pthread_mutex_lock(&eps_lock);
    ucp_ep_h ep = by_world ? by_world[w] : NULL;
    if (!ep && by_world && addr_by_world[w]) {
        ep = clampi_ucx_ep_create(clampi_msg_worker(), addr_by_world[w]);
        if (ep) { /* else the address stays: a later send tries again */
            by_world[w] = ep;
            free(addr_by_world[w]);
            addr_by_world[w] = NULL;
            atomic_fetch_add_explicit(&eps_made, 1, memory_order_relaxed);
        }
    }
    if (ep) __atomic_store_n(&mc->eps[r], ep, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&eps_lock);
    return ep;
}

uint64_t clampi_msg_eps_made(void) { return atomic_load_explicit(&eps_made, memory_order_relaxed); }

int clampi_msg_eps_get(MPI_Comm comm, ucp_ep_h *eps, int *shared, int **world) {
    ucp_worker_h worker = clampi_msg_worker();
    int size, rc;
    PMPI_Comm_size(comm, &size);
    int *w = malloc(sizeof *w * (size_t)size), need[2] = {0, 0}, all[2]; /* {outside WORLD, missing} */
    rc = w ? world_ranks(comm, size, w) : MPI_ERR_NO_MEM;
    pthread_mutex_lock(&eps_lock);
    *world = NULL;
    if (rc == MPI_SUCCESS && !by_world) {
        PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
        by_world = calloc((size_t)world_size, sizeof *by_world);
        addr_by_world = calloc((size_t)world_size, sizeof *addr_by_world);
        if (!addr_by_world) {
            free(by_world);
            by_world = NULL;
        }
    }
    need[0] = rc != MPI_SUCCESS || !by_world;
    for (int r = 0; !need[0] && r < size; r++) {
        if (w[r] == MPI_UNDEFINED || w[r] < 0 || w[r] >= world_size)
            need[0] = 1;
        else if (!by_world[w[r]] && !addr_by_world[w[r]])
            need[1] = 1;
    }
    pthread_mutex_unlock(&eps_lock);
    rc = PMPI_Allreduce(need, all, 2, MPI_INT, MPI_MAX, comm);
    if (rc == MPI_SUCCESS && all[0]) { /* endpoints of its own */
        free(w);
        *shared = 0;
        return clampi_ucx_connect(comm, worker, eps);
    }
    int ok = rc == MPI_SUCCESS, all_ok = 0;
    if (ok && all[1]) {
        ok = fill(comm, worker, size, w);
        rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
        if (rc == MPI_SUCCESS && !all_ok) rc = MPI_ERR_OTHER;
    }
    if (rc == MPI_SUCCESS) {
        pthread_mutex_lock(&eps_lock);
        for (int r = 0; r < size; r++) eps[r] = by_world[w[r]]; /* NULL: made at first use */
        pthread_mutex_unlock(&eps_lock);
        *shared = 1;
        *world = w;
        return rc;
    }
    free(w);
    return rc;
}

void clampi_msg_eps_close_all(void) {
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_EP_CLOSE_FLAG_FORCE; /* MPI_Finalize: the peers may have gone */
    pthread_mutex_lock(&eps_lock);
    for (int r = 0; by_world && r < world_size; r++) {
        if (by_world[r]) clampi_ucx_wait(clampi_msg_worker(), ucp_ep_close_nbx(by_world[r], &p));
        free(addr_by_world[r]);
    }
    free(by_world);
    free(addr_by_world);
    by_world = NULL;
    addr_by_world = NULL;
    pthread_mutex_unlock(&eps_lock);
}
