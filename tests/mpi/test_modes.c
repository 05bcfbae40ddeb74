/* Each mode's invalidation rule: a value changed by another rank is seen after the
 * boundary the mode promises (transparent: the next flush; always-cache: never, the
 * data is declared read-only; user-defined: CMPI_Win_invalidate). Also: own puts and
 * accumulates invalidate in every mode, sub-range hits, in-flight duplicates, flush
 * elision, and a transparent spin-wait that must terminate. Rank 0 reads, rank 1 owns. */
#define CLAMPI_TEST_USES_MPI
#include <string.h>

#include "mpi_util.h"

static int rank;

static int get_int(CMPI_Win w, int target, MPI_Aint disp) {
    int v = -1;
    CHECK(CMPI_Get(&v, 1, MPI_INT, target, disp, 1, MPI_INT, w) == MPI_SUCCESS);
    CHECK(CMPI_Win_flush(target, w) == MPI_SUCCESS);
    return v;
}

/* Rank 1 sets its own word `disp` to v (visible to all after the barrier). */
static void owner_sets(CMPI_Win w, MPI_Aint disp, int v) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        CHECK(CMPI_Put(&v, 1, MPI_INT, 1, disp, 1, MPI_INT, w) == MPI_SUCCESS);
        CHECK(CMPI_Win_flush(1, w) == MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_mode(const char *mode) {
    MPI_Info info = cache_info(mode, "1M", "1024");
    int *base;
    CMPI_Win w;
    CHECK(CMPI_Win_allocate(4096 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &w) == MPI_SUCCESS);
    MPI_Info_free(&info);
    for (int i = 0; i < 4096; i++) base[i] = rank * 100000 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(CMPI_Win_lock_all(0, w) == MPI_SUCCESS);
    int caches = strcmp(mode, CLAMPI_TRANSPARENT) != 0;

    if (rank == 0) {
        CHECK_EQ_INT(get_int(w, 1, 10), 100010);
        CHECK_EQ_INT(get_int(w, 1, 10), 100010);
        CMPI_Win_stats s = stats_of(w);
        CHECK_EQ_INT(s.hits, caches ? 1 : 0);
        CHECK_EQ_INT(s.misses, caches ? 1 : 2);
        /* the hit needed no network: its flush was elided */
        CHECK_EQ_INT(s.flushes_elided, caches ? 1 : 0);
    }
    owner_sets(w, 10, 7);
    if (rank == 0) {
        int v = get_int(w, 1, 10);
        if (!strcmp(mode, CLAMPI_TRANSPARENT))
            CHECK_EQ_INT(v, 7); /* after a flush: fresh */
        else
            CHECK_EQ_INT(v, 100010); /* cached, as the mode allows */
        CHECK(CMPI_Win_invalidate(w) == MPI_SUCCESS);
        CHECK_EQ_INT(get_int(w, 1, 10), 7); /* every mode: fresh after invalidate */
    }

    /* Own writes invalidate what they overwrite, in every mode. */
    if (rank == 0) {
        CHECK_EQ_INT(get_int(w, 1, 20), 100020);
        int v = 55;
        CHECK(CMPI_Put(&v, 1, MPI_INT, 1, 20, 1, MPI_INT, w) == MPI_SUCCESS);
        CHECK(CMPI_Win_flush(1, w) == MPI_SUCCESS);
        CHECK_EQ_INT(get_int(w, 1, 20), 55);
        v = 5;
        CHECK(CMPI_Accumulate(&v, 1, MPI_INT, 1, 20, 1, MPI_INT, MPI_SUM, w) == MPI_SUCCESS);
        CHECK(CMPI_Win_flush(1, w) == MPI_SUCCESS);
        CHECK_EQ_INT(get_int(w, 1, 20), 60);
    }

    /* Sub-range hit and in-flight duplicate. */
    if (rank == 0) {
        int big[256], part[8], dup[4];
        CMPI_Win_stats before = stats_of(w);
        CHECK(CMPI_Get(big, 256, MPI_INT, 1, 1000, 256, MPI_INT, w) == MPI_SUCCESS);
        CHECK(CMPI_Get(dup, 4, MPI_INT, 1, 1100, 4, MPI_INT, w) == MPI_SUCCESS); /* inside the get in flight */
        CHECK(CMPI_Win_flush(1, w) == MPI_SUCCESS);
        for (int i = 0; i < 4; i++) CHECK_EQ_INT(dup[i], 101100 + i);
        CHECK(CMPI_Get(part, 8, MPI_INT, 1, 1200, 8, MPI_INT, w) == MPI_SUCCESS);
        CHECK(CMPI_Win_flush(1, w) == MPI_SUCCESS);
        for (int i = 0; i < 8; i++) CHECK_EQ_INT(part[i], 101200 + i);
        CMPI_Win_stats after = stats_of(w);
        CHECK_EQ_INT(after.inflight_hits - before.inflight_hits, 1);
        CHECK_EQ_INT(after.misses - before.misses, caches ? 1 : 2);
        CHECK_EQ_INT(after.subrange_hits - before.subrange_hits, caches ? 1 : 0);
    }

    /* Transparent: a reader spinning on a flag sees the owner's update. */
    if (!strcmp(mode, CLAMPI_TRANSPARENT)) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < 0.05) {}
            int v = 4242;
            CHECK(CMPI_Put(&v, 1, MPI_INT, 1, 30, 1, MPI_INT, w) == MPI_SUCCESS);
            CHECK(CMPI_Win_flush(1, w) == MPI_SUCCESS);
        } else if (rank == 0) {
            double t0 = MPI_Wtime();
            int v;
            while ((v = get_int(w, 1, 30)) != 4242) CHECK(MPI_Wtime() - t0 < 30.0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK(CMPI_Win_unlock_all(w) == MPI_SUCCESS);

    /* Epoch ends: fence and lock/unlock complete gets the same way. */
    CHECK(CMPI_Win_fence(0, w) == MPI_SUCCESS);
    int v = -1;
    if (rank == 0) CHECK(CMPI_Get(&v, 1, MPI_INT, 1, 40, 1, MPI_INT, w) == MPI_SUCCESS);
    CHECK(CMPI_Win_fence(0, w) == MPI_SUCCESS);
    if (rank == 0) {
        CHECK_EQ_INT(v, 100040);
        CHECK(CMPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w) == MPI_SUCCESS);
        v = -1;
        CHECK(CMPI_Get(&v, 1, MPI_INT, 1, 40, 1, MPI_INT, w) == MPI_SUCCESS);
        CHECK(CMPI_Win_unlock(1, w) == MPI_SUCCESS);
        CHECK_EQ_INT(v, 100040);
    }
    CHECK(CMPI_Win_free(&w) == MPI_SUCCESS);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    test_mode(CLAMPI_TRANSPARENT);
    test_mode(CLAMPI_ALWAYS_CACHE);
    test_mode(CLAMPI_USER_DEFINED);
    if (rank == 0) puts("modes: ok");
    MPI_Finalize();
    return 0;
}
