/* The contiguous pieces of a derived datatype, for backends that move bytes themselves
 * (the UCX window backend: one UCX operation per piece of a non-contiguous target).
 *
 * One element of the type is flattened once and cached on the type as an MPI attribute
 * (freed with the type): its pieces in address order, each with its offset from the
 * buffer address, its position in the packed (MPI_Pack) stream and its length. Element i
 * of a count adds i * extent to the offsets and i * size to the packed positions. */
#ifndef CLAMPI_COMMON_FLATTEN_H
#define CLAMPI_COMMON_FLATTEN_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct clampi_piece {
    MPI_Aint offset; /* from the buffer address (true lower bound included) */
    uint64_t packed; /* position in the packed stream of one element */
    uint64_t len;
} clampi_piece;

typedef struct clampi_flat {
    MPI_Aint extent; /* stride between elements */
    uint64_t size;   /* data bytes of one element */
    size_t n;        /* pieces of one element: stored * reps (read them with clampi_flat_piece) */
    /* A regular type with more pieces than can be listed (a vector of millions of blocks)
     * stores the pieces of one block; piece k of repetition r is that block's piece k moved
     * by r * rep_stride bytes and r * rep_packed packed bytes; and all of that may repeat
     * again (reps2 times, rep2_stride / rep2_packed apart: two copies of such a vector).
     * Listed types: reps = reps2 = 1. */
    size_t stored, reps, reps2;
    MPI_Aint rep_stride, rep2_stride;
    uint64_t rep_packed, rep2_packed;
    clampi_piece piece[]; /* stored entries */
} clampi_flat;

/* Piece j (< f->n) of one element. */
static inline clampi_piece clampi_flat_piece(const clampi_flat *f, size_t j) {
    if (f->reps <= 1 && f->reps2 <= 1) return f->piece[j];
    const size_t per = f->stored * f->reps, r2 = j / per, rest = j % per, r = rest / f->stored;
    clampi_piece p = f->piece[rest % f->stored];
    p.offset += (MPI_Aint)r * f->rep_stride + (MPI_Aint)r2 * f->rep2_stride;
    p.packed += (uint64_t)r * f->rep_packed + (uint64_t)r2 * f->rep2_packed;
    return p;
}

/* Largest true extent of one element the byte analysis flattens (it needs a few bytes of
 * scratch per byte of extent); larger types are flattened from their constructors, up to
 * CLAMPI_FLAT_MAX_PIECES listed pieces per element (a type that repeats one block at a
 * fixed stride lists that block's pieces and repeats them: any count; flatten_constructors.c). */
#define CLAMPI_FLAT_MAX_EXTENT ((MPI_Aint)16 << 20)
#define CLAMPI_FLAT_MAX_PIECES ((size_t)1 << 20)

/* The analysis behind both the pieces and the contiguity verdict of src/common/datatype.c:
 * unpacks a packed stream of size bytes whose byte k is byte `shift` of k (0xff everywhere
 * when shift < 0) with one element of type into span, which starts at the true lower
 * bound: each byte of the typemap receives its own packed position's byte. packed holds
 * size bytes. Returns MPI_Unpack's code (MPI_ERR_COUNT above INT32_MAX bytes). */
int clampi_unpack_positions(MPI_Datatype type, unsigned char *packed, uint64_t size, int shift, unsigned char *span,
                            MPI_Aint true_lb);

/* The pieces of one element of type, computed on first use. NULL when the type is
 * invalid or predefined without gaps (a predefined pair type such as MPI_DOUBLE_INT,
 * whose size is below its extent, is flattened), its typemap overlaps itself, it is a
 * darray or a Fortran-integer constructor with a true extent above CLAMPI_FLAT_MAX_EXTENT,
 * it has more than CLAMPI_FLAT_MAX_PIECES pieces there, or memory runs out. Thread-safe. */
const clampi_flat *clampi_flat_get(MPI_Datatype type);

/* The two flattenings behind clampi_flat_get (uncached; free the result). By bytes: any
 * type whose true extent is at most CLAMPI_FLAT_MAX_EXTENT. By constructors
 * (flatten_constructors.c): any extent, the combiners of MPI-1/2's constructors and
 * subarrays. Both give the same pieces for a type both can read (the test flatten_agrees). */
clampi_flat *clampi_flatten_bytes(MPI_Datatype type);
clampi_flat *clampi_flatten_constructors(MPI_Datatype type);

/* The single predefined type every element of type is made of (MPI's rule for the target
 * of an accumulate), through any nesting of constructors. 0, or -1 when there is none. */
int clampi_type_basic(MPI_Datatype type, MPI_Datatype *basic);
#endif
