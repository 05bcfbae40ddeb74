/* Flattening from a type's constructors (MPI_Type_get_contents), for types whose true
 * extent is too large for the byte analysis of flatten.c (a vector whose stride spans tens
 * of MiB): the pieces of each constructor's old type are computed once and repeated at the
 * constructor's displacements, so the cost is the number of pieces, not the extent.
 *
 * Pieces are produced in typemap order (the order of the packed stream), runs that touch
 * merged; then sorted by address, checked for overlap and merged again where both the
 * address and the packed position continue. Combiners: named, dup, contiguous, (h)vector,
 * (h)indexed, (h)indexed_block, struct, resized, subarray. Above CLAMPI_FLAT_MAX_PIECES
 * pieces, a type that repeats one block at a fixed stride (as_regular, through dup,
 * resized and one-copy constructors, up to two levels) keeps the pieces of one block and
 * the repeat (flatten.h). A darray, a Fortran-integer constructor or a type MPI cannot describe with
 * int counts gives NULL (the caller refuses the type, as before). */
#include "common/flatten.h"

#include "common/datatype.h"

#include <stdlib.h>

typedef struct run {
    MPI_Aint off;
    uint64_t len;
} run;

typedef struct runs {
    run *r;
    size_t n, cap;
    int failed; /* out of memory or above CLAMPI_FLAT_MAX_PIECES */
} runs;

static void emit(runs *out, MPI_Aint off, uint64_t len) {
    if (out->failed || len == 0) return;
    if (out->n && out->r[out->n - 1].off + (MPI_Aint)out->r[out->n - 1].len == off) {
        out->r[out->n - 1].len += len; /* continues the previous run in address and stream */
        return;
    }
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 16;
        run *r = cap <= CLAMPI_FLAT_MAX_PIECES ? realloc(out->r, cap * sizeof *r) : NULL;
        if (!r) {
            out->failed = 1;
            return;
        }
        out->r = r;
        out->cap = cap;
    }
    out->r[out->n++] = (run){off, len};
}

/* blocklen consecutive elements of old (pieces `in`, extent old_extent) at disp */
static void emit_block(runs *out, const runs *in, MPI_Aint disp, MPI_Aint old_extent, MPI_Aint blocklen) {
    for (MPI_Aint j = 0; j < blocklen && !out->failed; j++)
        for (size_t k = 0; k < in->n; k++) emit(out, disp + j * old_extent + in->r[k].off, in->r[k].len);
}

static int decode(MPI_Datatype type, runs *out);

/* A predefined type: one run, or the byte analysis's pieces for a pair type with a gap
 * (MPI_DOUBLE_INT): small, and in stream order. */
static int decode_named(MPI_Datatype type, runs *out) {
    MPI_Count size;
    MPI_Aint lb, extent, true_lb, true_extent;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS || MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS || size < 0)
        return -1;
    if (size == true_extent) {
        emit(out, true_lb, (uint64_t)size);
        return 0;
    }
    clampi_flat *f = clampi_flatten_bytes(type);
    if (!f) return -1;
    for (size_t k = 0; k < f->n; k++) emit(out, f->piece[k].offset, f->piece[k].len);
    free(f);
    return 0;
}

/* Subarray (MPI 5.1.3): the sub-block's elements in the order's index order (C: last index
 * fastest), each at its place in the full array. */
static void emit_subarray(runs *out, const runs *in, MPI_Aint old_extent, int nd, const int *sizes, const int *subsizes,
                          const int *starts, int order) {
    MPI_Aint *stride = malloc(sizeof *stride * (size_t)(nd > 0 ? nd : 1));
    int *idx = malloc(sizeof *idx * (size_t)(nd > 0 ? nd : 1));
    int *dim = malloc(sizeof *dim * (size_t)(nd > 0 ? nd : 1)); /* dim[0] is the fastest-moving dimension */
    if (!stride || !idx || !dim) {
        out->failed = 1;
        goto done;
    }
    for (int k = 0; k < nd; k++) dim[k] = order == MPI_ORDER_C ? nd - 1 - k : k;
    MPI_Aint s = old_extent;
    for (int k = 0; k < nd; k++) {
        stride[dim[k]] = s;
        s *= sizes[dim[k]];
    }
    for (int k = 0; k < nd; k++) {
        if (subsizes[k] <= 0) goto done;
        idx[k] = 0;
    }
    for (;;) {
        MPI_Aint disp = 0;
        for (int k = 0; k < nd; k++) disp += (MPI_Aint)(starts[k] + idx[k]) * stride[k];
        emit_block(out, in, disp, old_extent, 1);
        if (out->failed) break;
        int k = 0;
        while (k < nd && ++idx[dim[k]] == subsizes[dim[k]]) idx[dim[k++]] = 0;
        if (k == nd) break;
    }
done:
    free(stride);
    free(idx);
    free(dim);
}

/* A struct's members in order, each member type decoded once per run of members that
 * share it (a struct may list millions of members of one type: one decoding, not one
 * each). */
static int decode_struct(const int *ints, const MPI_Aint *addrs, const MPI_Datatype *types, runs *out) {
    runs cur = {NULL, 0, 0, 0};
    MPI_Aint lb, ext = 0;
    int rc = 0;
    for (int i = 0; i < ints[0] && rc == 0 && !out->failed; i++) {
        if (i == 0 || types[i] != types[i - 1]) {
            free(cur.r);
            cur = (runs){NULL, 0, 0, 0};
            rc = decode(types[i], &cur);
            if (rc == 0 && (cur.failed || MPI_Type_get_extent(types[i], &lb, &ext) != MPI_SUCCESS)) rc = -1;
        }
        if (rc == 0) emit_block(out, &cur, addrs[i], ext, ints[1 + i]);
    }
    free(cur.r);
    return rc;
}

static int decode_contents(int combiner, const int *ints, const MPI_Aint *addrs, const MPI_Datatype *types, int nd,
                           runs *out) {
    if (combiner == MPI_COMBINER_STRUCT) return decode_struct(ints, addrs, types, out);
    runs *in = calloc((size_t)(nd > 0 ? nd : 1), sizeof *in);
    MPI_Aint lb, *ext = malloc(sizeof *ext * (size_t)(nd > 0 ? nd : 1));
    int rc = in && ext ? 0 : -1;
    for (int i = 0; i < nd && rc == 0; i++) {
        rc = decode(types[i], &in[i]);
        if (rc == 0 && (in[i].failed || MPI_Type_get_extent(types[i], &lb, &ext[i]) != MPI_SUCCESS)) rc = -1;
    }
    if (rc == 0) switch (combiner) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_RESIZED: /* the same typemap; lb and extent only move the next element */
            emit_block(out, &in[0], 0, ext[0], 1);
            break;
        case MPI_COMBINER_CONTIGUOUS: emit_block(out, &in[0], 0, ext[0], ints[0]); break;
        case MPI_COMBINER_VECTOR:
            for (int i = 0; i < ints[0]; i++) emit_block(out, &in[0], (MPI_Aint)i * ints[2] * ext[0], ext[0], ints[1]);
            break;
        case MPI_COMBINER_HVECTOR:
            for (int i = 0; i < ints[0]; i++) emit_block(out, &in[0], (MPI_Aint)i * addrs[0], ext[0], ints[1]);
            break;
        case MPI_COMBINER_INDEXED:
            for (int i = 0; i < ints[0]; i++)
                emit_block(out, &in[0], (MPI_Aint)ints[1 + ints[0] + i] * ext[0], ext[0], ints[1 + i]);
            break;
        case MPI_COMBINER_HINDEXED:
            for (int i = 0; i < ints[0]; i++) emit_block(out, &in[0], addrs[i], ext[0], ints[1 + i]);
            break;
        case MPI_COMBINER_INDEXED_BLOCK:
            for (int i = 0; i < ints[0]; i++) emit_block(out, &in[0], (MPI_Aint)ints[2 + i] * ext[0], ext[0], ints[1]);
            break;
        case MPI_COMBINER_HINDEXED_BLOCK:
            for (int i = 0; i < ints[0]; i++) emit_block(out, &in[0], addrs[i], ext[0], ints[1]);
            break;
        case MPI_COMBINER_SUBARRAY:
            emit_subarray(out, &in[0], ext[0], ints[0], ints + 1, ints + 1 + ints[0], ints + 1 + 2 * ints[0],
                          ints[1 + 3 * ints[0]]);
            break;
        default: rc = -1; /* darray, the Fortran-integer forms */
        }
    for (int i = 0; in && i < nd; i++) free(in[i].r);
    free(in);
    free(ext);
    return rc;
}

/* The pieces of one element of type, in typemap order, appended to out. */
static int decode(MPI_Datatype type, runs *out) {
    clampi_type_contents c;
    if (clampi_type_contents_get(type, &c) != 0) return -1;
    if (c.combiner == MPI_COMBINER_NAMED) return decode_named(type, out);
    if (c.combiner == MPI_COMBINER_F90_REAL || c.combiner == MPI_COMBINER_F90_COMPLEX ||
        c.combiner == MPI_COMBINER_F90_INTEGER) {
        int size;
        clampi_type_contents_free(&c);
        if (MPI_Type_size(type, &size) != MPI_SUCCESS) return -1;
        emit(out, 0, (uint64_t)size); /* a predefined Fortran kind: dense */
        return 0;
    }
    int rc = decode_contents(c.combiner, c.ints, c.addrs, c.types, c.nd, out);
    clampi_type_contents_free(&c);
    return out->failed ? -1 : rc;
}

static int by_offset(const void *a, const void *b) {
    const clampi_piece *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The pieces of `out` (typemap order) of one element of `size` bytes: packed positions
 * in stream order, then sorted by address, overlaps refused, runs that continue in both
 * address and stream merged. NULL when the runs do not hold exactly size bytes (a
 * combiner read wrongly: refuse rather than move wrong bytes) or overlap. */
static clampi_flat *listed(const runs *out, uint64_t size) {
    clampi_flat *f = malloc(sizeof *f + out->n * sizeof f->piece[0]);
    if (!f) return NULL;
    uint64_t packed = 0;
    for (size_t k = 0; k < out->n; k++) {
        f->piece[k] = (clampi_piece){out->r[k].off, packed, out->r[k].len};
        packed += out->r[k].len;
    }
    if (packed != size) goto fail;
    qsort(f->piece, out->n, sizeof f->piece[0], by_offset);
    size_t n = 0;
    for (size_t k = 0; k < out->n; k++) {
        const clampi_piece c = f->piece[k];
        if (n && f->piece[n - 1].offset + (MPI_Aint)f->piece[n - 1].len > c.offset) goto fail; /* overlapping */
        if (n && f->piece[n - 1].offset + (MPI_Aint)f->piece[n - 1].len == c.offset &&
            f->piece[n - 1].packed + f->piece[n - 1].len == c.packed)
            f->piece[n - 1].len += c.len;
        else
            f->piece[n++] = c;
    }
    f->size = size;
    f->n = f->stored = n;
    f->reps = f->reps2 = 1, f->rep_stride = f->rep2_stride = 0, f->rep_packed = f->rep2_packed = 0;
    return f;
fail:
    free(f);
    return NULL;
}

/* Whether c is one copy of its old type (a struct of one member, an indexed type of one
 * block, a vector of one block, each of length one: how MPICH's test types nest a large
 * type), and at which displacement. */
static int one_copy(const clampi_type_contents *c, MPI_Aint *at) {
    MPI_Aint lb, ext;
    if (c->nd != 1 || c->ni < 1 || c->ints[0] != 1) return 0;
    if (c->combiner == MPI_COMBINER_CONTIGUOUS) {
        *at = 0;
        return 1;
    }
    if (c->ni < 2) return 0;
    switch (c->combiner) {
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: *at = 0; return c->ints[1] == 1;
    case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_HINDEXED_BLOCK: *at = c->addrs[0]; return c->ints[1] == 1;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
        if (c->ni < 3 || c->ints[1] != 1 || MPI_Type_get_extent(c->types[0], &lb, &ext) != MPI_SUCCESS) return 0;
        *at = (MPI_Aint)c->ints[2] * ext;
        return 1;
    default: return 0;
    }
}

/* count blocks of blocklen old elements, stride bytes apart, the first at `first` */
typedef struct regular {
    MPI_Datatype old;
    MPI_Aint old_extent, blocklen, stride, first;
    int count;
} regular;

/* Whether c is such a type: a contiguous or (h)vector type, or an indexed, block-indexed or
 * struct type whose blocks are all alike and evenly spaced (as MPICH's test types list
 * millions of members); one block of several elements counts as that many blocks of one. */
static int as_regular(const clampi_type_contents *c, regular *g) {
    MPI_Aint lb;
    if (c->ni < 1 || c->nd < 1 || c->ints[0] < 1 ||
        MPI_Type_get_extent(c->types[0], &lb, &g->old_extent) != MPI_SUCCESS)
        return 0;
    const int n = c->ints[0], e = c->combiner;
    g->old = c->types[0];
    g->count = n;
    g->first = 0;
    if (e == MPI_COMBINER_CONTIGUOUS) {
        g->blocklen = 1, g->stride = g->old_extent;
    } else if ((e == MPI_COMBINER_VECTOR && c->ni >= 3) || (e == MPI_COMBINER_HVECTOR && c->ni >= 2)) {
        g->blocklen = c->ints[1];
        g->stride = e == MPI_COMBINER_VECTOR ? (MPI_Aint)c->ints[2] * g->old_extent : c->addrs[0];
    } else if (e == MPI_COMBINER_INDEXED || e == MPI_COMBINER_HINDEXED || e == MPI_COMBINER_INDEXED_BLOCK ||
               e == MPI_COMBINER_HINDEXED_BLOCK || e == MPI_COMBINER_STRUCT) {
        const int block = e == MPI_COMBINER_INDEXED_BLOCK || e == MPI_COMBINER_HINDEXED_BLOCK;
        const int need = e == MPI_COMBINER_INDEXED ? 1 + 2 * n
                         : block                   ? (e == MPI_COMBINER_INDEXED_BLOCK ? 2 + n : 2)
                                                   : 1 + n;
        if (c->ni < need || (e == MPI_COMBINER_STRUCT && c->nd < n)) return 0;
        MPI_Aint d0 = 0, d1 = 0;
        int m = 0; /* blocks of nonzero length (empty members hold nothing) */
        for (int i = 0; i < n; i++) {
            const int len = block ? c->ints[1] : c->ints[1 + i];
            if (len == 0) continue;
            const MPI_Aint d = e == MPI_COMBINER_INDEXED         ? (MPI_Aint)c->ints[1 + n + i] * g->old_extent
                               : e == MPI_COMBINER_INDEXED_BLOCK ? (MPI_Aint)c->ints[2 + i] * g->old_extent
                                                                 : c->addrs[i];
            if (m == 0) d0 = d, g->blocklen = len, g->old = c->types[e == MPI_COMBINER_STRUCT ? i : 0];
            if (m == 1) d1 = d;
            if (len != g->blocklen || (m > 1 && d != d0 + (MPI_Aint)m * (d1 - d0)) ||
                (e == MPI_COMBINER_STRUCT && c->types[i] != g->old))
                return 0;
            m++;
        }
        if (m == 0 || MPI_Type_get_extent(g->old, &lb, &g->old_extent) != MPI_SUCCESS) return 0;
        g->count = m, g->first = d0, g->stride = d1 - d0;
    } else {
        return 0;
    }
    if (g->count == 1 && g->blocklen > 1) /* one block: blocklen blocks of one element */
        g->count = (int)g->blocklen, g->blocklen = 1, g->stride = g->old_extent;
    return g->count > 1 && g->blocklen > 0;
}

/* A type with too many pieces to list that repeats one block at a fixed stride
 * (as_regular; under dup, resized and one-copy constructors): the block's pieces, repeated
 * count times. NULL for any other type, or when one block reaches into the next
 * (|stride| below the block's span: the repetitions would overlap or interleave). */
static clampi_flat *repeated(MPI_Datatype type, uint64_t size);

/* The bytes from a repeated flat's first piece to the end of its last. */
static MPI_Aint repeated_span(const clampi_flat *f) {
    const MPI_Aint one = f->piece[f->stored - 1].offset + (MPI_Aint)f->piece[f->stored - 1].len - f->piece[0].offset;
    return one + (MPI_Aint)(f->reps - 1) * (f->rep_stride < 0 ? -f->rep_stride : f->rep_stride);
}

/* g's count copies of an old type that itself repeats one block (two copies of a vector
 * of millions of blocks): the old type's repeat, repeated again. */
static clampi_flat *repeated_twice(regular g, uint64_t size) {
    clampi_flat *f = repeated(g.old, size / (uint64_t)g.count);
    if (!f) return NULL;
    if (f->reps2 > 1 || (g.stride < 0 ? -g.stride : g.stride) < repeated_span(f)) {
        free(f);
        return NULL;
    }
    for (size_t k = 0; k < f->stored; k++) f->piece[k].offset += g.first;
    f->reps2 = (size_t)g.count;
    f->rep2_stride = g.stride;
    f->rep2_packed = size / (uint64_t)g.count;
    f->n = f->stored * f->reps * f->reps2;
    f->size = size;
    return f;
}

static clampi_flat *repeated(MPI_Datatype type, uint64_t size) {
    clampi_type_contents c;
    if (clampi_type_contents_get(type, &c) != 0) return NULL;
    clampi_flat *f = NULL;
    regular g;
    MPI_Aint one_at; /* a constructor of one copy of its old type, at this displacement */
    if (c.combiner == MPI_COMBINER_DUP || c.combiner == MPI_COMBINER_RESIZED) {
        f = repeated(c.types[0], size); /* the same typemap */
    } else if (one_copy(&c, &one_at)) {
        if ((f = repeated(c.types[0], size)))
            for (size_t k = 0; k < f->stored; k++) f->piece[k].offset += one_at;
    } else if (as_regular(&c, &g) && size % (uint64_t)g.count == 0) {
        runs in = {NULL, 0, 0, 0}, block = {NULL, 0, 0, 0};
        if (decode(g.old, &in) == 0 && !in.failed) emit_block(&block, &in, g.first, g.old_extent, g.blocklen);
        if (!in.failed && !block.failed && block.n) f = listed(&block, size / (uint64_t)g.count);
        if (f) {
            const MPI_Aint span =
                f->piece[f->stored - 1].offset + (MPI_Aint)f->piece[f->stored - 1].len - f->piece[0].offset;
            if ((g.stride < 0 ? -g.stride : g.stride) < span) {
                free(f);
                f = NULL;
            } else {
                f->n = f->stored * (size_t)g.count;
                f->reps = (size_t)g.count;
                f->rep_stride = g.stride;
                f->rep_packed = size / (uint64_t)g.count;
                f->size = size;
            }
        }
        free(in.r);
        free(block.r);
        if (!f && g.blocklen == 1) f = repeated_twice(g, size);
    }
    clampi_type_contents_free(&c);
    return f;
}

/* (flatten.h) */
clampi_flat *clampi_flatten_constructors(MPI_Datatype type) {
    MPI_Count size;
    MPI_Aint lb, extent;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS || MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        size <= 0)
        return NULL;
    runs out = {NULL, 0, 0, 0};
    clampi_flat *f = NULL;
    if (decode(type, &out) == 0 && !out.failed) f = listed(&out, (uint64_t)size);
    free(out.r);
    /* above CLAMPI_FLAT_MAX_PIECES, here or in a nested type (or out of memory) */
    if (!f) f = repeated(type, (uint64_t)size);
    if (f) f->extent = extent;
    return f;
}
