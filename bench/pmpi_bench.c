/* A plain MPI program (no clampi calls) for benchmarking the transparent preload:
 * bench/run_pmpi_bench.sh runs it plainly and with LD_PRELOAD=libclampi_pmpi.so and
 * prints the ratios. The window is named "bench", so CLAMPI_WINDOW_MODES=bench:MODE
 * chooses its mode.
 *   pmpi_bench latency ROUNDS   np = 2: rank 0 reads 8 bytes from rank 1, 64 gets per flush
 *   pmpi_bench threads T ROUNDS np = 2, MPI_THREAD_MULTIPLE: T threads of rank 0 read 8-byte
 *                               items of a 4 KiB table at rank 1, 64 gets per flush
 *   pmpi_bench count ROUNDS     np = 1: 8-byte gets to self; under valgrind --tool=callgrind
 *                               --collect-atstart=no only the gets are counted
 * Output: one line "bench mode=... key=value ..." on rank 0. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

#define BATCH 64
#define ITEMS 512 /* 8-byte items in the table */
static MPI_Win win;
static int rounds = 2000, target = 1;
static double sink[64];

static void *reader(void *arg) {
    int id = (int)(long)arg;
    double v, s = 0;
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < BATCH; k++) {
            MPI_Get(&v, 1, MPI_DOUBLE, target, (id * 7 + k * 13 + r) % ITEMS, 1, MPI_DOUBLE, win);
            s += v;
        }
        MPI_Win_flush(target, win);
    }
    sink[id] = s;
    return NULL;
}

/* The passive target waits without spinning on a core (2-core machines), unless
 * PMPI_BENCH_SPIN=1: MPICH's passive-target gets need the target's progress. */
static void idle_until_done(void) {
    const char *e = getenv("PMPI_BENCH_SPIN");
    int spin = e && *e == '1';
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    int done = 0;
    while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done && !spin) usleep(200);
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "latency";
    int threads = 1;
    if (!strcmp(mode, "threads")) {
        threads = argc > 2 ? atoi(argv[2]) : 1;
        if (argc > 3) rounds = atoi(argv[3]);
    } else if (argc > 2) {
        rounds = atoi(argv[2]);
    }
    if (threads < 1 || threads > 64) threads = 1;
    int provided;
    MPI_Init_thread(&argc, &argv, !strcmp(mode, "threads") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np == 1) target = 0;
    double *base;
    MPI_Win_allocate(ITEMS * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_name(win, "bench");
    for (int i = 0; i < ITEMS; i++) base[i] = i;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (me == 0) {
        rounds /= 10; /* warm-up: caches filled, pages touched */
        reader((void *)0);
        rounds *= 10;
        if (!strcmp(mode, "count")) {
            double v, s = 0;
            CALLGRIND_ZERO_STATS;
            for (int r = 0; r < rounds; r++) {
                CALLGRIND_TOGGLE_COLLECT;
                for (int k = 0; k < BATCH; k++)
                    MPI_Get(&v, 1, MPI_DOUBLE, target, (k * 13 + r) % ITEMS, 1, MPI_DOUBLE, win);
                CALLGRIND_TOGGLE_COLLECT;
                MPI_Win_flush(target, win);
                s += v;
            }
            sink[0] = s;
            printf("bench mode=count gets=%d\n", rounds * BATCH);
        } else {
            pthread_t th[64];
            double t0 = MPI_Wtime();
            if (threads == 1) {
                reader((void *)0);
            } else {
                for (long i = 0; i < threads; i++) pthread_create(&th[i], NULL, reader, (void *)i);
                for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
            }
            double t = MPI_Wtime() - t0;
            double gets = (double)rounds * BATCH * threads;
            printf("bench mode=%s threads=%d gets=%.0f seconds=%.6f ns_per_get=%.2f mgets_per_s=%.4f\n", mode, threads,
                   gets, t, t * 1e9 / gets, gets / t / 1e6);
        }
        fflush(stdout);
        if (np > 1) {
            MPI_Request req;
            MPI_Ibarrier(MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
    } else {
        idle_until_done();
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return sink[0] < 0;
}
