/* The RMA-extension benchmark's experiments (one file each). Rank 0 prints JSON lines. */
#ifndef RMAEXT_EXP_H
#define RMAEXT_EXP_H
#include <pthread.h>

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

/* One thread of a threaded experiment (exp_threads.c). */
typedef struct exp_thread {
    bwin *w;
    int tid, size, iters, style; /* style: the experiment's own (order_mt: put_flush, ...) */
    pthread_barrier_t *start;
    double elapsed; /* seconds, written by the thread */
} exp_thread;
/* Rank 0 runs threads x body (at most 64); mean microseconds per operation over them. */
double exp_threads_run(bwin *w, int threads, int size, int iters, int style, int rank, void *(*body)(void *));

int exp_mt(const exp_opts *o);
int exp_order(const exp_opts *o);
int exp_order_mt(const exp_opts *o);
int exp_wins(const exp_opts *o);
int exp_amo(const exp_opts *o);
int exp_progress(const exp_opts *o);
#endif
