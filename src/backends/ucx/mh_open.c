/* Memory handles, peer side (the ext rows mh_open ... mh_cache_free): a handle received
 * from its owner becomes a clampi_mh_win on the parent window's endpoint to the owner. */
#include <stdlib.h>

#include "backends/ucx/intrinsic.h"
#include "backends/ucx/memhandle.h"
#include "backends/ucx/ucx_win.h"
#include "common/fnv.h"

typedef struct gen_cache {
    uint64_t sum; /* checksum of the packed rkey (0: empty) */
    ucp_rkey_h rkey;
} gen_cache;

/* Unpacking an owner's generation-table rkey maps its segment (shmat on shared memory:
 * hundreds of microseconds), so it is done once per (parent, owner, table) and kept until
 * the parent's free. */
static ucp_rkey_h cached_gen_rkey(const clampi_bwin *parent, void **cache, int owner, ucp_ep_h ep, const void *packed,
                                  uint32_t len) {
    if (!*cache && !(*cache = calloc((size_t)parent->nranks, sizeof(gen_cache)))) return NULL;
    gen_cache *c = (gen_cache *)*cache + owner;
    uint64_t sum = clampi_fnv1a64(packed, len) | 1; /* tells one owner's tables apart */
    if (c->sum == sum) return c->rkey;
    ucp_rkey_h rkey;
    if (ucp_ep_rkey_unpack(ep, packed, &rkey) != UCS_OK) return NULL;
    if (c->sum) ucp_rkey_destroy(c->rkey); /* the owner made a new table */
    c->sum = sum;
    c->rkey = rkey;
    return rkey;
}

void clampi_ucx_mh_cache_free(const clampi_bwin *parent, void *cache) {
    gen_cache *c = cache;
    if (!c) return;
    for (int r = 0; r < parent->nranks; r++)
        if (c[r].sum) ucp_rkey_destroy(c[r].rkey);
    free(c);
}

void *clampi_ucx_mh_open(clampi_bwin *parent, const clampi_backend_mh *h, void **cache) {
    clampi_ucx_win *u = clampi_ucx_of(parent);
    clampi_mh_win *m = u ? calloc(1, sizeof *m) : NULL;
    if (!m) return NULL;
    m->target = h->target;
    m->base = h->base;
    m->size = h->size;
    m->disp_unit = h->disp_unit;
    m->gen_addr = h->gen_addr;
    m->md_map = clampi_ucx_rkey_md_map(h->rkey, h->rkey_len);
    m->generation = h->generation;
    m->slot = h->slot;
    m->worker = u->main.worker;
    m->ep = clampi_ucx_lane_ep(u, &u->main, h->target);
    m->direct = h->direct;
    m->direct_lo = h->direct_lo;
    m->direct_hi = h->direct_hi;
    if (!m->ep || ucp_ep_rkey_unpack(m->ep, h->rkey, &m->rkey) != UCS_OK) {
        free(m);
        return NULL;
    }
    if (!(m->gen_rkey = cached_gen_rkey(parent, cache, h->target, m->ep, h->gen_rkey, h->gen_rkey_len))) {
        ucp_rkey_destroy(m->rkey);
        free(m);
        return NULL;
    }
    /* The liveness word by pointer where it can be: our own table, or the owner's table
     * segment mapped by UCX's shared-memory transport. */
    void *gp = NULL;
    if (h->direct_live)
        m->gen_ptr = h->direct_live;
    else if (h->target == parent->rank)
        m->gen_ptr = (const uint64_t *)(uintptr_t)h->gen_addr;
    else if (ucp_rkey_ptr(m->gen_rkey, h->gen_addr, &gp) == UCS_OK)
        m->gen_ptr = gp;
    m->direct_close = h->direct_close; /* owned from here on */
    m->direct_ref = h->direct_ref;
    return m;
}

void clampi_ucx_mh_close(void *handle) {
    clampi_mh_win *m = handle;
    clampi_ucx_mh_unsubscribe(m);
    ucp_rkey_destroy(m->rkey);
    if (m->direct_close) m->direct_close(m->direct_ref);
    free(m);
}
