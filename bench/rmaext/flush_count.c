/* What one flush costs, counted rather than timed (the Quo Vadis RMA
 * paper's thread-scope flush): rank 0 runs T threads, each putting 8 bytes into its own slot
 * at rank 1 and flushing, N times; rank 1 waits in a barrier.
 *
 * Counted the same way for every variant (plain MPI window, clampi process scope, clampi
 * thread scope), by interposition (this executable exports pthread_mutex_lock & co., so the
 * MPI library's and UCX's calls reach them; see flush_probe.c): per flush, the locks taken
 * (and how many distinct lock words the flushing thread shares with any other thread of the
 * process, inside or outside flushes: the MPI's and clampi's progress threads included), the
 * distinct UCX workers progressed, the progress calls and the endpoint/worker flushes. Under
 * valgrind --tool=callgrind --toggle-collect='*Win_flush' (flush_count.sh) the instructions
 * per flush come too. clampi's own flush probe adds the workers and endpoints its flushes
 * visited and how many of the operations they drove were other threads'.
 *
 * usage: flush_count VARIANT THREADS ITERS   VARIANT: mpi | process | thread
 * Each thread's first put+flush (which creates its lane) is a warm-up: callgrind's counters
 * are zeroed after every thread did it.
 * prints (rank 0): variant=V threads=T flushes=F [workers=W eps=E own=O foreign=X] */
#include <clampi.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#include "flush_probe.h"
#include "ucx_probe.h"

#define SLOT 64

static const char *variant;
static int iters;
static MPI_Win mwin;
static CMPI_Win cwin;
static int is_mpi;
static pthread_barrier_t warm;

typedef struct {
    int tid;
    clampi_ucx_flush_probe probe;
} job;

static void put_flush(int tid) {
    long v = tid;
    if (is_mpi) {
        MPI_Put(&v, 1, MPI_LONG, 1, (MPI_Aint)tid * SLOT, 1, MPI_LONG, mwin);
        fp_enter();
        MPI_Win_flush(1, mwin);
        fp_leave();
    } else {
        CMPI_Put(&v, 1, MPI_LONG, 1, (MPI_Aint)tid * SLOT, 1, MPI_LONG, cwin);
        fp_enter();
        CMPI_Win_flush(1, cwin);
        fp_leave();
    }
}

static void *thread_main(void *p) {
    job *j = p;
    put_flush(j->tid); /* warm-up: creates the thread's lane and endpoints */
    pthread_barrier_wait(&warm);
    if (j->tid == 0) {
        CALLGRIND_ZERO_STATS; /* count the steady state only */
        fp_reset();
    }
    pthread_barrier_wait(&warm);
    if (!is_mpi) clampi_ucx_test_flush_probe(cwin, &j->probe);
    clampi_ucx_flush_probe before = j->probe;
    for (int i = 0; i < iters; i++) put_flush(j->tid);
    if (!is_mpi) {
        clampi_ucx_test_flush_probe(cwin, &j->probe);
        j->probe.flushes -= before.flushes, j->probe.workers -= before.workers, j->probe.eps -= before.eps;
        j->probe.own_ops -= before.own_ops, j->probe.foreign_ops -= before.foreign_ops;
    }
    return NULL;
}

int main(int argc, char **argv) {
    setenv("CLAMPI_FLUSH_PROBE", "1", 0); /* the flush probe this program reads (off by default) */
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4 || provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) fprintf(stderr, "usage: flush_count mpi|process|thread THREADS ITERS (needs THREAD_MULTIPLE)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    variant = argv[1];
    int threads = atoi(argv[2]);
    iters = atoi(argv[3]);
    is_mpi = !strcmp(variant, "mpi");
    void *base;
    MPI_Aint size = (MPI_Aint)threads * SLOT;
    if (is_mpi) {
        MPI_Win_allocate(size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &mwin);
        MPI_Win_lock_all(0, mwin);
    } else {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "clampi_backend", "ucx");
        MPI_Info_set(info, "clampi_mode", "off");
        MPI_Info_set(info, "mpi_win_scope", variant);
        CMPI_Win_allocate(size, 1, info, MPI_COMM_WORLD, &base, &cwin);
        MPI_Info_free(&info);
        CMPI_Win_lock_all(0, cwin);
    }
    job *jobs = calloc((size_t)threads, sizeof *jobs);
    if (rank == 0) {
        pthread_t *th = malloc((size_t)threads * sizeof *th);
        pthread_barrier_init(&warm, NULL, (unsigned)threads);
        for (int t = 0; t < threads; t++) {
            jobs[t].tid = t;
            pthread_create(&th[t], NULL, thread_main, &jobs[t]);
        }
        for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
        free(th);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long flushes = (long)threads * iters; /* after the warm-up */
        printf("variant=%s threads=%d flushes=%ld", variant, threads, flushes);
        if (!is_mpi) {
            unsigned long long w = 0, e = 0, own = 0, foreign = 0, f = 0;
            for (int t = 0; t < threads; t++) {
                w += jobs[t].probe.workers, e += jobs[t].probe.eps, f += jobs[t].probe.flushes;
                own += jobs[t].probe.own_ops, foreign += jobs[t].probe.foreign_ops;
            }
            printf(" probe_flushes=%llu workers=%llu eps=%llu own=%llu foreign=%llu", f, w, e, own, foreign);
        }
        fp_report(flushes);
        printf("\n");
    }
    if (is_mpi) {
        MPI_Win_unlock_all(mwin);
        MPI_Win_free(&mwin);
    } else {
        CMPI_Win_unlock_all(cwin);
        CMPI_Win_free(&cwin);
    }
    free(jobs);
    MPI_Finalize();
    return 0;
}
