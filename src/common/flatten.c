#include "common/flatten.h"

#include "common/datatype.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int flat_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t flat_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t flat_lock = PTHREAD_MUTEX_INITIALIZER; /* compute + set, once per type */

static int flat_delete(MPI_Datatype type, int keyval, void *value, void *extra) {
    (void)type, (void)keyval, (void)extra;
    free(value);
    return MPI_SUCCESS;
}
static void flat_keyval_create(void) { MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, flat_delete, &flat_keyval, NULL); }

/* (flatten.h) */
int clampi_unpack_positions(MPI_Datatype type, unsigned char *packed, uint64_t size, int shift, unsigned char *span,
                            MPI_Aint true_lb) {
    if (size > INT32_MAX) return MPI_ERR_COUNT;
    for (uint64_t k = 0; k < size; k++) packed[k] = shift < 0 ? 0xff : (unsigned char)(k >> (8 * shift));
    int pos = 0;
    /* integer arithmetic: an absolute type's true_lb would overflow the pointer */
    return MPI_Unpack(packed, (int)size, &pos, (void *)((uintptr_t)span - (uintptr_t)true_lb), 1, type, MPI_COMM_SELF);
}

/* (flatten.h) Which packed position lands on each byte of the extent, a byte of the
 * position per pass; the pieces are then the runs where both the address and the position
 * advance by one. A byte written twice (overlapping typemap) shows as fewer marked bytes
 * than size. */
clampi_flat *clampi_flatten_bytes(MPI_Datatype type) {
    int size;
    MPI_Aint lb, extent, true_lb, true_extent;
    if (MPI_Type_size(type, &size) != MPI_SUCCESS || MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
        return NULL;
    if (size <= 0 || true_extent <= 0 || true_extent > CLAMPI_FLAT_MAX_EXTENT) return NULL;
    const size_t span_bytes = (size_t)true_extent;
    unsigned char *packed = malloc((size_t)size), *mark = calloc(1, span_bytes), *pass = malloc(span_bytes);
    uint32_t *position = calloc(span_bytes, sizeof *position);
    clampi_flat *f = NULL;
    if (!packed || !mark || !pass || !position) goto out;
    if (clampi_unpack_positions(type, packed, (uint64_t)size, -1, mark, true_lb) != MPI_SUCCESS) goto out;
    size_t marked = 0, runs = 0;
    for (size_t p = 0; p < span_bytes; p++) marked += mark[p] == 0xff;
    if (marked != (size_t)size) goto out; /* overlapping */
    for (int shift = 0; shift < 4 && ((uint64_t)(size - 1) >> (8 * shift)) != 0; shift++) {
        if (clampi_unpack_positions(type, packed, (uint64_t)size, shift, pass, true_lb) != MPI_SUCCESS) goto out;
        for (size_t p = 0; p < span_bytes; p++)
            if (mark[p]) position[p] |= (uint32_t)pass[p] << (8 * shift);
    }
    for (size_t p = 0; p < span_bytes; p++)
        if (mark[p] && !(p > 0 && mark[p - 1] && position[p] == position[p - 1] + 1)) runs++;
    f = malloc(sizeof *f + runs * sizeof f->piece[0]);
    if (!f) goto out;
    f->extent = extent;
    f->size = (uint64_t)size;
    f->n = 0;
    f->reps = f->reps2 = 1, f->rep_stride = f->rep2_stride = 0, f->rep_packed = f->rep2_packed = 0;
    for (size_t p = 0; p < span_bytes; p++) {
        if (!mark[p]) continue;
        if (p > 0 && mark[p - 1] && position[p] == position[p - 1] + 1) {
            f->piece[f->n - 1].len++;
            continue;
        }
        f->piece[f->n++] = (clampi_piece){true_lb + (MPI_Aint)p, position[p], 1};
    }
    f->stored = f->n;
out:
    free(packed);
    free(mark);
    free(pass);
    free(position);
    return f;
}

/* The byte analysis up to CLAMPI_FLAT_MAX_EXTENT (it reads any constructor, darrays too),
 * the constructors above it (cost by pieces, not by extent). */
static clampi_flat *flatten(MPI_Datatype type) {
    MPI_Aint true_lb, true_extent;
    if (MPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS) return NULL;
    return true_extent > CLAMPI_FLAT_MAX_EXTENT ? clampi_flatten_constructors(type) : clampi_flatten_bytes(type);
}

/* Predefined types with gaps (the pair types MPI_DOUBLE_INT, MPI_LONG_DOUBLE_INT, ...:
 * size below extent) are flattened too, kept here rather than as attributes, for the
 * life of the process: a count of them is not contiguous. Dense predefined types get
 * NULL (the callers treat them as one run). */
#define CLAMPI_FLAT_NAMED_MAX 32
typedef struct flat_named_entry {
    MPI_Datatype type;
    clampi_flat *flat;
} flat_named_entry;
static flat_named_entry flat_named[CLAMPI_FLAT_NAMED_MAX];
static int flat_named_n;

static const clampi_flat *flat_get_named(MPI_Datatype type) {
    int size;
    MPI_Aint lb, extent, true_lb, true_extent;
    if (MPI_Type_size(type, &size) != MPI_SUCCESS || MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
        return NULL;
    if (size <= 0 || (extent == size && true_extent == size && true_lb == 0)) return NULL; /* dense */
    clampi_flat *f = NULL;
    pthread_mutex_lock(&flat_lock);
    for (int i = 0; i < flat_named_n && !f; i++)
        if (flat_named[i].type == type) f = flat_named[i].flat;
    if (!f && flat_named_n < CLAMPI_FLAT_NAMED_MAX && (f = flatten(type)))
        flat_named[flat_named_n++] = (flat_named_entry){type, f};
    pthread_mutex_unlock(&flat_lock);
    return f;
}

const clampi_flat *clampi_flat_get(MPI_Datatype type) {
    if (type == MPI_DATATYPE_NULL) return NULL;
    int ni, na, nd, combiner;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return NULL;
    if (combiner == MPI_COMBINER_NAMED) return flat_get_named(type);
    pthread_once(&flat_once, flat_keyval_create);
    if (flat_keyval == MPI_KEYVAL_INVALID) return NULL;
    void *value = NULL;
    int found = 0;
    /* Flattened before: no lock (MPI's attribute calls are thread-safe; the pieces never
     * change once set). Only the first flattening of a type is serialized. */
    MPI_Type_get_attr(type, flat_keyval, &value, &found);
    if (found) return value;
    pthread_mutex_lock(&flat_lock);
    MPI_Type_get_attr(type, flat_keyval, &value, &found);
    if (!found) {
        value = flatten(type);
        if (value) MPI_Type_set_attr(type, flat_keyval, value);
    }
    pthread_mutex_unlock(&flat_lock);
    return value;
}

int clampi_type_basic(MPI_Datatype type, MPI_Datatype *basic) {
    clampi_type_contents c;
    if (clampi_type_contents_get(type, &c) != 0) return -1;
    if (c.combiner == MPI_COMBINER_NAMED) {
        *basic = type;
        return 0;
    }
    int rc = c.nd > 0 ? 0 : -1;
    for (int i = 0; i < c.nd; i++) {
        MPI_Datatype b;
        if (clampi_type_basic(c.types[i], &b) != 0 || (i > 0 && b != *basic))
            rc = -1;
        else
            *basic = b;
    }
    clampi_type_contents_free(&c);
    return rc;
}
