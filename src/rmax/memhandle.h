/* Memory handles for dynamic UCX windows (the Quo Vadis RMA paper, §4.2).
 *
 * Owner side: every dynamic window that created a handle has a generation table: an array
 * of 64-bit words in registered memory. A handle names one word (slot) and the value it
 * holds while the handle is live; CMPIX_Memhandle_release zeroes the word (and unmaps the
 * region), so a handle is dead for everyone as soon as its owner releases it.
 *
 * Peer side (src/backends/ucx/memhandle.h, a variant of UCX windows): a memory-handle window holds the unpacked rkeys and the parent's endpoint to
 * the owner. Every operation checks the generation word before it is issued
 * (clampi_ucx_mh_check_live): a load where the word is reachable by pointer (same process, or
 * UCX mapped the owner's table segment over shared memory), else a blocking 8-byte get (one
 * round trip: over TCP, where UCX's emulated RMA and cma reach the memory without looking
 * at any registration, the owner's ucp_mem_unmap cannot revoke access). A mismatch fails
 * the operation and every later one with MPI_ERR_RMA_RANGE. Every flush fetches the word
 * too. Race left: an operation whose check read the word before the owner's release stored
 * 0 can still land after release returns (docs/rma-extensions.md). */
#ifndef CLAMPI_RMAX_MEMHANDLE_H
#define CLAMPI_RMAX_MEMHANDLE_H
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "backends/ucx/memhandle.h"
#include "rma/window.h"

#define CLAMPI_MH_SLOTS 4096 /* live handles per dynamic window and process */

/* Makes the clampi_win of a memory-handle window (registered, linked under parent). */
int clampi_mh_window_create(clampi_win *parent, clampi_mh_win *m, const clampi_win_options *opts, CMPI_Win *newwin);
/* Parent: the generation-table rkeys it keeps for its memory-handle windows. Unpacking
 * one maps the owner's segment (shmat on shared memory: hundreds of microseconds), so it
 * is done once per (parent, owner, table) and kept until the parent's free. */
typedef struct clampi_mh_gen_cache {
    uint64_t sum; /* checksum of the packed rkey (0: empty) */
    ucp_rkey_h rkey;
} clampi_mh_gen_cache;
void clampi_mh_gen_cache_destroy(clampi_win *parent);
/* Owner: unmaps every region and the table (the parent's free). */
void clampi_mh_table_destroy(clampi_win *w);

#endif
