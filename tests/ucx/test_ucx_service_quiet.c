/* The UCX progress service keeps away from a window's process worker while an application
 * thread drives it (clampi_ucx_poller, backends/ucx/service.h), and takes over when the
 * application stops. UCX's worker lock is a spinlock: a service thread progressing the
 * worker the application waits on took the waiter's core and lock when threads outnumbered
 * cores (MPICH's large_acc_flush_local under the preload: 46 % of the origin's time in
 * the spinlock).
 *
 * Every rank has a UCX window on memory of its own (CMPI_Win_create: UCX reaches it with
 * cross-memory attach or messages, so a get waits) with clampi_progress=thread. Rank 0
 * gets 64 KiB from rank 1 and flushes, in a loop for 200 ms: the service must progress
 * rank 0's worker in few passes (counted by the backend: clampi_ucx_counters.serviced),
 * where a service that ignored the application's polls progressed it ~27,000 times.
 * Control: rank 0 then sleeps 150 ms outside MPI, and the service must have taken over its
 * worker meanwhile. The data is checked. */
#define CLAMPI_TEST_USES_MPI
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "rmax/ucx_probe.h" /* clampi_ucx_test_counters */
#include "mpi_util.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t serviced(CMPI_Win w) {
    clampi_ucx_counters c;
    CHECK_EQ_INT(clampi_ucx_test_counters(w, &c), MPI_SUCCESS);
    return c.serviced;
}

static void get_all(CMPI_Win w, int64_t *got, int n) {
    CHECK_EQ_INT(CMPI_Get(got, n, MPI_INT64_T, 1, 0, n, MPI_INT64_T, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(1, w), MPI_SUCCESS);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BACKEND, "ucx");
    MPI_Info_set(info, "clampi_progress", "thread");
    enum { N = 8192 }; /* 64 KiB */
    static int64_t mem[N], got[N];
    for (int i = 0; i < N; i++) mem[i] = rank * 100000 + i;
    CMPI_Win w;
    CHECK_EQ_INT(CMPI_Win_create(mem, sizeof mem, sizeof(int64_t), info, MPI_COMM_WORLD, &w), MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    long n = 0;
    uint64_t during = 0, asleep = 0;
    if (rank == 0) {
        CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w), MPI_SUCCESS);
        /* warm up: the service sees the application poll */
        for (double t0 = now(); now() - t0 < 0.02; n++) get_all(w, got, N);
        uint64_t before = serviced(w);
        for (double t0 = now(); now() - t0 < 0.2; n++) get_all(w, got, N);
        during = serviced(w) - before;
        for (int i = 0; i < N; i++) CHECK(got[i] == 100000 + i);
        before = serviced(w);
        usleep(150000); /* longer than the service's longest sleep (100 ms), so it looks again */
        asleep = serviced(w) - before;
        CHECK_EQ_INT(CMPI_Win_unlock(1, w), MPI_SUCCESS);
        printf("service_quiet: %ld gets of 64 KiB in 0.22 s; service passes on the worker: %llu while the application "
               "polled, %llu while it slept 150 ms\n",
               n, (unsigned long long)during, (unsigned long long)asleep);
        fflush(stdout);
        CHECK(n > 100);
        /* Usually 0. The service takes over when the application has not polled for 1 ms,
         * which happens when the scheduler deschedules it (4 threads on 2 cores): each such
         * takeover costs about 66 passes (SPIN_PASSES, then it sleeps). A service that
         * ignores the application made ~27,000 in this loop. */
        CHECK(during <= 1500);
        CHECK(asleep >= 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    MPI_Finalize();
    return 0;
}
