/* rmaext_bench: the RMA-extension benchmarks (the Quo Vadis RMA paper), one experiment per
 * run: rmaext_bench mt|order|order_mt|wins|amo|progress [--trials N] [--iters N] [--threads T]
 * [--mpi-only] [--busy-ms X]. Rank 0 prints one JSON object per line; run.sh collects
 * them (Open MPI and MPICH builds, shared memory and TCP) and plot.py draws them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"

int main(int argc, char **argv) {
    /* Only the threaded experiment asks for MPI_THREAD_MULTIPLE: Open MPI's osc pt2pt (the
     * TCP configuration) refuses windows under it. */
    int provided;
    int want_mt = argc > 1 && (!strcmp(argv[1], "mt") || !strcmp(argv[1], "order_mt"));
    MPI_Init_thread(&argc, &argv, want_mt ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    exp_opts o = {.trials = 5, .iters = 0, .max_threads = 32, .mpi_only = 0, .busy_ms = 200};
    const char *exp = argc > 1 ? argv[1] : "";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--trials") && i + 1 < argc)
            o.trials = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            o.iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            o.max_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--busy-ms") && i + 1 < argc)
            o.busy_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--mpi-only"))
            o.mpi_only = 1;
        else if (!strcmp(argv[i], "--no-mpi-cas"))
            o.no_mpi_cas = 1;
    }
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 2 || (want_mt && provided != MPI_THREAD_MULTIPLE)) {
        fprintf(stderr, "rmaext_bench: needs 2 ranks (and MPI_THREAD_MULTIPLE for mt)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rc = 2;
    if (!strcmp(exp, "mt"))
        rc = exp_mt(&o);
    else if (!strcmp(exp, "order"))
        rc = exp_order(&o);
    else if (!strcmp(exp, "order_mt"))
        rc = exp_order_mt(&o);
    else if (!strcmp(exp, "wins"))
        rc = exp_wins(&o);
    else if (!strcmp(exp, "amo"))
        rc = exp_amo(&o);
    else if (!strcmp(exp, "progress"))
        rc = exp_progress(&o);
    else
        fprintf(stderr, "usage: rmaext_bench mt|order|order_mt|wins|amo|progress [options]\n");
    MPI_Finalize();
    return rc;
}
