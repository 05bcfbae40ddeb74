/* CMPIX_Win_op_intrinsic (the Quo Vadis RMA paper, §2.3): answered from what UCX reports for the endpoints the
 * window uses, never assumed. The transport answer is computed once per window (all its
 * endpoints exist from creation) and kept in the extension state. */
#include <stdlib.h>

#include "clampi/rmax.h"
#include "rma/errors.h"
#include "backends/intrinsic_ops.h"
#include "rmax/family.h"
#include "rmax/ucx_parts.h"
#if CLAMPI_HAVE_UCX
#include "backends/ucx/intrinsic.h"
#include "backends/ucx/target.h"
#include "rmax/memhandle.h"
#include "rmax/ucx_access.h"

/* 1 if, for every target, UCX has an atomic lane that reaches the target's window memory
 * (the lane's remote md is in the memory's rkey): then atomics are executed by the target's
 * NIC or, on shared memory, by the origin's CPU on the mapped segment. Anything else is
 * emulated by UCX with active messages that the target's CPU runs. w: the window, ep_win:
 * the window whose endpoints it uses (a memory-handle window's parent). */
static int transports_intrinsic(clampi_win *w, clampi_win *ep_win) {
    clampi_rmax *x = clampi_rmax_of(w);
    if (x && x->atomic_lanes) return x->atomic_lanes > 0;
    ucp_ep_h *eps = NULL;
    int n = clampi_rmax_eps(ep_win, &eps), all = n > 0;
    const clampi_mh_win *m = clampi_ucx_mh_of(&w->b);
    const int only = m ? m->target : -1;
    for (int r = 0; r < n && all; r++) {
        if (only >= 0 && r != only) continue;
        if (!eps[r] || !(clampi_ucx_ep_amo_mds(eps[r]) & clampi_ucx_target_md_map(&w->b, r))) all = 0;
    }
    if (x) x->atomic_lanes = all ? 1 : -1;
    return all;
}
#else
static int transports_intrinsic(clampi_win *w, clampi_win *ep_win) { return 0; } /* no UCX: no window on it */
#endif

int CMPIX_Win_op_intrinsic(const char *ops, int max_count, MPI_Datatype datatype, CMPI_Win win, int *flag) {
    clampi_win *w = clampi_registry_find(win);
    if (!w) return clampi_raise_nowin(CLAMPI_E_WIN);
    unsigned bits;
    if (!flag || clampi_intrinsic_parse_ops(ops, &bits) != 0) return clampi_raise_win(w, CLAMPI_E_ARG);
    if (max_count < 0) return clampi_raise_win(w, CLAMPI_E_COUNT);
    if (datatype == MPI_DATATYPE_NULL) return clampi_raise_win(w, CLAMPI_E_TYPE);
    /* A memory-handle window uses its parent's endpoints. */
    clampi_win *eps_of = w->rmax && w->rmax->kind != CLAMPI_RMAX_PARENT ? w->rmax->parent : w;
    *flag = clampi_rmax_is_ucx(w) && clampi_intrinsic_supported(bits, max_count, datatype) &&
            transports_intrinsic(w, eps_of);
    return MPI_SUCCESS;
}
