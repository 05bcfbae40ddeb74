/* Memory handles on UCX windows (the Quo Vadis RMA paper §4.2).
 *
 * Owner side (mh_owner.c): every dynamic window that created a handle has a generation
 * table: an array of 64-bit words in registered memory. A handle names one word (slot) and
 * the value it holds while the handle is live; releasing the handle zeroes the word (and
 * unmaps the region), so a handle is dead for everyone as soon as its owner releases it.
 *
 * Peer side (mh_open.c, mh_ops.c): a memory-handle window is a variant of a UCX window:
 * the parent's UCX state (b->state, shared) plus the handle (b->variant, a clampi_mh_win),
 * on its own operation table. Its put and get go straight to the handle's rkey on the
 * parent's endpoint to the owner. Every operation first checks the generation word
 * (clampi_ucx_mh_check_live): a load where the word is reachable by pointer (same process,
 * or UCX mapped the owner's table segment over shared memory), else a blocking 8-byte get
 * (one round trip: over TCP, where UCX's emulated RMA and cma reach the memory without
 * looking at any registration, the owner's ucp_mem_unmap cannot revoke access). A mismatch
 * fails the operation and every later one with MPI_ERR_RMA_RANGE. Every flush fetches the
 * word too. Race left: an operation whose check read the word before the owner's release
 * stored 0 can still land after release returns (docs/rma-extensions.md).
 *
 * Between nodes that get is a round trip per operation. So a window that keeps checking
 * (CLAMPI_MH_SUBSCRIBE_AFTER remote checks) subscribes (mh_invalidate.c): it keeps a copy of
 * the word in its parent's control block and records itself in the owner's; the owner's
 * release clears every recorded copy (a compare-and-swap from the generation to 0) before
 * it returns. The copy is then the word: a load per operation, and an operation ordered
 * after the release still fails at the call. */
#ifndef CLAMPI_BACKENDS_UCX_MEMHANDLE_H
#define CLAMPI_BACKENDS_UCX_MEMHANDLE_H
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "backends/backend.h"
#include "services/ucx/service.h"

struct clampi_ucx_win;

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
    unsigned char *direct;   /* bytes [direct_lo, direct_hi) of the region are mapped here at
                                direct + offset (node-shared heap, or the owner's pages moved
                                onto a memory file): put and get there are load/store */
    uint64_t direct_lo, direct_hi;
    uint64_t direct_ops;             /* puts and gets done by load/store (a count for the tests, not atomic) */
    void (*direct_close)(void *ref); /* ends the use of the mapping, with the handle */
    void *direct_ref;
    /* a copy of the liveness word kept here (mh_invalidate.c) */
    uint32_t slot;          /* the handle's slot in the owner's generation table */
    unsigned remote_checks; /* liveness words fetched from the owner (a count for the tests) */
    int subscribe_tried;    /* set once: the subscription was tried */
    int mirror;             /* 1 + the copy's index in the parent's ctl->mh_mirror, 0: none */
    int sub;                /* 1 + the record's index in the owner's ctl->mh_sub */
    uint64_t sub_code;      /* what the record holds */
} clampi_mh_win;

#define CLAMPI_MH_SLOTS 4096 /* live handles per dynamic window and process */

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
/* The owner's liveness word fetched into *g (one round trip; counted in remote_checks). */
ucs_status_t clampi_ucx_mh_fetch_word(clampi_mh_win *m, uint64_t *g);

/* mh_invalidate.c. Peer: after CLAMPI_MH_SUBSCRIBE_AFTER fetched words, keep a copy of the
 * word (MPI_SUCCESS whether or not a copy could be kept; the code of MPI_ERR_RMA_RANGE if
 * the handle was found released); at close, the owner's record goes. Owner: a released
 * handle's copies are cleared at every peer that keeps one (a peer that cannot be reached
 * is counted: the release then reports the failure). */
int clampi_ucx_mh_subscribe(clampi_mh_win *m);
void clampi_ucx_mh_unsubscribe(clampi_mh_win *m);
/* The window read WORD, found released: if WORD is its copy, the copy's entry goes back now. */
void clampi_ucx_mh_copy_read_dead(clampi_mh_win *m, const uint64_t *word);
int clampi_ucx_mh_invalidate(struct clampi_ucx_win *u, uint32_t slot, uint64_t generation); /* copies not cleared */

/* The ext rows of memory handles (backend.h): owner side (mh_owner.c), peer side (mh_open.c). */
int clampi_ucx_mh_register(const clampi_bwin *b, void **table, void *base, size_t size, clampi_backend_mh *h);
int clampi_ucx_mh_live(void *table, const clampi_backend_mh *h, int release);
void clampi_ucx_mh_table_free(void *table);
void *clampi_ucx_mh_open(clampi_bwin *parent, const clampi_backend_mh *h, void **cache);
void clampi_ucx_mh_close(void *handle);
void clampi_ucx_mh_cache_free(const clampi_bwin *parent, void *cache);
#endif
