/* Plain MPI (no clampi calls): one-sided operations with the predefined pair types
 * (MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
 * MPI_LONG_DOUBLE_INT), whose packed size is below their extent (gaps between the value
 * and the index, or after the index). For each type, on a window made by KIND:
 *   - MPI_Accumulate MAXLOC of a count of the type, MINLOC through a vector of it, REPLACE;
 *   - MPI_Get_accumulate MPI_NO_OP (origin NULL / MPI_DATATYPE_NULL / count 0, as MPI
 *     allows) and MAXLOC with a result;
 *   - MPI_Fetch_and_op MPI_NO_OP and MINLOC;
 *   - MPI_Put / MPI_Get of a count of the type.
 * Prints "result" lines (values, never padding bytes) that run_preload.sh requires to be
 * identical plainly and preloaded (CLAMPI_BACKEND=ucx: MPICH's acc_pairtype and
 * atomic_get found these wrong or refused on UCX windows).
 * Usage: plain_rma_pairtypes KIND [SKIP]
 *   KIND: create | allocate | dynamic; SKIP: types left out, e.g. short_int */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 64 /* elements per window */

static int me, np;

#include "plain_check.h"

/* Every rank's line printed by rank 0 (lines of several ranks written at once can
 * interleave in the launcher's output). */
static void emit(const char *line) {
    char mine[160] = {0}, *all = NULL;
    snprintf(mine, sizeof mine, "%s", line);
    if (me == 0) all = malloc(sizeof mine * (size_t)np);
    CHECK(MPI_Gather(mine, (int)sizeof mine, MPI_CHAR, all, (int)sizeof mine, MPI_CHAR, 0, MPI_COMM_WORLD));
    for (int r = 0; me == 0 && r < np; r++) printf("%s\n", all + r * sizeof mine);
    free(all);
}

static uint64_t hash;
/* The values are small integers, the same for every type: every type must give the same
 * hashes (printed as a "check" line, not a result: the preloaded run's regex needs it). */
static uint64_t first_fetched, first_window;
static int tested, disagree;
static void agree(uint64_t fetched, uint64_t window) {
    if (!tested++) first_fetched = fetched, first_window = window;
    disagree += fetched != first_fetched || window != first_window;
}
static void fold(long long v) {
    hash ^= (uint64_t)v;
    hash *= 1099511628211ull;
}

/* One pass over a pair type T (value type A): window of N pairs per rank, every rank
 * operates on its right neighbour. */
#define PAIR_TEST(NAME, A, MPITYPE)                                                                                    \
    static void test_##NAME(const char *kind) {                                                                        \
        typedef struct {                                                                                               \
            A a;                                                                                                       \
            int b;                                                                                                     \
        } pair;                                                                                                        \
        MPI_Win win;                                                                                                   \
        pair *mem = NULL;                                                                                              \
        MPI_Aint base = 0;                                                                                             \
        if (!strcmp(kind, "allocate")) {                                                                               \
            CHECK(MPI_Win_allocate(N * sizeof(pair), sizeof(pair), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));        \
        } else {                                                                                                       \
            CHECK(MPI_Alloc_mem(N * sizeof(pair), MPI_INFO_NULL, &mem));                                               \
            if (!strcmp(kind, "create")) {                                                                             \
                CHECK(MPI_Win_create(mem, N * sizeof(pair), sizeof(pair), MPI_INFO_NULL, MPI_COMM_WORLD, &win));       \
            } else {                                                                                                   \
                CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));                                    \
                CHECK(MPI_Win_attach(win, mem, N * sizeof(pair)));                                                     \
            }                                                                                                          \
        }                                                                                                              \
        const int dyn = !strcmp(kind, "dynamic");                                                                      \
        MPI_Aint mine;                                                                                                 \
        MPI_Get_address(mem, &mine);                                                                                   \
        const int t = (me + 1) % np;                                                                                   \
        MPI_Aint *bases = malloc(sizeof(MPI_Aint) * (size_t)np);                                                       \
        CHECK(MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD));                                  \
        base = dyn ? bases[t] : 0;                                                                                     \
        const MPI_Aint unit = dyn ? (MPI_Aint)sizeof(pair) : 1;                                                        \
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));                                                           \
        for (int i = 0; i < N; i++) {                                                                                  \
            memset(&mem[i], 0, sizeof(pair));                                                                          \
            mem[i].a = (A)((i * 5) % 11);                                                                              \
            mem[i].b = 1000 * me + i;                                                                                  \
        }                                                                                                              \
        CHECK(MPI_Win_unlock(me, win));                                                                                \
        CHECK(MPI_Barrier(MPI_COMM_WORLD));                                                                            \
        pair org[N], res[N];                                                                                           \
        memset(org, 0, sizeof org);                                                                                    \
        memset(res, 0, sizeof res);                                                                                    \
        for (int i = 0; i < N; i++) {                                                                                  \
            org[i].a = (A)((i * 7 + me) % 13);                                                                         \
            org[i].b = 100 * me + i;                                                                                   \
        }                                                                                                              \
        MPI_Datatype vec; /* 5 blocks of 3 pairs, stride 5 */                                                          \
        CHECK(MPI_Type_vector(5, 3, 5, MPITYPE, &vec));                                                                \
        CHECK(MPI_Type_commit(&vec));                                                                                  \
        hash = 1469598103934665603ull;                                                                                 \
        /* accumulates: each in its own epoch, completed at the target */                                              \
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));                                                            \
        CHECK(MPI_Accumulate(org, 20, MPITYPE, t, base + 0 * unit, 20, MPITYPE, MPI_MAXLOC, win));                     \
        CHECK(MPI_Win_unlock(t, win));                                                                                 \
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));                                                            \
        CHECK(MPI_Accumulate(org + 20, 1, vec, t, base + 20 * unit, 1, vec, MPI_MINLOC, win));                         \
        CHECK(MPI_Win_unlock(t, win));                                                                                 \
        CHECK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));                                                               \
        CHECK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, res, 10, MPITYPE, t, base + 0 * unit, 10, MPITYPE,        \
                                 MPI_NO_OP, win));                                                                     \
        CHECK(MPI_Get_accumulate(org, 10, MPITYPE, res + 10, 10, MPITYPE, t, base + 20 * unit, 10, MPITYPE, MPI_NO_OP, \
                                 win));                                                                                \
        CHECK(MPI_Fetch_and_op(NULL, res + 20, MPITYPE, t, base + 3 * unit, MPI_NO_OP, win));                          \
        CHECK(MPI_Win_unlock(t, win));                                                                                 \
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));                                                            \
        CHECK(MPI_Get_accumulate(org + 40, 8, MPITYPE, res + 21, 8, MPITYPE, t, base + 40 * unit, 8, MPITYPE,          \
                                 MPI_MAXLOC, win));                                                                    \
        CHECK(MPI_Win_unlock(t, win));                                                                                 \
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));                                                            \
        CHECK(MPI_Fetch_and_op(org + 48, res + 29, MPITYPE, t, base + 48 * unit, MPI_MINLOC, win));                    \
        CHECK(MPI_Win_unlock(t, win));                                                                                 \
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));                                                            \
        CHECK(MPI_Accumulate(org + 50, 4, MPITYPE, t, base + 50 * unit, 4, MPITYPE, MPI_REPLACE, win));                \
        CHECK(MPI_Win_unlock(t, win));                                                                                 \
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));                                                            \
        CHECK(MPI_Put(org + 54, 6, MPITYPE, t, base + 54 * unit, 6, MPITYPE, win));                                    \
        CHECK(MPI_Win_flush(t, win));                                                                                  \
        CHECK(MPI_Get(res + 30, 8, MPITYPE, t, base + 52 * unit, 8, MPITYPE, win));                                    \
        CHECK(MPI_Win_unlock(t, win));                                                                                 \
        for (int i = 0; i < 38; i++) fold((long long)res[i].a * 7919 + res[i].b);                                      \
        const uint64_t fetched = hash;                                                                                 \
        char line[160];                                                                                                \
        snprintf(line, sizeof line, "result type=%s kind=%s rank=%d fetched=%016llx", #NAME, kind, me,                 \
                 (unsigned long long)hash);                                                                            \
        emit(line);                                                                                                    \
        CHECK(MPI_Barrier(MPI_COMM_WORLD));                                                                            \
        hash = 1469598103934665603ull;                                                                                 \
        CHECK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));                                                              \
        for (int i = 0; i < N; i++) fold((long long)mem[i].a * 7919 + mem[i].b);                                       \
        int wrong = 0; /* MAXLOC over [0,20): the larger value, the lower index on a tie */                            \
        for (int i = 0; i < 20; i++) {                                                                                 \
            A old = (A)((i * 5) % 11), in = (A)((i * 7 + (me + np - 1) % np) % 13);                                    \
            A want = old > in ? old : in;                                                                              \
            if (mem[i].a != want) wrong++;                                                                             \
        }                                                                                                              \
        CHECK(MPI_Win_unlock(me, win));                                                                                \
        snprintf(line, sizeof line, "result type=%s kind=%s rank=%d window=%016llx maxloc_wrong=%d", #NAME, kind, me,  \
                 (unsigned long long)hash, wrong);                                                                     \
        emit(line);                                                                                                    \
        agree(fetched, hash);                                                                                          \
        CHECK(MPI_Barrier(MPI_COMM_WORLD));                                                                            \
        CHECK(MPI_Type_free(&vec));                                                                                    \
        if (dyn) CHECK(MPI_Win_detach(win, mem));                                                                      \
        CHECK(MPI_Win_free(&win));                                                                                     \
        if (strcmp(kind, "allocate")) CHECK(MPI_Free_mem(mem));                                                        \
        free(bases);                                                                                                   \
    }

PAIR_TEST(float_int, float, MPI_FLOAT_INT)
PAIR_TEST(double_int, double, MPI_DOUBLE_INT)
PAIR_TEST(long_int, long, MPI_LONG_INT)
PAIR_TEST(two_int, int, MPI_2INT)
PAIR_TEST(short_int, short, MPI_SHORT_INT)
PAIR_TEST(long_double_int, long double, MPI_LONG_DOUBLE_INT)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *kind = argc > 1 ? argv[1] : "create";
    setvbuf(stdout, NULL, _IOLBF, 4096);        /* whole lines: one write each */
    const char *skip = argc > 2 ? argv[2] : ""; /* types left out (a comma list) */
#define RUN(NAME) \
    if (!strstr(skip, #NAME)) test_##NAME(kind)
    RUN(float_int);
    RUN(double_int);
    RUN(long_int);
    RUN(two_int);
    RUN(short_int);
    RUN(long_double_int);
    int bad = 0;
    CHECK(MPI_Reduce(&disagree, &bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (me == 0) printf("check types=%d disagree=%d\n", tested, bad);
    fflush(stdout);
    CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* before the preload's finalize lines */
    MPI_Finalize();
    return 0;
}
