/* Where the bytes of (count, datatype) lie, and whether they are one contiguous run.
 * Predefined types are memoized by handle (their handles never change) in a small table
 * per window (so it is guarded by the window lock under MPI_THREAD_MULTIPLE); derived
 * types carry their verdict as an MPI attribute, so the analysis runs once per type. */
#ifndef CLAMPI_COMMON_DATATYPE_H
#define CLAMPI_COMMON_DATATYPE_H
#include <mpi.h>
#include <stdint.h>

typedef struct clampi_type_info {
    MPI_Datatype type;
    MPI_Aint size;   /* data bytes of one element */
    MPI_Aint extent; /* stride between elements */
    MPI_Aint true_lb, true_extent;
    int element_contiguous; /* one element's bytes form a gap-free, overlap-free run */
    int dense;              /* size == extent == true_extent, true_lb == 0: count elements are one run */
} clampi_type_info;

typedef struct clampi_layout {
    uint64_t bytes; /* data bytes in all */
    MPI_Aint lo;    /* first byte touched, relative to the buffer address / target disp */
    uint64_t span;  /* bytes from lo to the last byte touched */
    int contiguous; /* the data is exactly [lo, lo + bytes) in order */
} clampi_layout;

#define CLAMPI_TYPE_MEMO 64

/* Fills ti; memoizes predefined types in memo[CLAMPI_TYPE_MEMO]. 0 or -1. */
int clampi_type_info_slow(clampi_type_info *memo, MPI_Datatype type, clampi_type_info *ti);

static inline unsigned clampi_type_memo_slot(MPI_Datatype type) {
    uint64_t h = (uint64_t)(uintptr_t)type * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 58); /* top 6 bits: CLAMPI_TYPE_MEMO == 64 */
}

/* Returns 0, or -1 for MPI_DATATYPE_NULL / an invalid type. */
static inline __attribute__((always_inline)) int clampi_type_info_get(clampi_type_info *memo, MPI_Datatype type,
                                                                      const clampi_type_info **ti,
                                                                      clampi_type_info *scratch) {
    const clampi_type_info *m = &memo[clampi_type_memo_slot(type)];
    if (m->type == type && m->size > 0) {
        *ti = m;
        return 0;
    }
    *ti = scratch;
    return clampi_type_info_slow(memo, type, scratch);
}

/* Layout of count elements. count >= 0. */
static inline __attribute__((always_inline)) void clampi_layout_of(const clampi_type_info *ti, int count,
                                                                   clampi_layout *l) {
    l->bytes = (uint64_t)ti->size * (uint64_t)count;
    if (ti->dense) {
        l->lo = 0;
        l->span = l->bytes;
        l->contiguous = 1;
        return;
    }
    if (count == 0 || ti->size == 0) {
        l->lo = 0;
        l->span = 0;
        l->contiguous = 1;
        l->bytes = 0;
        return;
    }
    MPI_Aint reach = (MPI_Aint)(count - 1) * ti->extent;
    l->lo = ti->true_lb + (reach < 0 ? reach : 0);
    l->span = (uint64_t)(ti->true_extent + (reach < 0 ? -reach : reach));
    l->contiguous = ti->element_contiguous && (count == 1 || ti->extent == ti->size) && l->span == l->bytes;
}
#endif
