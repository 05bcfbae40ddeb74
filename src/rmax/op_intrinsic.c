/* CMPIX_Win_op_intrinsic (the Quo Vadis RMA paper, §2.3): answered by the backend from what
 * its transports report for the endpoints the window uses, never assumed (op_intrinsic in
 * backend.h). The transports' answer is computed once per window (all its endpoints exist
 * from creation) and kept in the extension state. */
#include "clampi/rmax.h"
#include "rma/errors.h"
#include "rmax/family.h"

int CMPIX_Win_op_intrinsic(const char *ops, int max_count, MPI_Datatype datatype, CMPI_Win win, int *flag) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    unsigned bits;
    if (!flag || clampi_intrinsic_parse_ops(ops, &bits) != 0) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (max_count < 0) return clampi_raise_win(w, CLAMPI_E_COUNT);
    if (datatype == MPI_DATATYPE_NULL) return clampi_raise_win(w, CLAMPI_E_TYPE);
    const clampi_backend_ext *e = clampi_rmax_ext(w);
    clampi_rmax *x = e ? clampi_rmax_of(w) : NULL;
    int lanes = 0;
    /* A memory-handle window (or a duplicate) uses its parent's endpoints. */
    *flag =
        e && e->op_intrinsic(&w->b, &clampi_rmax_root(w)->b, bits, max_count, datatype, x ? &x->atomic_lanes : &lanes);
    return MPI_SUCCESS;
}
