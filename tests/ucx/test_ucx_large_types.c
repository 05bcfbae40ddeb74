/* Datatypes with a true extent above the byte analysis's limit (16 MiB) on UCX windows.
 *
 * 1. The two flattenings agree: for types both can read (vectors with negative strides,
 *    decreasing indexed displacements, structs out of address order, pair types,
 *    transposes, subarrays in C and Fortran order, resized and nested types), the pieces
 *    from the constructors equal the byte analysis's, piece for piece; both refuse an
 *    overlapping typemap; a darray is the byte analysis's alone.
 * 2. Large types flatten from their constructors: a vector spanning 64 MiB, a subarray of
 *    a 128 MiB matrix (pieces, offsets), a struct of 400,000 members; more than
 *    CLAMPI_FLAT_MAX_PIECES pieces: refused.
 * 3. With 2 ranks, puts, gets and an accumulate through a UCX window whose target type
 *    spans 40 MiB (a column of a matrix), each checked against the values written, with
 *    the bytes between the column's elements untouched.
 * Usage: test_ucx_large_types */
#define CLAMPI_TEST_USES_MPI
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clampi.h"
#include "common/flatten.h"
#include "mpi_util.h"

static int same(const clampi_flat *a, const clampi_flat *b) {
    if (a->n != b->n || a->extent != b->extent || a->size != b->size) return 0;
    for (size_t k = 0; k < a->n; k++)
        if (a->piece[k].offset != b->piece[k].offset || a->piece[k].packed != b->piece[k].packed ||
            a->piece[k].len != b->piece[k].len)
            return 0;
    return 1;
}

static void agree(const char *what, MPI_Datatype t) {
    MPI_Type_commit(&t);
    clampi_flat *a = clampi_flatten_bytes(t), *b = clampi_flatten_constructors(t);
    if (!a || !b || !same(a, b)) {
        fprintf(stderr, "flattenings differ for %s: bytes %zu pieces, constructors %zu\n", what, a ? a->n : 0,
                b ? b->n : 0);
        for (size_t k = 0; a && k < a->n; k++)
            fprintf(stderr, "  bytes %zu: off %ld packed %lu len %lu\n", k, (long)a->piece[k].offset,
                    (unsigned long)a->piece[k].packed, (unsigned long)a->piece[k].len);
        for (size_t k = 0; b && k < b->n; k++)
            fprintf(stderr, "  ctors %zu: off %ld packed %lu len %lu\n", k, (long)b->piece[k].offset,
                    (unsigned long)b->piece[k].packed, (unsigned long)b->piece[k].len);
        CHECK(0);
    }
    free(a);
    free(b);
    MPI_Type_free(&t);
}

static void flattenings_agree(void) {
    MPI_Datatype t, u, v;
    MPI_Type_vector(3, 2, 5, MPI_INT, &t);
    agree("vector", t);
    MPI_Type_create_hvector(4, 1, -24, MPI_DOUBLE, &t);
    agree("hvector, negative stride", t);
    int len2[2] = {1, 2}, disp2[2] = {5, 0};
    MPI_Type_indexed(2, len2, disp2, MPI_INT, &t);
    agree("indexed, decreasing", t);
    MPI_Aint hdisp[3] = {40, 0, 16};
    int hlen[3] = {1, 2, 1};
    MPI_Type_create_hindexed(3, hlen, hdisp, MPI_DOUBLE, &t);
    agree("hindexed", t);
    int bdisp[3] = {4, 1, 9};
    MPI_Type_create_indexed_block(3, 2, bdisp, MPI_SHORT, &t);
    agree("indexed_block", t);
    MPI_Type_create_hindexed_block(3, 1, hdisp, MPI_INT, &t);
    agree("hindexed_block", t);
    MPI_Aint sdisp[3] = {16, 0, 30};
    int slen[3] = {1, 2, 1};
    MPI_Datatype stypes[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, slen, sdisp, stypes, &t);
    agree("struct out of address order", t);
    MPI_Type_create_struct(3, slen, sdisp, stypes, &u);
    MPI_Type_create_resized(u, -8, 64, &v);
    MPI_Type_free(&u);
    MPI_Type_contiguous(3, v, &t);
    MPI_Type_free(&v);
    agree("contiguous of resized struct", t);
    MPI_Type_contiguous(3, MPI_SHORT_INT, &t);
    agree("pair type with a gap", t);
    MPI_Type_vector(3, 1, 4, MPI_INT, &u); /* a column of a 3 x 4 matrix; transposed below */
    MPI_Type_create_resized(u, 0, sizeof(int), &v);
    MPI_Type_free(&u);
    MPI_Type_contiguous(4, v, &t);
    MPI_Type_free(&v);
    agree("transpose", t);
    int sizes[3] = {5, 6, 7}, subs[3] = {2, 3, 4}, starts[3] = {1, 2, 3};
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    agree("subarray, C order", t);
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
    agree("subarray, Fortran order", t);
    MPI_Type_create_struct(3, slen, sdisp, stypes, &u);
    MPI_Type_dup(u, &v);
    MPI_Type_free(&u);
    MPI_Type_create_hvector(3, 2, 200, v, &t);
    MPI_Type_free(&v);
    agree("hvector of a dup'd struct", t);

    int olen[2] = {2, 2}, odisp[2] = {0, 1}; /* elements 0,1 and 1,2: overlapping */
    MPI_Type_indexed(2, olen, odisp, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK(!clampi_flatten_bytes(t) && !clampi_flatten_constructors(t));
    MPI_Type_free(&t);
    int gsizes[1] = {64}, distribs[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[1] = {4};
    MPI_Type_create_darray(4, 1, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    clampi_flat *d = clampi_flatten_bytes(t);
    CHECK(d && d->n == 1 && d->piece[0].offset == 16 * (MPI_Aint)sizeof(int) && d->piece[0].len == 16 * sizeof(int));
    CHECK(!clampi_flatten_constructors(t));
    free(d);
    MPI_Type_free(&t);
}

static void large_types_flatten(void) {
    MPI_Datatype t;
    const MPI_Aint stride = (MPI_Aint)4 << 20; /* doubles: 32 MiB between elements */
    MPI_Type_vector(3, 1, (int)stride, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    const clampi_flat *f = clampi_flat_get(t);
    CHECK(f && f->n == 3 && f->size == 24);
    for (int k = 0; k < 3; k++) CHECK(f->piece[k].offset == k * stride * 8 && f->piece[k].len == 8);
    MPI_Type_free(&t);

    int sizes[2] = {4096, 4096}, subs[2] = {2, 3}, starts[2] = {100, 200};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    f = clampi_flat_get(t);
    CHECK(f && f->n == 2 && f->extent == (MPI_Aint)4096 * 4096 * 8);
    for (int k = 0; k < 2; k++)
        CHECK(f->piece[k].offset == ((MPI_Aint)(100 + k) * 4096 + 200) * 8 && f->piece[k].len == 24 &&
              f->piece[k].packed == (uint64_t)k * 24);
    MPI_Type_free(&t);

    enum { MEMBERS = 400000 }; /* a struct of many members spanning 24 MiB: no per-member stack */
    int *one = malloc(sizeof(int) * MEMBERS);
    MPI_Aint *at = malloc(sizeof(MPI_Aint) * MEMBERS);
    MPI_Datatype *ints = malloc(sizeof(MPI_Datatype) * MEMBERS);
    for (int i = 0; i < MEMBERS; i++) one[i] = 1, at[i] = (MPI_Aint)i * 64, ints[i] = MPI_INT;
    MPI_Type_create_struct(MEMBERS, one, at, ints, &t);
    MPI_Type_commit(&t);
    f = clampi_flat_get(t);
    CHECK(f && f->n == MEMBERS && f->piece[MEMBERS - 1].offset == (MPI_Aint)(MEMBERS - 1) * 64);
    MPI_Type_free(&t);
    free(one);
    free(at);
    free(ints);

    MPI_Type_vector((int)CLAMPI_FLAT_MAX_PIECES + 1, 1, 32, MPI_CHAR, &t); /* 32 MiB, one piece too many */
    MPI_Type_commit(&t);
    CHECK(!clampi_flat_get(t));
    MPI_Type_free(&t);
}

/* A column of an N x M matrix of doubles (M = 1 Mi: 8 MiB rows), 5 rows: 40 MiB. */
#define ROWS 5
#define COLS ((MPI_Aint)1 << 20)
static void column_through_a_ucx_window(void) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BACKEND, "ucx");
    MPI_Info_set(info, CLAMPI_MODE, "off");
    MPI_Info_set(info, CLAMPI_SHM_DIRECT, "false");
    double *mem;
    CMPI_Win w;
    const MPI_Aint bytes = ROWS * COLS * (MPI_Aint)sizeof(double);
    CHECK_EQ_INT(CMPI_Win_allocate(bytes, sizeof(double), info, MPI_COMM_WORLD, &mem, &w), MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Info used;
    char value[64];
    int flag;
    CHECK_EQ_INT(CMPI_Win_get_info(w, &used), MPI_SUCCESS);
    MPI_Info_get(used, CLAMPI_BACKEND, 63, value, &flag);
    CHECK(flag && !strcmp(value, "ucx"));
    MPI_Info_free(&used);
    for (MPI_Aint i = 0; i < ROWS * COLS; i++) mem[i] = -1.0;
    MPI_Datatype col;
    MPI_Type_vector(ROWS, 1, (int)COLS, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);
    MPI_Barrier(MPI_COMM_WORLD);
    const int peer = 1 - rank;
    double out[ROWS], in[ROWS], one[ROWS];
    for (int r = 0; r < ROWS; r++) out[r] = 100.0 * rank + r, one[r] = 1.0;
    CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, peer, 0, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Put(out, ROWS, MPI_DOUBLE, peer, 7, 1, col, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(peer, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Get(in, ROWS, MPI_DOUBLE, peer, 7, 1, col, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(peer, w), MPI_SUCCESS);
    for (int r = 0; r < ROWS; r++) CHECK(in[r] == out[r]);
    CHECK_EQ_INT(CMPI_Accumulate(one, ROWS, MPI_DOUBLE, peer, 9, 1, col, MPI_SUM, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_unlock(peer, w), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    for (MPI_Aint i = 0; i < ROWS * COLS; i++) {
        const MPI_Aint r = i / COLS, c = i % COLS;
        const double want = c == 7 ? 100.0 * peer + (double)r : c == 9 ? 0.0 : -1.0;
        if (mem[i] != want) {
            fprintf(stderr, "rank %d: element (%ld, %ld) is %g, not %g\n", rank, (long)r, (long)c, mem[i], want);
            CHECK(0);
        }
    }
    MPI_Type_free(&col);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    flattenings_agree();
    large_types_flatten();
    if (size == 2) column_through_a_ucx_window();
    MPI_Finalize();
    return 0;
}
