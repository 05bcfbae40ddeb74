#include "backends/intrinsic_ops.h"

#include <string.h>

#include "common/datatype.h"

static const struct {
    const char *name;
    unsigned bit;
} op_names[] = {
    {"sum", CLAMPI_OPBIT_SUM}, {"prod", CLAMPI_OPBIT_PROD},       {"band", CLAMPI_OPBIT_BAND},
    {"bor", CLAMPI_OPBIT_BOR}, {"bxor", CLAMPI_OPBIT_BXOR},       {"max", CLAMPI_OPBIT_MAX},
    {"min", CLAMPI_OPBIT_MIN}, {"replace", CLAMPI_OPBIT_REPLACE}, {"no_op", CLAMPI_OPBIT_NO_OP},
    {"cas", CLAMPI_OPBIT_CAS},
};

int clampi_intrinsic_parse_ops(const char *ops, unsigned *bits) {
    if (!ops) return -1;
    unsigned acc = 0;
    const char *s = ops;
    for (;;) {
        while (*s == ' ') s++;
        size_t len = strcspn(s, ", ");
        const char *after = s + len;
        while (*after == ' ') after++;
        unsigned bit = 0;
        for (size_t i = 0; i < sizeof op_names / sizeof *op_names; i++)
            if (strlen(op_names[i].name) == len && !strncmp(s, op_names[i].name, len)) bit = op_names[i].bit;
        if (!bit) return -1; /* unknown or empty item */
        acc |= bit;
        if (*after == 0) break;
        if (*after != ',') return -1;
        s = after + 1;
    }
    *bits = acc;
    return 0;
}

unsigned clampi_intrinsic_op_bit(MPI_Op op) {
    if (op == MPI_SUM) return CLAMPI_OPBIT_SUM;
    if (op == MPI_PROD) return CLAMPI_OPBIT_PROD;
    if (op == MPI_BAND) return CLAMPI_OPBIT_BAND;
    if (op == MPI_BOR) return CLAMPI_OPBIT_BOR;
    if (op == MPI_BXOR) return CLAMPI_OPBIT_BXOR;
    if (op == MPI_MAX) return CLAMPI_OPBIT_MAX;
    if (op == MPI_MIN) return CLAMPI_OPBIT_MIN;
    if (op == MPI_REPLACE) return CLAMPI_OPBIT_REPLACE;
    if (op == MPI_NO_OP) return CLAMPI_OPBIT_NO_OP;
    return 0;
}

int clampi_intrinsic_int_size(MPI_Datatype t) {
    /* Integer types only: UCX's add/and/or/xor are integer operations (the datatype table's
     * int_size, memoized for predefined types: on the path of every intrinsic atomic). */
    const clampi_type_info *ti;
    clampi_type_info scratch;
    return clampi_type_info_get(t, &ti, &scratch) == 0 ? ti->int_size : 0;
}

int clampi_intrinsic_supported(unsigned opbits, int count, MPI_Datatype datatype) {
    return (opbits & ~(unsigned)CLAMPI_OPBITS_UCX) == 0 && count <= CLAMPI_INTRINSIC_MAX_COUNT &&
           clampi_intrinsic_int_size(datatype) != 0;
}
