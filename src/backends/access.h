/* Argument checks shared by every RMA call: counts, rank, datatypes, and the target
 * byte range against the target's window size. Inline: it is on the hit path. */
#ifndef CLAMPI_BACKENDS_ACCESS_H
#define CLAMPI_BACKENDS_ACCESS_H
#include "backends/backend.h"
#include "common/datatype.h"

typedef struct clampi_access {
    clampi_layout origin, target;
    uint64_t offset; /* first target byte, from the start of the target's window */
} clampi_access;

/* Returns -1 if the access is valid, else the clampi_error to raise. */
static inline __attribute__((always_inline)) int clampi_access_check(clampi_bwin *w, int origin_count,
                                                                     MPI_Datatype origin_type, int target,
                                                                     MPI_Aint disp, int target_count,
                                                                     MPI_Datatype target_type, clampi_access *a) {
    if (origin_count < 0 || target_count < 0) return CLAMPI_E_COUNT;
    if (target < 0 || target >= w->nranks) return CLAMPI_E_RANK;
    const clampi_type_info *ot, *tt;
    clampi_type_info os, ts;
    if (clampi_type_info_get(target_type, &tt, &ts) != 0) return CLAMPI_E_TYPE;
    clampi_layout_of(tt, target_count, &a->target);
    if (origin_type == target_type && origin_count == target_count) {
        a->origin = a->target; /* the common case: one lookup */
    } else {
        if (clampi_type_info_get(origin_type, &ot, &os) != 0) return CLAMPI_E_TYPE;
        clampi_layout_of(ot, origin_count, &a->origin);
        if (a->origin.bytes != a->target.bytes) return CLAMPI_E_TYPE_MISMATCH;
    }
    if (disp < 0) return CLAMPI_E_DISP;
    if (a->target.bytes == 0) {
        a->offset = 0;
        return -1;
    }
    MPI_Aint start;
    if (__builtin_mul_overflow(disp, (MPI_Aint)w->target_disp_unit[target], &start) ||
        __builtin_add_overflow(start, a->target.lo, &start) || start < 0 ||
        (uint64_t)start > (uint64_t)w->target_size[target] ||
        a->target.span > (uint64_t)w->target_size[target] - (uint64_t)start)
        return CLAMPI_E_RANGE;
    a->offset = (uint64_t)start;
    return -1;
}
#endif
