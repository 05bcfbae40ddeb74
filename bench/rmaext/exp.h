/* The RMA-extension benchmark's experiments (one file each). Rank 0 prints JSON lines. */
#ifndef RMAEXT_EXP_H
#define RMAEXT_EXP_H
#include "bwin.h"

typedef struct exp_opts {
    int trials;           /* alternating trials per point (best and mean reported) */
    int iters;            /* operations per trial (0: the experiment's default) */
    int max_threads;      /* mt: largest thread count */
    int mpi_only;         /* baselines only (no clampi UCX variants) */
    int no_mpi_cas;       /* amo: skip the MPI's compare-and-swap (Open MPI 4.1.4 osc/rdma crashes in it) */
    double busy_ms;       /* progress: how long the target stays out of MPI */
    const char *progress; /* progress: clampi_progress value for the UCX variant */
} exp_opts;

int exp_mt(const exp_opts *o);
int exp_order(const exp_opts *o);
int exp_order_mt(const exp_opts *o);
int exp_wins(const exp_opts *o);
int exp_amo(const exp_opts *o);
int exp_progress(const exp_opts *o);
#endif
