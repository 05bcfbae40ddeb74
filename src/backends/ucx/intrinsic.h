/* CMPIX_Win_op_intrinsic's two halves: which (op, datatype, count) UCX can run as one
 * network atomic per element, and whether the endpoints in use have a device atomic lane
 * (what UCX reports; TCP's atomics are emulated through the target's progress). */
#ifndef CLAMPI_BACKENDS_UCX_INTRINSIC_H
#define CLAMPI_BACKENDS_UCX_INTRINSIC_H
#include <mpi.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

/* The paper's op names, as bits. */
enum {
    CLAMPI_OPBIT_SUM = 1u << 0,
    CLAMPI_OPBIT_PROD = 1u << 1,
    CLAMPI_OPBIT_BAND = 1u << 2,
    CLAMPI_OPBIT_BOR = 1u << 3,
    CLAMPI_OPBIT_BXOR = 1u << 4,
    CLAMPI_OPBIT_MAX = 1u << 5,
    CLAMPI_OPBIT_MIN = 1u << 6,
    CLAMPI_OPBIT_REPLACE = 1u << 7,
    CLAMPI_OPBIT_NO_OP = 1u << 8,
    CLAMPI_OPBIT_CAS = 1u << 9,
};
/* Ops UCX has as atomics: add, and, or, xor, swap, cswap (and a fetching add of 0). */
#define CLAMPI_OPBITS_UCX                                                                                 \
    (CLAMPI_OPBIT_SUM | CLAMPI_OPBIT_BAND | CLAMPI_OPBIT_BOR | CLAMPI_OPBIT_BXOR | CLAMPI_OPBIT_REPLACE | \
     CLAMPI_OPBIT_NO_OP | CLAMPI_OPBIT_CAS)
/* Largest count of an accumulate that is issued as one atomic per element; larger ones
 * would be faster through the target's CPU (the paper's latency/bandwidth threshold). */
#define CLAMPI_INTRINSIC_MAX_COUNT 8

/* Parses "sum,cas,...": 0 and *bits, or -1 (unknown name, empty item, NULL). */
int clampi_intrinsic_parse_ops(const char *ops, unsigned *bits);
/* The op bit of an MPI_Op (MPI_SUM -> SUM, ...), 0 if none. */
unsigned clampi_intrinsic_op_bit(MPI_Op op);
/* 4 or 8 if datatype is a predefined 32/64-bit integer type, else 0. */
int clampi_intrinsic_int_size(MPI_Datatype datatype);
/* Whether (ops, count, datatype) is in UCX's atomic set (independent of transports). */
int clampi_intrinsic_supported(unsigned opbits, int count, MPI_Datatype datatype);
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
