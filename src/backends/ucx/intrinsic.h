/* CMPIX_Win_op_intrinsic's second half: whether the endpoints in use have a device atomic
 * lane (what UCX reports; TCP's atomics are emulated through the target's progress). The
 * first, which (op, datatype, count) UCX can run at all, is backends/intrinsic_ops.h. */
#ifndef CLAMPI_BACKENDS_UCX_INTRINSIC_H
#define CLAMPI_BACKENDS_UCX_INTRINSIC_H
#include <mpi.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "backends/intrinsic_ops.h"

/* The remote memory domains (bit k = md k) that ep's atomic lanes reach, as UCX reports
 * them ("lane[i]: ... -> md[k]/sysv ... amo#j" in ucp_ep_print_info); 0 if none. An atomic
 * runs on such a lane only if the target memory's rkey covers one of these mds (on shared
 * memory: memory UCX allocated, not memory it only registered); otherwise UCX emulates it
 * with active messages executed by the target's CPU. */
uint64_t clampi_ucx_ep_amo_mds(ucp_ep_h ep);
/* 1 if ep has atomic lanes and every one is a shared-memory transport's (md sysv, posix or
 * xpmem: UCX runs those atomics as CPU atomics on the target memory mapped in the origin),
 * else 0 (a device's atomics, or none: emulated by the target's CPU). */
int clampi_ucx_ep_amo_cpu(ucp_ep_h ep);
/* The md map of a packed rkey (UCX 1.13 packs it first). */
uint64_t clampi_ucx_rkey_md_map(const void *packed, size_t len);
#endif
