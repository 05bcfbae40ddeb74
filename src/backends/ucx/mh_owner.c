/* Memory handles, owner side (the ext rows mh_register, mh_live, mh_table_free): the
 * regions a dynamic window's process made handles for, each registered with UCX, and the
 * generation table that says which handles are live (see memhandle.h for the design). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/ucx/memhandle.h"
#include "backends/ucx/ucx_win.h"
#include "services/ucx/context.h"

typedef struct mh_slot {
    ucp_mem_h memh; /* registration of the region (NULL: slot free) */
    void *rkey;     /* packed rkey of the region */
    size_t rkey_len;
} mh_slot;

typedef struct mh_table {
    pthread_mutex_t lock;
    uint64_t *gen; /* CLAMPI_MH_SLOTS words, registered */
    ucp_mem_h gen_memh;
    void *gen_rkey;
    size_t gen_rkey_len;
    uint64_t next_generation;
    struct clampi_ucx_win *u; /* the window's UCX state: a release reaches the peers' copies */
    mh_slot slot[CLAMPI_MH_SLOTS];
} mh_table;

static int map_region(ucp_context_h ctx, void *base, size_t size, ucp_mem_h *memh, void **rkey, size_t *rkey_len) {
    ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                              .address = base,
                              .length = size ? size : 1};
    if (ucp_mem_map(ctx, &p, memh) != UCS_OK) return -1;
    if (ucp_rkey_pack(ctx, *memh, rkey, rkey_len) != UCS_OK) {
        ucp_mem_unmap(ctx, *memh);
        return -1;
    }
    return 0;
}

/* The generation table is allocated by UCX (UCP_MEM_MAP_ALLOCATE): on shared memory that
 * puts it in a segment peers map, so the liveness get of a flush is a load, not a syscall. */
static int map_table(ucp_context_h ctx, mh_table *t) {
    const size_t bytes = CLAMPI_MH_SLOTS * sizeof *t->gen;
    ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                            UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                              .address = NULL,
                              .length = bytes,
                              .flags = UCP_MEM_MAP_ALLOCATE};
    if (ucp_mem_map(ctx, &p, &t->gen_memh) != UCS_OK) return -1;
    ucp_mem_attr_t a = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
    if (ucp_mem_query(t->gen_memh, &a) != UCS_OK ||
        ucp_rkey_pack(ctx, t->gen_memh, &t->gen_rkey, &t->gen_rkey_len) != UCS_OK) {
        ucp_mem_unmap(ctx, t->gen_memh);
        return -1;
    }
    t->gen = a.address;
    memset(t->gen, 0, bytes);
    return 0;
}

static mh_table *table_make(ucp_context_h ctx) {
    mh_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (map_table(ctx, t) != 0) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    /* Generations differ across tables and runs: a handle from an earlier window at the same
     * address, or a released slot reused, never matches by accident. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    t->next_generation = ((uint64_t)ts.tv_nsec << 20) ^ ((uint64_t)ts.tv_sec << 40) ^ (uintptr_t)t;
    return t;
}

static void release_slot(ucp_context_h ctx, mh_table *t, uint32_t s) {
    __atomic_store_n(&t->gen[s], 0, __ATOMIC_RELEASE);
    ucp_rkey_buffer_release(t->slot[s].rkey);
    ucp_mem_unmap(ctx, t->slot[s].memh);
    memset(&t->slot[s], 0, sizeof t->slot[s]);
}

void clampi_ucx_mh_table_free(void *table) {
    mh_table *t = table;
    if (!t) return;
    ucp_context_h ctx;
    if (clampi_ucx_context(&ctx) == MPI_SUCCESS) {
        for (uint32_t s = 0; s < CLAMPI_MH_SLOTS; s++)
            if (t->slot[s].memh) release_slot(ctx, t, s);
        ucp_rkey_buffer_release(t->gen_rkey);
        ucp_mem_unmap(ctx, t->gen_memh);
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
}

int clampi_ucx_mh_register(const clampi_bwin *b, void **table, void *base, size_t size, clampi_backend_mh *h) {
    ucp_context_h ctx;
    if (clampi_ucx_context(&ctx) != MPI_SUCCESS) return CLAMPI_E_NOMEM;
    if (!*table && !(*table = table_make(ctx))) return CLAMPI_E_NOMEM;
    mh_table *t = *table;
    t->u = clampi_ucx_of(b);
    pthread_mutex_lock(&t->lock);
    uint32_t s = 0;
    while (s < CLAMPI_MH_SLOTS && t->slot[s].memh) s++;
    int rc = MPI_SUCCESS;
    if (s == CLAMPI_MH_SLOTS) {
        rc = CLAMPI_E_NOMEM;
    } else if (map_region(ctx, base, size, &t->slot[s].memh, &t->slot[s].rkey, &t->slot[s].rkey_len) != 0) {
        memset(&t->slot[s], 0, sizeof t->slot[s]);
        rc = CLAMPI_E_NOMEM;
    } else {
        uint64_t generation = ++t->next_generation;
        if (generation == 0) generation = ++t->next_generation;
        h->slot = s;
        h->generation = generation;
        h->gen_addr = (uint64_t)(uintptr_t)&t->gen[s];
        h->rkey = t->slot[s].rkey;
        h->rkey_len = (uint32_t)t->slot[s].rkey_len;
        h->gen_rkey = t->gen_rkey;
        h->gen_rkey_len = (uint32_t)t->gen_rkey_len;
        __atomic_store_n(&t->gen[s], generation, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int clampi_ucx_mh_live(void *table, const clampi_backend_mh *h, int release) {
    mh_table *t = table;
    if (!t || h->slot >= CLAMPI_MH_SLOTS) return 0;
    ucp_context_h ctx;
    if (release && clampi_ucx_context(&ctx) != MPI_SUCCESS) return 0;
    pthread_mutex_lock(&t->lock);
    int live = t->slot[h->slot].memh && __atomic_load_n(&t->gen[h->slot], __ATOMIC_ACQUIRE) == h->generation;
    if (live && release) {
        release_slot(ctx, t, h->slot);
        /* under the lock: before the slot is reused */
        if (clampi_ucx_mh_invalidate(t->u, h->slot, h->generation)) live = -1;
    }
    pthread_mutex_unlock(&t->lock);
    return live;
}
