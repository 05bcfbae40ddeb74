/* mpi_win_order and mpi_win_scope on UCX windows.
 *
 * order  TRIALS: rank 0 puts a data word and then a flag word to rank 1 without a flush
 *        in between, on an ordered window; rank 1 polls the flag and checks that the data
 *        of that trial is already there. Across TRIALS trials the flag never overtakes.
 * threads NTHREADS: thread scope; every thread of rank 0 puts its own number of values
 *        into its own slice of rank 1; once all threads' puts are issued, each flushes:
 *        the flush must complete exactly its own puts and touch nothing else — counted by
 *        the backend (clampi_ucx_test_flush_probe: 1 worker, 1 endpoint, its own puts, 0
 *        operations of other threads, while the others' puts are pending), not only by the
 *        calling lane's counter — and rank 1 checks that all data arrived. A thread's flush
 *        outside any epoch fails with MPI_ERR_RMA_SYNC and changes nothing. No thread's put
 *        or flush takes the window lock (shared by all threads): its count stays the same.
 *        Control: on a process-scope window the same probe sees thread 0's flush drive the
 *        others' puts, and the window lock is taken. */
#define CLAMPI_TEST_USES_MPI
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rma/window.h" /* clampi_win_test_locks_taken */
#include "ucx_probe.h"  /* clampi_ucx_test_flush_probe */
#include "mpi_util.h"

static int rank;

static CMPI_Win make_win(const char *scope, const char *order, int64_t **mem, size_t n) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BACKEND, "ucx");
    MPI_Info_set(info, CLAMPI_WIN_SCOPE, (char *)scope);
    MPI_Info_set(info, CLAMPI_WIN_ORDER, (char *)order);
    CMPI_Win w;
    CHECK_EQ_INT(CMPI_Win_allocate((MPI_Aint)(n * sizeof(int64_t)), sizeof(int64_t), info, MPI_COMM_WORLD, mem, &w),
                 MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Info used;
    char v[32];
    int flag;
    CHECK_EQ_INT(CMPI_Win_get_info(w, &used), MPI_SUCCESS);
    MPI_Info_get(used, CLAMPI_WIN_ORDER, 31, v, &flag);
    CHECK(flag && !strcmp(v, order));
    MPI_Info_get(used, CLAMPI_WIN_SCOPE, 31, v, &flag);
    CHECK(flag && !strcmp(v, scope));
    MPI_Info_free(&used);
    return w;
}

/* Rank 0 streams (data = t, flag = t) pairs with no flush; rank 1 samples flag then data:
 * ordered completion means data >= flag at every sample. */
static void test_order(long trials) {
    int64_t *mem;
    CMPI_Win w = make_win("process", "true", &mem, 2);
    volatile int64_t *data = &mem[0], *flag = &mem[1];
    int64_t *vals = malloc(sizeof(int64_t) * (size_t)trials); /* untouched until the flush */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS);
    long violations = 0, samples = 0;
    if (rank == 0) {
        for (long t = 1; t <= trials; t++) {
            vals[t - 1] = t;
            CHECK_EQ_INT(CMPI_Put(&vals[t - 1], 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, w), MPI_SUCCESS);
            CHECK_EQ_INT(CMPI_Put(&vals[t - 1], 1, MPI_INT64_T, 1, 1, 1, MPI_INT64_T, w), MPI_SUCCESS);
        }
        CHECK_EQ_INT(CMPI_Win_flush(1, w), MPI_SUCCESS);
    } else if (rank == 1) {
        for (;;) {
            int64_t f = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
            int64_t d = __atomic_load_n(data, __ATOMIC_ACQUIRE);
            samples++;
            if (d < f) violations++;
            if (f == trials) break;
            if ((samples & 255) == 0) CMPI_Win_sync(w);
        }
    }
    CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    if (rank == 1) {
        printf("order: %ld put pairs, %ld samples, %ld flag-before-data violations\n", trials, samples, violations);
        CHECK_EQ_INT(violations, 0);
    }
    free(vals);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
}

#define PER_THREAD 64
typedef struct {
    CMPI_Win w;
    int id, nputs, others; /* others: puts of the other threads in a round */
    int64_t vals[PER_THREAD];
    CMPIX_Win_thread_stats st;
    clampi_ucx_flush_probe pr;
    pthread_barrier_t *bar;
} job_t;

static void put_round(job_t *j, int round) {
    for (int i = 0; i < j->nputs; i++) {
        j->vals[i] = (int64_t)(j->id * 1000 + round * 100 + i);
        CHECK_EQ_INT(CMPI_Put(&j->vals[i], 1, MPI_INT64_T, 1, (MPI_Aint)(j->id * PER_THREAD + i), 1, MPI_INT64_T, j->w),
                     MPI_SUCCESS);
    }
}

/* Thread scope. Every thread's puts of a round are issued (and not flushed: barrier)
 * before any thread flushes, so a flush that drove anything beyond its own thread's lane
 * would show it: the backend's probe counts what the flush call really flushed, lane by
 * lane (workers, endpoints, operations issued by this thread / by others). */
static void *thread_main(void *arg) {
    job_t *j = arg;
    for (int round = 0; round < 3; round++) {
        put_round(j, round);
        pthread_barrier_wait(j->bar);
        CHECK_EQ_INT(CMPI_Win_flush(1, j->w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPIX_Win_get_thread_stats(j->w, &j->st), MPI_SUCCESS);
        CHECK_EQ_INT(clampi_ucx_test_flush_probe(j->w, &j->pr), MPI_SUCCESS);
        CHECK_EQ_INT(j->st.last_flush_ops, j->nputs);
        CHECK_EQ_INT(j->pr.last_workers, 1);        /* its own worker only */
        CHECK_EQ_INT(j->pr.last_eps, 1);            /* one endpoint: to the target */
        CHECK_EQ_INT(j->pr.last_own_ops, j->nputs); /* all of its own puts */
        CHECK_EQ_INT(j->pr.last_foreign_ops, 0);    /* none of the others' (pending now) */
        pthread_barrier_wait(j->bar);
    }
    CHECK_EQ_INT(j->st.ops, 3 * j->nputs);
    CHECK_EQ_INT(j->st.flush_ops_driven, 3 * j->nputs);
    CHECK_EQ_INT(j->pr.workers, 3);
    CHECK_EQ_INT(j->pr.foreign_ops, 0);
    return NULL;
}

/* Control: process scope, same pattern. Thread 0 flushes first while every other thread's
 * puts are pending on the shared process worker: the probe must see them as foreign (so
 * the thread-scope assertions above are not vacuous). */
static void *process_main(void *arg) {
    job_t *j = arg;
    put_round(j, 2);
    pthread_barrier_wait(j->bar);
    if (j->id == 0) {
        CHECK_EQ_INT(CMPI_Win_flush(1, j->w), MPI_SUCCESS);
        CHECK_EQ_INT(clampi_ucx_test_flush_probe(j->w, &j->pr), MPI_SUCCESS);
        CHECK_EQ_INT(j->pr.last_workers, 1);
        CHECK_EQ_INT(j->pr.last_own_ops, j->nputs);
        CHECK_EQ_INT(j->pr.last_foreign_ops, j->others);
    }
    pthread_barrier_wait(j->bar);
    CHECK_EQ_INT(CMPI_Win_flush(1, j->w), MPI_SUCCESS);
    return NULL;
}

static void run_jobs(CMPI_Win w, int nthreads, void *(*fn)(void *), job_t *jobs) {
    pthread_t th[64];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
    int total = 0;
    for (int i = 0; i < nthreads; i++) total += 1 + (i * 7) % PER_THREAD;
    for (int i = 0; i < nthreads; i++) {
        jobs[i].w = w;
        jobs[i].id = i;
        jobs[i].nputs = 1 + (i * 7) % PER_THREAD; /* every thread a different count */
        jobs[i].others = total - jobs[i].nputs;
        jobs[i].bar = &bar;
        pthread_create(&th[i], NULL, fn, &jobs[i]);
    }
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
}

static void test_process_control(int nthreads) {
    int64_t *mem;
    CMPI_Win w = make_win("process", "false", &mem, (size_t)nthreads * PER_THREAD);
    CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS);
    if (rank == 0) {
        job_t *jobs = calloc((size_t)nthreads, sizeof *jobs);
        uint64_t locks0, locks1;
        CHECK_EQ_INT(clampi_win_test_locks_taken(w, &locks0), MPI_SUCCESS);
        run_jobs(w, nthreads, process_main, jobs);
        CHECK_EQ_INT(clampi_win_test_locks_taken(w, &locks1), MPI_SUCCESS);
        CHECK(locks1 > locks0); /* the counter sees a process-scope window's lock */
        free(jobs);
    }
    CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    if (rank == 0) printf("threads: process-scope control: thread 0's flush drove the others' pending puts\n");
}

static void test_threads(int nthreads) {
    int64_t *mem;
    CMPI_Win w = make_win("thread", "false", &mem, (size_t)nthreads * PER_THREAD);
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
    /* a flush outside any epoch: RMA_SYNC, nothing changes */
    if (rank == 0) CHECK_CLASS(CMPI_Win_flush(0, w), MPI_ERR_RMA_SYNC);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS);
    if (rank == 0) {
        job_t *jobs = calloc((size_t)nthreads, sizeof *jobs);
        uint64_t locks0, locks1;
        CHECK_EQ_INT(clampi_win_test_locks_taken(w, &locks0), MPI_SUCCESS);
        run_jobs(w, nthreads, thread_main, jobs);
        CHECK_EQ_INT(clampi_win_test_locks_taken(w, &locks1), MPI_SUCCESS);
        CHECK_EQ_INT((int)(locks1 - locks0), 0); /* no put or flush took the shared window lock */
        for (int i = 0; i < nthreads; i++) MPI_Send(&jobs[i].nputs, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        free(jobs);
    } else if (rank == 1) {
        for (int i = 0; i < nthreads; i++) {
            int n;
            MPI_Recv(&n, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            /* the flushes completed the puts at the target: all there before rank 0 said so */
            for (int k = 0; k < n; k++) CHECK_EQ_INT(mem[i * PER_THREAD + k], i * 1000 + 200 + k);
        }
    }
    CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    if (rank == 1) printf("threads: %d threads, every flush drove exactly its own thread's puts\n", nthreads);
    test_process_control(nthreads);
}

/* Unknown values of the four keys: MPI_ERR_INFO_VALUE at creation and in set_info, through
 * the communicator's / window's handler, and nothing changes. */
static void test_bad_info(void) {
    const char *keys[] = {CLAMPI_BACKEND, CLAMPI_PROGRESS, CLAMPI_WIN_SCOPE, CLAMPI_WIN_ORDER};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < 4; k++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, (char *)keys[k], "bogus");
        CMPI_Win w;
        int64_t *mem;
        CHECK_CLASS(CMPI_Win_allocate(64, 8, info, MPI_COMM_WORLD, &mem, &w), MPI_ERR_INFO_VALUE);
        MPI_Info_free(&info);
    }
    int64_t *mem;
    CMPI_Win w = make_win("thread", "true", &mem, 4);
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
    for (int k = 0; k < 4; k++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, (char *)keys[k], "bogus");
        CHECK_CLASS(CMPI_Win_set_info(w, info), MPI_ERR_INFO_VALUE);
        MPI_Info_free(&info);
    }
    /* still what it was */
    MPI_Info used;
    char v[32];
    int flag;
    CHECK_EQ_INT(CMPI_Win_get_info(w, &used), MPI_SUCCESS);
    MPI_Info_get(used, CLAMPI_WIN_SCOPE, 31, v, &flag);
    CHECK(flag && !strcmp(v, "thread"));
    MPI_Info_get(used, CLAMPI_BACKEND, 31, v, &flag);
    CHECK(flag && !strcmp(v, "ucx"));
    MPI_Info_free(&used);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    if (rank == 0) printf("bad info: ok\n");
}

int main(int argc, char **argv) {
    setenv("CLAMPI_FLUSH_PROBE", "1", 0); /* the flush probe this program reads (off by default) */
    /* threads: MPI_THREAD_MULTIPLE; order: a single thread (Open MPI's osc/pt2pt, used for
     * its TCP runs, refuses windows under MPI_THREAD_MULTIPLE) */
    int want = argc > 1 && !strcmp(argv[1], "threads") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, provided;
    MPI_Init_thread(&argc, &argv, want, &provided);
    CHECK(provided >= want);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2 && argc >= 3);
    if (!strcmp(argv[1], "order"))
        test_order(atol(argv[2]));
    else if (!strcmp(argv[1], "badinfo"))
        test_bad_info();
    else
        test_threads(atoi(argv[2]));
    MPI_Finalize();
    return 0;
}
