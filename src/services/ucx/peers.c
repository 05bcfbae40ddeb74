/* A worker's endpoints shared by peer process (see peers.h). */
#include "services/ucx/peers.h"

#include <stdio.h> /* open_memstream (POSIX.1-2008) */
#include <stdlib.h>
#include <string.h>

#include "services/ucx/context.h"

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

/* Keeps the addresses of comm's members that have neither an endpoint nor an address
 * here. 1 if all kept. */
static int fill(clampi_ucx_peers *p, MPI_Comm comm, int size, const int *w) {
    void *blob;
    size_t *offs;
    if (clampi_ucx_worker_address_exchange(comm, p->worker, &blob, &offs) != MPI_SUCCESS) return 0;
    int ok = 1;
    pthread_mutex_lock(&p->lock);
    for (int r = 0; ok && r < size; r++) {
        if (p->ep[w[r]] || p->addr[w[r]]) continue;
        size_t len = offs[r + 1] - offs[r];
        void *a = malloc(len ? len : 1);
        if (a) memcpy(a, (char *)blob + offs[r], len);
        p->addr[w[r]] = a;
        ok = a != NULL;
    }
    pthread_mutex_unlock(&p->lock);
    free(blob);
    free(offs);
    return ok;
}

/* What the table lacks for the member of MPI_COMM_WORLD rank w (p->lock held, table made):
 * 0 nothing, 1 its address (an exchange brings it), 2 it is outside MPI_COMM_WORLD. */
static int member_missing(const clampi_ucx_peers *p, int w) {
    if (w == MPI_UNDEFINED || w < 0 || w >= p->world_size) return 2;
    return !p->addr[w] && (!p->ep[w] || p->keep_addresses);
}

int clampi_ucx_peers_join(clampi_ucx_peers *p, MPI_Comm comm, int **world) {
    int size, rc;
    PMPI_Comm_size(comm, &size);
    /* {outside WORLD, missing, kind, -kind}: the maximum of each */
    int *w = malloc(sizeof *w * (size_t)size), need[4] = {0, 0, p->kind, -p->kind}, all[4];
    rc = w ? world_ranks(comm, size, w) : MPI_ERR_NO_MEM;
    *world = NULL;
    pthread_mutex_lock(&p->lock);
    if (rc == MPI_SUCCESS && !p->ep) {
        PMPI_Comm_size(MPI_COMM_WORLD, &p->world_size);
        p->ep = calloc((size_t)p->world_size, sizeof *p->ep);
        p->addr = calloc((size_t)p->world_size, sizeof *p->addr);
        p->direct = calloc((size_t)p->world_size, sizeof *p->direct);
        if (!p->ep || !p->addr || !p->direct) {
            free(p->ep), free(p->addr), free(p->direct);
            p->ep = NULL, p->addr = NULL, p->direct = NULL;
        }
    }
    need[0] = rc != MPI_SUCCESS || !p->ep;
    for (int r = 0; !need[0] && r < size; r++) {
        int m = member_missing(p, w[r]);
        if (m == 2)
            need[0] = 1;
        else if (m)
            need[1] = 1;
    }
    pthread_mutex_unlock(&p->lock);
    rc = PMPI_Allreduce(need, all, 4, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS || all[0] || all[2] != -all[3]) {
        free(w);
        return rc;
    }
    if (all[1]) {
        __atomic_add_fetch(&p->exchanges, 1, __ATOMIC_RELAXED);
        int ok = fill(p, comm, size, w), all_ok = 0;
        rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
        if (rc == MPI_SUCCESS && !all_ok) rc = MPI_ERR_OTHER;
    }
    if (rc != MPI_SUCCESS) {
        free(w);
        return rc;
    }
    *world = w;
    return MPI_SUCCESS;
}

int clampi_ucx_peers_known(clampi_ucx_peers *p, MPI_Comm comm, int **world) {
    int size;
    PMPI_Comm_size(comm, &size);
    int *w = malloc(sizeof *w * (size_t)size);
    int rc = w ? world_ranks(comm, size, w) : MPI_ERR_NO_MEM;
    *world = NULL;
    pthread_mutex_lock(&p->lock);
    if (rc == MPI_SUCCESS && !p->ep) rc = MPI_ERR_OTHER;
    for (int r = 0; rc == MPI_SUCCESS && r < size; r++)
        if (member_missing(p, w[r])) rc = MPI_ERR_OTHER; /* what clampi_ucx_peers_join would have exchanged */
    pthread_mutex_unlock(&p->lock);
    if (rc != MPI_SUCCESS) {
        free(w);
        return rc;
    }
    *world = w;
    return MPI_SUCCESS;
}

ucp_ep_h clampi_ucx_peers_ep(clampi_ucx_peers *p, int w) {
    pthread_mutex_lock(&p->lock);
    ucp_ep_h ep = p->ep && w >= 0 && w < p->world_size ? p->ep[w] : NULL;
    if (!ep && p->ep && w >= 0 && w < p->world_size && p->addr[w]) {
        ep = clampi_ucx_ep_create(p->worker, p->addr[w]);
        if (ep) { /* else the address stays: a later call tries again */
            p->ep[w] = ep;
            if (!p->keep_addresses) {
                free(p->addr[w]);
                p->addr[w] = NULL;
            }
            __atomic_add_fetch(&p->made, 1, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&p->lock);
    return ep;
}

const void *clampi_ucx_peers_address(clampi_ucx_peers *p, int w) {
    pthread_mutex_lock(&p->lock);
    const void *a = p->addr && w >= 0 && w < p->world_size ? p->addr[w] : NULL;
    pthread_mutex_unlock(&p->lock);
    return a;
}

int clampi_ucx_ep_one_sided(ucp_ep_h ep) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return 0;
    ucp_ep_print_info(ep, f);
    fclose(f);
    int yes = text && strstr(text, "put[") && strstr(text, "amo#");
    free(text);
    return yes;
}

int clampi_ucx_peers_one_sided(clampi_ucx_peers *p, int w) {
    ucp_ep_h ep = clampi_ucx_peers_ep(p, w);
    if (!ep) return -1;
    pthread_mutex_lock(&p->lock);
    if (!p->direct[w]) p->direct[w] = clampi_ucx_ep_one_sided(ep) ? 1 : -1;
    int yes = p->direct[w] > 0;
    pthread_mutex_unlock(&p->lock);
    return yes;
}

void clampi_ucx_peers_close_all(clampi_ucx_peers *p) {
    ucp_request_param_t param;
    memset(&param, 0, sizeof param);
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE; /* MPI_Finalize: the peers may have gone */
    pthread_mutex_lock(&p->lock);
    for (int r = 0; p->ep && r < p->world_size; r++) {
        if (p->ep[r]) clampi_ucx_wait(p->worker, ucp_ep_close_nbx(p->ep[r], &param));
        free(p->addr[r]);
    }
    free(p->ep), free(p->addr), free(p->direct);
    p->ep = NULL, p->addr = NULL, p->direct = NULL;
    p->world_size = 0;
    pthread_mutex_unlock(&p->lock);
}
