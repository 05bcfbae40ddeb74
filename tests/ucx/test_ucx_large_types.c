/* Datatypes with a true extent above the byte analysis's limit (16 MiB) on UCX windows.
 *
 * 1. The two flattenings agree: for types both can read (vectors with negative strides,
 *    decreasing indexed displacements, structs out of address order, pair types,
 *    transposes, subarrays in C and Fortran order, resized and nested types), the pieces
 *    from the constructors equal the byte analysis's, piece for piece; both refuse an
 *    overlapping typemap; a darray is the byte analysis's alone.
 * 2. Large types flatten from their constructors: a vector spanning 64 MiB, a subarray of
 *    a 128 MiB matrix (pieces, offsets), a struct of 400,000 members; more than
 *    CLAMPI_FLAT_MAX_PIECES pieces: a vector, and an hvector with a negative stride of a
 *    struct under resized and dup, a struct listing evenly spaced members (also with
 *    empty members between them), one block of many elements, two copies of such a
 *    struct, repeat one block (pieces checked); an hvector whose blocks interleave,
 *    a struct with one member out of step and an irregular indexed type are refused.
 * 3. With 2 ranks, puts, gets and an accumulate through a UCX window whose target type
 *    spans 40 MiB (a column of a matrix), each checked against the values written, with
 *    the bytes between the column's elements untouched; then a put and a get of a vector
 *    of 1.25 Mi ints (more pieces than listed; the get as one get of the span), the same
 *    ints got backwards, every byte of the window checked.
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
    for (size_t k = 0; k < a->n; k++) {
        const clampi_piece x = clampi_flat_piece(a, k), y = clampi_flat_piece(b, k);
        if (x.offset != y.offset || x.packed != y.packed || x.len != y.len) return 0;
    }
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

    /* More than CLAMPI_FLAT_MAX_PIECES pieces: a regular type keeps one block and repeats it */
    const size_t many = CLAMPI_FLAT_MAX_PIECES + 1;
    MPI_Type_vector((int)many, 1, 32, MPI_CHAR, &t); /* 32 MiB */
    MPI_Type_commit(&t);
    f = clampi_flat_get(t);
    CHECK(f && f->n == many && f->reps == many && f->stored == 1 && f->size == many);
    for (size_t k = 0; f && k < many; k += many / 7) {
        const clampi_piece p = clampi_flat_piece(f, k);
        CHECK(p.offset == (MPI_Aint)k * 32 && p.packed == k && p.len == 1);
    }
    MPI_Type_free(&t);
    /* the same vector as the one member of a struct, at 24 bytes, inside an indexed type's
     * one block (MPICH's test types nest large types so): the pieces move by 24 + 4 * 3 */
    MPI_Datatype vec, member;
    int one1 = 1, three = 3;
    MPI_Aint at24 = 24;
    MPI_Type_vector((int)many, 1, 8, MPI_INT, &vec);
    MPI_Type_create_struct(1, &one1, &at24, &vec, &member);
    MPI_Type_create_resized(member, 0, 4, &t); /* an extent of 4: the indexed block at 3 is 12 bytes in */
    MPI_Type_free(&member);
    MPI_Type_indexed(1, &one1, &three, t, &member);
    MPI_Type_free(&t);
    t = member;
    MPI_Type_commit(&t);
    f = clampi_flat_get(t);
    CHECK(f && f->n == many && f->reps == many);
    for (size_t k = 0; f && k < many; k += many / 7) {
        const clampi_piece p = clampi_flat_piece(f, k);
        CHECK(p.offset == 36 + (MPI_Aint)k * 32 && p.packed == 4 * k && p.len == 4);
    }
    MPI_Type_free(&t);
    MPI_Type_free(&vec);
    /* a block of two pieces (a struct with a gap), repeated with a negative stride, under
     * resized and dup: piece 2r + 1 is the second member of block r */
    int bl[2] = {1, 1};
    MPI_Aint bd[2] = {0, 8};
    MPI_Datatype bt[2] = {MPI_INT, MPI_INT}, pair, neg, res;
    MPI_Type_create_struct(2, bl, bd, bt, &pair);
    MPI_Type_create_hvector((int)many, 1, -16, pair, &neg);
    MPI_Type_create_resized(neg, 0, 64, &res);
    MPI_Type_dup(res, &t);
    MPI_Type_commit(&t);
    f = clampi_flat_get(t);
    CHECK(f && f->n == 2 * many && f->reps == many && f->extent == 64 && f->size == 8 * many);
    for (size_t r = 0; f && r < many; r += many / 5) {
        const clampi_piece p = clampi_flat_piece(f, 2 * r + 1);
        CHECK(p.offset == -16 * (MPI_Aint)r + 8 && p.packed == 8 * r + 4 && p.len == 4);
    }
    MPI_Type_free(&t);
    MPI_Type_free(&res);
    MPI_Type_free(&neg);
    /* blocks that reach into the next ones (24 bytes apart, 44 long: interleaved, 24 MiB):
     * refused, as one block's list cannot tell their order */
    MPI_Datatype wide;
    bd[1] = 40;
    MPI_Type_create_struct(2, bl, bd, bt, &wide);
    MPI_Type_create_hvector((int)many, 1, 24, wide, &t);
    MPI_Type_commit(&t);
    CHECK(!clampi_flat_get(t));
    MPI_Type_free(&t);
    MPI_Type_free(&wide);
    MPI_Type_free(&pair);
    /* a struct listing many evenly spaced members (as MPICH's test types do), and one block
     * of many elements: repeats */
    {
        int *lens = malloc(sizeof(int) * 2 * many);
        MPI_Aint *at = malloc(sizeof(MPI_Aint) * 2 * many);
        MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * 2 * many);
        for (size_t k = 0; k < 2 * many; k++) lens[k] = 1, at[k] = 8 + 16 * (MPI_Aint)k, types[k] = MPI_INT;
        MPI_Type_create_struct((int)many, lens, at, types, &t);
        MPI_Type_commit(&t);
        f = clampi_flat_get(t);
        CHECK(f && f->n == many && f->reps == many && f->rep_stride == 16);
        for (size_t k = 0; f && k < many; k += many / 7) {
            const clampi_piece p = clampi_flat_piece(f, k);
            CHECK(p.offset == 8 + 16 * (MPI_Aint)k && p.packed == 4 * k && p.len == 4);
        }
        MPI_Type_free(&t);
        /* empty members between the others hold nothing: still a repeat */
        for (size_t k = 0; k < 2 * many; k++) lens[k] = k % 2 ? 0 : 2, at[k] = 8 + 32 * (MPI_Aint)(k / 2);
        MPI_Type_create_struct((int)(2 * many), lens, at, types, &t);
        MPI_Type_commit(&t);
        f = clampi_flat_get(t);
        CHECK(f && f->n == many && f->reps == many && f->rep_stride == 32 && f->piece[0].len == 8);
        MPI_Type_free(&t);
        /* two copies of a struct of many members at a negative stride (an indexed type's one
         * block of 2): the repeat repeated; piece j of copy c is 4 bytes at
         * c * extent + 8 * (many - 1 - j) + 8 */
        for (size_t k = 0; k < many; k++) lens[k] = 1, at[k] = 8 * (MPI_Aint)(many - k);
        MPI_Datatype down;
        MPI_Type_create_struct((int)many, lens, at, types, &down);
        MPI_Aint lb0, down_extent;
        MPI_Type_get_extent(down, &lb0, &down_extent);
        int two = 2, zero = 0;
        MPI_Type_indexed(1, &two, &zero, down, &t);
        MPI_Type_commit(&t);
        f = clampi_flat_get(t);
        CHECK(f && f->n == 2 * many && f->reps == many && f->reps2 == 2);
        for (size_t j = 0; f && j < 2 * many; j += many / 3) {
            const clampi_piece p = clampi_flat_piece(f, j);
            const size_t copy = j / many, k = j % many;
            CHECK(p.offset == (MPI_Aint)copy * down_extent + 8 * (MPI_Aint)(many - k) && p.packed == 4 * j &&
                  p.len == 4);
        }
        MPI_Type_free(&t);
        MPI_Type_free(&down);
        for (size_t k = 0; k < many; k++) lens[k] = 1, at[k] = 8 + 16 * (MPI_Aint)k;
        at[many / 2] += 4; /* one member out of step: a list, too long */
        MPI_Type_create_struct((int)many, lens, at, types, &t);
        MPI_Type_commit(&t);
        CHECK(!clampi_flat_get(t));
        MPI_Type_free(&t);
        free(lens);
        free(at);
        free(types);
        MPI_Datatype spaced;
        MPI_Type_create_resized(MPI_INT, 0, 20, &spaced); /* 20 MiB in all: past the byte analysis */
        MPI_Type_create_hvector(1, (int)many, 0, spaced, &t);
        MPI_Type_commit(&t);
        f = clampi_flat_get(t);
        CHECK(f && f->n == many && f->reps == many && f->rep_stride == 20);
        MPI_Type_free(&t);
        MPI_Type_free(&spaced);
    }
    /* an irregular type above the limit (indexed, listed by the program): refused */
    int *disp = malloc(sizeof(int) * many);
    for (size_t k = 0; k < many; k++) disp[k] = (int)(k * 32 + (k & 1));
    MPI_Type_create_indexed_block((int)many, 1, disp, MPI_CHAR, &t);
    MPI_Type_commit(&t);
    CHECK(!clampi_flat_get(t));
    MPI_Type_free(&t);
    free(disp);
}

/* n of otype from out to peer's one ttype at disp, flushed, then got back into in */
static void put_then_get(CMPI_Win w, int peer, void *out, void *in, int n, MPI_Datatype otype, MPI_Aint disp,
                         MPI_Datatype ttype) {
    CHECK_EQ_INT(CMPI_Put(out, n, otype, peer, disp, 1, ttype, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(peer, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Get(in, n, otype, peer, disp, 1, ttype, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(peer, w), MPI_SUCCESS);
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
    put_then_get(w, peer, out, in, ROWS, MPI_DOUBLE, 7, col);
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

    /* A target type of more than CLAMPI_FLAT_MAX_PIECES pieces (1.25 Mi ints, 32 bytes
     * apart: the whole window): put, got back, every byte of the target checked. Over
     * shared memory only: the pieces are issued alike over TCP, at 10-20 s a run. */
    const char *tls = getenv("UCX_TLS");
    if (tls && strstr(tls, "tcp")) {
        CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
        return;
    }
    const int many = (int)(CLAMPI_FLAT_MAX_PIECES + CLAMPI_FLAT_MAX_PIECES / 4);
    MPI_Datatype sparse;
    MPI_Type_vector(many, 1, 8, MPI_INT, &sparse);
    MPI_Type_commit(&sparse);
    int *vals = malloc(sizeof(int) * (size_t)many), *back = malloc(sizeof(int) * (size_t)many);
    CHECK(vals && back);
    for (int k = 0; k < many; k++) vals[k] = 10000000 * rank + k, back[k] = -1;
    memset(mem, 0xEE, (size_t)bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, peer, 0, w), MPI_SUCCESS);
    put_then_get(w, peer, vals, back, many, MPI_INT, 0, sparse);
    for (int k = 0; k < many; k++) CHECK(back[k] == vals[k]);
    /* the same ints got backwards (a negative stride: the type's first byte lies below the
     * displacement, at the window's start) */
    MPI_Datatype down;
    MPI_Type_create_hvector(many, 1, -32, MPI_INT, &down);
    MPI_Type_commit(&down);
    for (int k = 0; k < many; k++) back[k] = -1;
    const MPI_Aint last = (MPI_Aint)(many - 1) * 32 / (MPI_Aint)sizeof(double);
    CHECK_EQ_INT(CMPI_Get(back, many, MPI_INT, peer, last, 1, down, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_unlock(peer, w), MPI_SUCCESS);
    for (int k = 0; k < many; k++) CHECK(back[k] == vals[many - 1 - k]);
    MPI_Type_free(&down);
    MPI_Barrier(MPI_COMM_WORLD);
    const int *got = (const int *)mem;
    int bad = 0;
    for (MPI_Aint j = 0; j < bytes / (MPI_Aint)sizeof(int); j++) {
        unsigned want;
        if (j % 8 == 0)
            want = (unsigned)(10000000 * peer + (int)(j / 8));
        else
            memset(&want, 0xEE, sizeof want);
        bad += (unsigned)got[j] != want;
    }
    if (bad) fprintf(stderr, "rank %d: %d ints of the window wrong after the sparse put\n", rank, bad);
    CHECK(bad == 0);
    free(vals);
    free(back);
    MPI_Type_free(&sparse);
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
