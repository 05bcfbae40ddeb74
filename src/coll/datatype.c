/* Which datatypes the shared path can move as plain bytes. */
#include "coll/coll_internal.h"
#include "common/datatype.h"

/* The common predefined types: contiguous by definition, no MPI calls needed. */
static int common_predefined(MPI_Datatype t) {
    return t == MPI_BYTE || t == MPI_CHAR || t == MPI_INT || t == MPI_DOUBLE || t == MPI_FLOAT || t == MPI_LONG ||
           t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG || t == MPI_LONG_LONG || t == MPI_UNSIGNED_LONG_LONG ||
           t == MPI_SHORT || t == MPI_UNSIGNED_SHORT || t == MPI_UNSIGNED_CHAR || t == MPI_SIGNED_CHAR ||
           t == MPI_INT8_T || t == MPI_INT16_T || t == MPI_INT32_T || t == MPI_INT64_T || t == MPI_UINT8_T ||
           t == MPI_UINT16_T || t == MPI_UINT32_T || t == MPI_UINT64_T || t == MPI_C_BOOL || t == MPI_AINT ||
           t == MPI_C_DOUBLE_COMPLEX || t == MPI_C_FLOAT_COMPLEX;
}

int clampi_coll_type_contiguous(MPI_Datatype t) {
    if (t == MPI_BYTE || t == MPI_INT || t == MPI_DOUBLE || t == MPI_CHAR)
        return 1; /* the most common ones first: this runs twice per call */
    if (t == MPI_DATATYPE_NULL) return 0;
    if (common_predefined(t)) return 1;
    int size;
    MPI_Aint lb, ext, tlb, text;
    if (MPI_Type_size(t, &size) != MPI_SUCCESS) return 0;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    /* n elements must be n*size bytes with no gaps starting at the buffer address */
    if (lb != 0 || tlb != 0 || ext != size || text != size) return 0;
    clampi_type_contents c;
    if (clampi_type_contents_get(t, &c) != 0) return 0;
    int comb = c.combiner, ok = 0;
    if (comb == MPI_COMBINER_NAMED) return 1;
    /* indexed/struct may repeat bytes even when size == extent */
    if ((comb == MPI_COMBINER_DUP || comb == MPI_COMBINER_CONTIGUOUS || comb == MPI_COMBINER_RESIZED ||
         comb == MPI_COMBINER_VECTOR || comb == MPI_COMBINER_HVECTOR) &&
        c.nd == 1)
        ok = clampi_coll_type_contiguous(c.types[0]);
    clampi_type_contents_free(&c);
    return ok;
}
