/* Delivery on thread-scope, ordered UCX windows over a transport where UCX emulates RMA
 * with active messages (UCX_TLS=tcp,self: the target's worker applies the puts).
 *
 * flushes NTHREADS PER_THREAD EVERY: rank 0's threads (MPI_THREAD_MULTIPLE) each put
 *        PER_THREAD distinct int64 values into their own slice of rank 1, flushing every
 *        EVERY puts and once at the end. Once the final flushes returned every value must be
 *        at the target (rank 1 checks before anyone unlocks), and again after unlock_all +
 *        barrier. Run twice: from distinct origin buffers, and from one variable per thread
 *        rewritten after each put (the reported program: before the fix the first 100 puts
 *        of each thread, queued by UCX during the TCP wireup, still pointed at it: 396 of
 *        4000 values wrong, every run).
 * computing SECONDS: rank 0 puts a data word then a flag word (no flush); rank 1 polls its
 *        memory (volatile loads, no MPI or clampi call) for up to SECONDS: with
 *        clampi_progress=auto the flag and the data must arrive while the target computes. */
#define CLAMPI_TEST_USES_MPI
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ucx_probe.h" /* clampi_ucx_test_counters */
#include "mpi_util.h"

static int rank;

static CMPI_Win make_win(int64_t **mem, size_t n) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BACKEND, "ucx");
    MPI_Info_set(info, CLAMPI_WIN_SCOPE, "thread");
    MPI_Info_set(info, CLAMPI_WIN_ORDER, "true");
    CMPI_Win w;
    CHECK_EQ_INT(CMPI_Win_allocate((MPI_Aint)(n * sizeof(int64_t)), sizeof(int64_t), info, MPI_COMM_WORLD, mem, &w),
                 MPI_SUCCESS);
    MPI_Info_free(&info);
    return w;
}

typedef struct {
    CMPI_Win w;
    int id, per_thread, every, reuse;
    int64_t *vals;
} job_t;

static void *thread_main(void *arg) {
    job_t *j = arg;
    for (int i = 0; i < j->per_thread; i++) {
        int64_t *src = j->reuse ? &j->vals[0] : &j->vals[i];
        *src = (int64_t)j->id * 1000000 + i + 1;
        CHECK_EQ_INT(CMPI_Put(src, 1, MPI_INT64_T, 1, (MPI_Aint)j->id * j->per_thread + i, 1, MPI_INT64_T, j->w),
                     MPI_SUCCESS);
        if ((i + 1) % j->every == 0) CHECK_EQ_INT(CMPI_Win_flush(1, j->w), MPI_SUCCESS);
    }
    CHECK_EQ_INT(CMPI_Win_flush(1, j->w), MPI_SUCCESS);
    return NULL;
}

static long count_missing(const volatile int64_t *mem, int nthreads, int per_thread) {
    long missing = 0;
    for (int t = 0; t < nthreads; t++)
        for (int i = 0; i < per_thread; i++)
            if (mem[(size_t)t * per_thread + i] != (int64_t)t * 1000000 + i + 1) missing++;
    return missing;
}

static void test_flushes(int nthreads, int per_thread, int every, int reuse) {
    int64_t *mem;
    size_t n = (size_t)nthreads * per_thread;
    CMPI_Win w = make_win(&mem, n);
    CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS);
    if (rank == 0) {
        pthread_t th[64];
        job_t *jobs = calloc((size_t)nthreads, sizeof *jobs);
        for (int i = 0; i < nthreads; i++) {
            jobs[i] = (job_t){w, i, per_thread, every, reuse, calloc((size_t)per_thread, sizeof(int64_t))};
            pthread_create(&th[i], NULL, thread_main, &jobs[i]);
        }
        for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
        clampi_ucx_counters c;
        CHECK_EQ_INT(clampi_ucx_test_counters(w, &c), MPI_SUCCESS);
        printf("flushes: %zu puts, %llu sent from a private copy, %llu completed locally in the call\n", n,
               (unsigned long long)c.put_copies, (unsigned long long)c.put_waits);
        int done = 1;
        MPI_Send(&done, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        for (int i = 0; i < nthreads; i++) free(jobs[i].vals);
        free(jobs);
    } else if (rank == 1) {
        int done;
        MPI_Recv(&done, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* every thread's final flush returned: everything must be here already */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        long missing = count_missing(mem, nthreads, per_thread);
        printf("flushes (%s origin buffer): after the flushes returned, %ld of %zu values missing\n",
               reuse ? "one reused" : "distinct", missing, n);
        CHECK_EQ_INT(missing, 0);
    }
    CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        CHECK_EQ_INT(CMPI_Win_sync(w), MPI_SUCCESS);
        long missing = count_missing(mem, nthreads, per_thread);
        printf("flushes: after unlock_all + barrier, %ld of %zu values missing\n", missing, n);
        CHECK_EQ_INT(missing, 0);
    }
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_computing(double seconds) {
    int64_t *mem;
    CMPI_Win w = make_win(&mem, 2);
    CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    int arrived = 0;
    if (rank == 0) {
        int64_t vals[2] = {42, 1};
        CHECK_EQ_INT(CMPI_Put(&vals[0], 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Put(&vals[1], 1, MPI_INT64_T, 1, 1, 1, MPI_INT64_T, w), MPI_SUCCESS);
        /* no flush: wait (inside MPI, not clampi) for the target's verdict */
        MPI_Recv(&arrived, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        volatile int64_t *data = &mem[0], *flag = &mem[1];
        double t0 = now(), t = t0;
        while (*flag != 1 && (t = now()) - t0 < seconds) {}
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        arrived = *flag == 1;
        int64_t d = *data;
        printf("computing: flag %s after %.3f s, data %lld\n", arrived ? "arrived" : "did NOT arrive", t - t0,
               (long long)d);
        if (arrived) CHECK_EQ_INT(d, 42);
        MPI_Send(&arrived, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        CHECK(arrived);
    }
    CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2 && argc >= 2);
    if (!strcmp(argv[1], "flushes")) {
        CHECK(argc >= 5);
        /* distinct origin buffers (flush = at the target), then one variable per thread
         * rewritten after each put (what the report's program did: small puts must have
         * left the origin buffer when CMPI_Put returns) */
        test_flushes(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), 0);
        test_flushes(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), 1);
    } else {
        CHECK(argc >= 3);
        test_computing(atof(argv[2]));
    }
    MPI_Finalize();
    return 0;
}
