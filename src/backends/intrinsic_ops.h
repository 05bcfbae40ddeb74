/* The accumulate ops of CMPIX_Win_op_intrinsic by name and as bits, and which of them (on
 * which counts and datatypes) UCX runs as one network atomic per element: plain facts of
 * MPI and of UCX's atomic set, no UCX call (the query's answer on an MPI-backend window, or
 * in a build without UCX, is 0 after the same checks). */
#ifndef CLAMPI_BACKENDS_INTRINSIC_OPS_H
#define CLAMPI_BACKENDS_INTRINSIC_OPS_H
#include <mpi.h>

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
#endif
