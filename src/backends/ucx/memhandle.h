/* Memory-handle windows (CMPIX_Win_from_memhandle, the Quo Vadis RMA paper §4.2) are a
 * variant of a UCX window: the parent's UCX state (b->state, shared) plus the handle
 * (b->variant, a clampi_mh_win), on their own operation table (mh_ops.c). Their put and
 * get go straight to the handle's rkey on the parent's endpoint to the owner; every
 * operation first checks the handle is still live (the owner's generation word, see
 * src/rmax/memhandle.h for the owner side). */
#ifndef CLAMPI_BACKENDS_UCX_MEMHANDLE_H
#define CLAMPI_BACKENDS_UCX_MEMHANDLE_H
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "backends/backend.h"

typedef struct clampi_mh_win {
    int target;          /* the owner: the only valid target rank */
    uint64_t base, size; /* the region at the owner */
    int disp_unit;
    ucp_ep_h ep; /* the parent's endpoint to the owner (process scope) */
    ucp_worker_h worker;
    ucp_rkey_h rkey, gen_rkey;
    uint64_t gen_addr, generation;
    uint64_t md_map;         /* memory domains of the region's rkey (op_intrinsic) */
    uint64_t gen_seen;       /* generation word fetched by the last flush */
    const uint64_t *gen_ptr; /* the owner's generation word as a local pointer (same process,
                                 or a segment mapped by shared memory: ucp_rkey_ptr), or NULL */
    int dead;                /* the handle was found released */
    int refs;                /* windows using it: the one from the handle and its duplicates */
    clampi_bwin *parent;     /* the window it was made from: accumulates run on its table */
    unsigned char *direct;   /* the region mapped in this process (a same-node peer's memory
                                in clampi's node-shared heap): put and get are load/store */
} clampi_mh_win;

/* The variant's table (mh_ops.c). */
extern const clampi_backend_ops clampi_backend_ucx_memhandle;

/* The handle of a memory-handle window, NULL for any other window. */
clampi_mh_win *clampi_ucx_mh_of(const clampi_bwin *b);
/* Makes b (a clone of parent's view sharing its UCX state) a memory-handle window on m. */
void clampi_ucx_mh_adopt(clampi_bwin *b, clampi_bwin *parent, clampi_mh_win *m);
/* A duplicate of a memory-handle window shares its handle. */
void clampi_ucx_mh_share(clampi_bwin *b, const clampi_bwin *from);
/* Drops b's use of the handle; the last user frees its rkey (gen_rkey is the parent's). */
void clampi_ucx_mh_release(clampi_bwin *b);
/* MPI_SUCCESS if the handle is live, else the code of MPI_ERR_RMA_RANGE (released: the
 * window is dead from then on) or of a UCX failure. */
int clampi_ucx_mh_check_live(clampi_mh_win *m);
#endif
