/* Where an operation of a UCX window (or one of its variants) on target's bytes
 * [offset, offset+len) goes: endpoint, remote address and rkey on the lane the calling
 * thread uses (memory-handle windows: the parent's process lane and the handle's rkey).
 * clampi_ucx_target_begin enters the lane; _end leaves it after the operation was issued
 * and counts it for the next flush. */
#ifndef CLAMPI_BACKENDS_UCX_TARGET_H
#define CLAMPI_BACKENDS_UCX_TARGET_H
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "backends/backend.h"
#include "services/ucx/service.h"

typedef struct clampi_ucx_target {
    ucp_ep_h ep;
    ucp_worker_h worker;
    uint64_t raddr;
    ucp_rkey_h rkey;
    void *lane;
} clampi_ucx_target;

/* MPI_SUCCESS, or the clampi_error to raise (as a negative -1 - e). */
int clampi_ucx_target_begin(clampi_bwin *b, int target, uint64_t offset, uint64_t len, clampi_ucx_target *t);
void clampi_ucx_target_end(clampi_bwin *b, int target, clampi_ucx_target *t, int issued);
/* _end for an operation that completed here without UCX (a CPU atomic): the next flush owes
 * it nothing (_begin only looked at the endpoint; _end marks the target for the flush). */
void clampi_ucx_target_end_local(clampi_bwin *b, int target, clampi_ucx_target *t);
/* Where the calling process may run an atomic on t's target bytes as a CPU atomic: the
 * address of t->raddr mapped here, or NULL. Only for a static window whose endpoint runs
 * UCX's own atomics to that target as CPU atomics on shared memory (clampi_ucx_ep_amo_cpu)
 * and whose memory UCX maps here (ucp_rkey_ptr): then these atomics and every other
 * process's UCX atomics on that memory are the same instructions on the same bytes.
 * Also for a window whose every rank's memory lies in one node-shared heap (all_direct:
 * nobody reaches it through UCX), the target itself included.
 * CLAMPI_SHM_DIRECT=false turns it off. */
void *clampi_ucx_target_amo_ptr(clampi_bwin *b, const clampi_ucx_target *t, int target);
/* The same address for a static window's offset, from what an earlier
 * clampi_ucx_target_amo_ptr of the calling thread's lane found; NULL if it found nothing
 * yet (or no mapping). The window layer has checked the range. */
void *clampi_ucx_amo_ptr_known(clampi_bwin *b, int target, uint64_t offset);
/* Whether target may be accessed now (an epoch of the window's shared state). */
int clampi_ucx_target_in_epoch(const clampi_bwin *b, int target);
/* The md map of the rkey through which b reaches target's memory (see intrinsic.h). */
uint64_t clampi_ucx_target_md_map(const clampi_bwin *b, int target);
/* The table of a UCX window: the backend's, the memory-handle variant's, or either with
 * UCX atomics for accumulates (mpi_assert_accumulate_intrinsic). */
const clampi_backend_ops *clampi_ucx_variant_ops(const clampi_bwin *b, int acc_intrinsic);
#endif
