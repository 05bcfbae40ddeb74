/* The collectives' knobs, read once through the options table (common/options.h). */
#include "coll/coll_internal.h"

#include "common/options.h"

static clampi_coll_options opts;
static int opts_read;

const clampi_coll_options *clampi_coll_options_get(void) {
    if (!opts_read) {
        opts.coll = (int)clampi_opt_process(CLAMPI_OPT_COLL).u;
        opts.staged_max = (size_t)clampi_opt_process(CLAMPI_OPT_COLL_STAGED_MAX).u;
        opts.direct_max = (size_t)clampi_opt_process(CLAMPI_OPT_COLL_DIRECT_MAX).u;
        opts.spin = (int)clampi_opt_process(CLAMPI_OPT_COLL_SPIN).u;
        opts.spin_oversub = (int)clampi_opt_process(CLAMPI_OPT_COLL_SPIN_OVERSUB).u;
        opts.eager_max = (size_t)clampi_opt_process(CLAMPI_OPT_COLL_EAGER_MAX).u;
        opts.hier = (int)clampi_opt_process(CLAMPI_OPT_COLL_HIER).u;
        opts.hier_alltoall_max = (size_t)clampi_opt_process(CLAMPI_OPT_COLL_HIER_ALLTOALL_MAX).u;
        /* morton|naive|mpi, in the order of CMPIX_Coll_algo after AUTO */
        opts.algo = (CMPIX_Coll_algo)(CMPIX_COLL_MORTON + (int)clampi_opt_process(CLAMPI_OPT_COLL_ALGO).u);
        opts_read = 1;
    }
    return &opts;
}
