/* Where the bytes of (count, datatype) lie, and whether they are one contiguous run: the
 * one table of datatype facts for windows and messages. Predefined types are memoized by
 * handle, process-wide; derived types carry their contiguity verdict as an MPI attribute,
 * so the analysis (does one element cover its extent once, in order?) runs once per type. */
#ifndef CLAMPI_COMMON_DATATYPE_H
#define CLAMPI_COMMON_DATATYPE_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct clampi_type_info {
    MPI_Datatype type;
    MPI_Aint size;   /* data bytes of one element */
    MPI_Aint extent; /* stride between elements */
    MPI_Aint true_lb, true_extent;
    int element_contiguous; /* one element's bytes form a gap-free, overlap-free run */
    int dense;              /* size == extent == true_extent, true_lb == 0: count elements are one run */
    int predefined;         /* a named type (no duplicate needed to outlive the program's handle) */
    int int_size;           /* a predefined integer type of 4 or 8 bytes (what atomics take): its size, else 0 */
} clampi_type_info;

/* count elements are exactly the bytes [true_lb, true_lb + count * size), in order. */
static inline int clampi_type_runs_contiguous(const clampi_type_info *ti) {
    return ti->size == 0 || (ti->element_contiguous && ti->extent == ti->size);
}

typedef struct clampi_layout {
    uint64_t bytes; /* data bytes in all */
    MPI_Aint lo;    /* first byte touched, relative to the buffer address / target disp */
    uint64_t span;  /* bytes from lo to the last byte touched */
    int contiguous; /* the data is exactly [lo, lo + bytes) in order */
} clampi_layout;

/* Predefined types, process-wide: open addressing, filled under a lock on first use and
 * read without one (an entry is published by its `ready` flag and never changes again:
 * predefined handles live as long as MPI). Derived types are never memoized here (a freed
 * handle may come back as another type); their costly verdict is an attribute. */
#define CLAMPI_TYPE_TABLE 256
#define CLAMPI_TYPE_PROBES 8
typedef struct clampi_type_slot {
    int ready; /* read and written with __atomic builtins */
    clampi_type_info info;
} clampi_type_slot;
extern clampi_type_slot clampi_type_table[CLAMPI_TYPE_TABLE];

/* One derived type's constructor and its arguments (MPI_Type_get_contents). The old types'
 * handles MPI made for the call are freed by clampi_type_contents_free. */
typedef struct clampi_type_contents {
    int combiner, ni, na, nd;
    int *ints;
    MPI_Aint *addrs;
    MPI_Datatype *types;
} clampi_type_contents;
/* 0 with c filled (a predefined type: combiner MPI_COMBINER_NAMED and no arrays), -1 when
 * MPI refuses the type or memory runs out (nothing to free then). */
int clampi_type_contents_get(MPI_Datatype type, clampi_type_contents *c);
void clampi_type_contents_free(clampi_type_contents *c);

/* Fills ti (and memoizes a predefined type). 0, or -1 for MPI_DATATYPE_NULL / an invalid type. */
int clampi_type_info_slow(MPI_Datatype type, clampi_type_info *ti);
/* A type its maker knows to be one gap-free run per element (count elements of a type that
 * runs contiguous, built with int counts: the preload's large-count calls), where checking
 * byte by byte would cost too much. Before the type's first use. */
void clampi_type_mark_contiguous(MPI_Datatype type);

static inline unsigned clampi_type_slot_of(MPI_Datatype type) {
    uint64_t h = (uint64_t)(uintptr_t)type * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 56); /* top 8 bits: CLAMPI_TYPE_TABLE == 256 */
}

/* The calling thread's last table hit: a program that gets the same predefined type over
 * and over (the cache's hit path) skips the hash probe (10 instructions of a 320-instruction
 * preloaded hit). Points into the table, whose entries never change once ready. */
extern __thread const clampi_type_info *clampi_type_last __attribute__((tls_model("initial-exec")));

/* *ti points at the table's entry or at scratch. Returns 0, or -1 for MPI_DATATYPE_NULL /
 * an invalid type. Thread-safe. */
static inline __attribute__((always_inline)) int clampi_type_info_get(MPI_Datatype type, const clampi_type_info **ti,
                                                                      clampi_type_info *scratch) {
    const clampi_type_info *last = clampi_type_last;
    if (__builtin_expect(last != NULL && last->type == type, 1)) {
        *ti = last;
        return 0;
    }
    unsigned s = clampi_type_slot_of(type);
    for (int i = 0; i < CLAMPI_TYPE_PROBES; i++, s = (s + 1) % CLAMPI_TYPE_TABLE) {
        const clampi_type_slot *e = &clampi_type_table[s];
        if (!__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE)) break;
        if (e->info.type == type) {
            *ti = clampi_type_last = &e->info;
            return 0;
        }
    }
    *ti = scratch;
    return clampi_type_info_slow(type, scratch);
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
