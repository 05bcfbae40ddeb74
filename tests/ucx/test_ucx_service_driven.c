/* A target waiting inside MPI or inside clampi's own spin waits progresses clampi's UCX
 * workers itself (clampi_ucx_service_progress_here, services/ucx/service.h), instead of
 * leaving the origin's emulated puts to the progress thread, a third thread on the ranks'
 * cores. UCX_TLS=tcp,self: the target's worker applies every put.
 *
 * Rank 0 puts PUTS int64 values into rank 1's window (CMPI_Win_create over static memory,
 * clampi_progress=auto: a progress-service client), each followed by a flush, three times:
 *  A. while rank 1 waits in MPI_Barrier. Open MPI runs clampi's pass from its progress
 *     engine, MPICH after each poll of its UCX worker: passes run by the waiting thread
 *     must be > 0, and where the progress thread has no core of its own (it then steps
 *     aside) some of them must have applied puts. Other MPIs (Intel MPI's libfabric): printed only.
 *  B. while rank 1 waits for a flag word (rank 0's last put) in clampi's collective wait
 *     (clampi_coll_wait_flag, which calls clampi_idle between polls): passes > 0 on every
 *     MPI, in one of up to 20 rounds (a loaded machine can let the progress thread take
 *     every put of a round), unless the flag of the last round had already arrived when
 *     rank 1 began to wait (then printed).
 *  C. while rank 1 computes outside MPI and clampi (it reads the flag word with plain
 *     loads): the progress thread must take the workers over again after A and B and
 *     apply every put (no lost wake-up after it stepped aside); no pass is driven.
 * ARGS off: CLAMPI_PROGRESS_FROM_MPI=false is set; no pass may be driven, the progress thread
 * alone applies the puts. Counts, not rates: whether the waiting thread ran passes at all,
 * which load does not change. Every value is checked. */
#define CLAMPI_TEST_USES_MPI
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <time.h>

#include "coll/coll_internal.h" /* clampi_coll_wait_flag */
#include "mpi_util.h"
#include "services/ucx/service.h"
#include "topo/node.h" /* clampi_node_helper_has_core */

enum { PUTS = 300, FLAG = PUTS, B_ROUNDS = 20 };
#if defined(OPEN_MPI) || (defined(MPICH_VERSION) && !defined(I_MPI_VERSION))
/* passes run from inside MPI's progress: Open MPI's callbacks, MPICH's polls of its UCX
 * worker (services/ucx/mpi_polls.h) */
static const int mpi_hook = 1;
#else
static const int mpi_hook = 0;
#endif

static clampi_ucx_service_stats stats(void) {
    clampi_ucx_service_stats s;
    clampi_ucx_service_get_stats(&s);
    return s;
}

/* Rank 0's half of a phase: PUTS put+flush of base+i, then the flag. */
static void put_all(CMPI_Win w, int64_t base) {
    for (int i = 0; i < PUTS; i++) {
        int64_t v = base + i;
        CHECK_EQ_INT(CMPI_Put(&v, 1, MPI_INT64_T, 1, i, 1, MPI_INT64_T, w), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_flush(1, w), MPI_SUCCESS);
    }
    int64_t flag = base;
    CHECK_EQ_INT(CMPI_Put(&flag, 1, MPI_INT64_T, 1, FLAG, 1, MPI_INT64_T, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(1, w), MPI_SUCCESS);
}

static void check_all(const int64_t *mem, int64_t base) {
    for (int i = 0; i < PUTS; i++) CHECK(mem[i] == base + i);
    CHECK(mem[FLAG] == base);
}

int main(int argc, char **argv) {
    const int off = argc > 1 && !strcmp(argv[1], "off");
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BACKEND, "ucx");
    static int64_t mem[PUTS + 1];
    CMPI_Win w;
    CHECK_EQ_INT(CMPI_Win_create(mem, sizeof mem, sizeof(int64_t), info, MPI_COMM_WORLD, &w), MPI_SUCCESS);
    MPI_Info_free(&info);
    CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);

    /* A: the target waits in MPI_Barrier. As in B, whether a pass it runs finds work is
     * scheduling: up to B_ROUNDS rounds, until one has a pass that found work. */
    clampi_ucx_service_stats s0;
    uint64_t in_barrier = 0, work_in_barrier = 0;
    for (int done = 0, a = 0; !done && a < B_ROUNDS; a++) {
        const int64_t base = 100000 + 1000 * a;
        s0 = stats();
        if (rank == 0) put_all(w, base);
        MPI_Barrier(MPI_COMM_WORLD);
        clampi_ucx_service_stats s1 = stats();
        in_barrier += s1.driven - s0.driven;
        work_in_barrier += s1.driven_work - s0.driven_work;
        if (rank == 1) {
            check_all(mem, base);
            done = off || !mpi_hook || work_in_barrier > 0;
        }
        MPI_Bcast(&done, 1, MPI_INT, 1, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* B: the target waits in clampi's own spin wait (oversubscribed: clampi_idle every poll).
     * Whether a poll finds the service's lock free and recent work is a matter of
     * scheduling on a loaded machine (the thread may take every put itself): up to
     * B_ROUNDS rounds, until one has a pass run by the waiting thread. */
    uint64_t in_spin = 0;
    int arrived_early = 0, rounds = 0;
    for (int done = 0; !done && rounds < B_ROUNDS; rounds++) {
        const int64_t base = 20000 + 1000 * rounds;
        s0 = stats();
        if (rank == 0) put_all(w, base);
        int early = 0;
        if (rank == 1) {
            early = __atomic_load_n(&mem[FLAG], __ATOMIC_ACQUIRE) == base;
            clampi_coll_wait_flag((const uint64_t *)&mem[FLAG], (uint64_t)base, 1, MPI_COMM_NULL);
        }
        const uint64_t driven = stats().driven - s0.driven;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            check_all(mem, base);
            in_spin += driven;
            arrived_early = early;
            done = driven > 0 || off;
        }
        MPI_Bcast(&done, 1, MPI_INT, 1, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* C: the target computes outside MPI; the progress thread alone (at most 60 s) */
    s0 = stats();
    if (rank == 0) put_all(w, 9000);
    if (rank == 1) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do clock_gettime(CLOCK_MONOTONIC, &t);
        while (__atomic_load_n(&mem[FLAG], __ATOMIC_ACQUIRE) != 9000 && t.tv_sec - t0.tv_sec < 60);
        CHECK(mem[FLAG] == 9000); /* else the thread never took the workers back */
    }
    const uint64_t in_compute = stats().driven - s0.driven;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) check_all(mem, 9000);

    if (rank == 1) {
        const int own_core = clampi_node_helper_has_core();
        printf("service_driven: %s; passes run by the waiting target: in MPI_Barrier %llu (%llu found work; MPI "
               "hook: %s; progress thread with a core of its own: %s), in clampi's spin wait %llu (round %d of %d)%s, "
               "while computing %llu\n",
               off ? "CLAMPI_PROGRESS_FROM_MPI=false" : "default", (unsigned long long)in_barrier,
               (unsigned long long)work_in_barrier, mpi_hook ? "yes" : "no", own_core ? "yes" : "no",
               (unsigned long long)in_spin, rounds, B_ROUNDS,
               arrived_early ? " (every put had arrived before the wait)" : "", (unsigned long long)in_compute);
        fflush(stdout);
        CHECK(in_compute == 0);
#if defined(MPICH_VERSION) && !defined(I_MPI_VERSION)
        CHECK(clampi_ucx_mpi_polls_seen()); /* MPICH's polls reached clampi's ucp_worker_progress */
#endif
        if (off) {
            CHECK(in_barrier == 0);
            CHECK(in_spin == 0);
        } else {
            if (mpi_hook) CHECK(in_barrier > 0);
            if (mpi_hook && !own_core) CHECK(work_in_barrier > 0);
            if (!arrived_early) CHECK(in_spin > 0);
        }
    }
    CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    MPI_Finalize();
    return 0;
}
