/* API behaviour of the collectives and the shared heap: bad arguments are reported
 * through the communicator's error handler and returned (never abort), the path taken
 * (direct / staged / delegated) follows where the buffers are, heap memory is aligned and
 * returned, heap exhaustion falls back to MPI_Alloc_mem, per-communicator state is
 * freed with the communicator. */
#define CLAMPI_TEST_USES_MPI
#include <clampi/coll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int handler_calls, handler_last;
static void count_errors(MPI_Comm *comm, int *code, ...) {
    handler_calls++;
    handler_last = *code;
}

static int errclass(int code) {
    int c;
    MPI_Error_class(code, &c);
    return c;
}

#define EXPECT_ERR(call, cls)                      \
    do {                                           \
        int _before = handler_calls;               \
        int _rc = (call);                          \
        CHECK_EQ_INT(errclass(_rc), cls);          \
        CHECK_EQ_INT(handler_calls, _before + 1);  \
        CHECK_EQ_INT(errclass(handler_last), cls); \
    } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_errors, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm); /* inherits the handler */

    int *s, *r;
    CHECK(CMPI_Alloc_mem((MPI_Aint)(sizeof(int) * 4 * (size_t)P), MPI_INFO_NULL, &s) == MPI_SUCCESS);
    CHECK(CMPI_Alloc_mem((MPI_Aint)(sizeof(int) * 4 * (size_t)P), MPI_INFO_NULL, &r) == MPI_SUCCESS);
    CHECK(((uintptr_t)s & 63) == 0 && ((uintptr_t)r & 63) == 0);
    CMPIX_Heap_info hi;
    CHECK(CMPIX_Heap_info_get(&hi) == MPI_SUCCESS);
    CHECK(hi.enabled && hi.in_use >= 2 * sizeof(int) * 4 * (size_t)P && hi.capacity > hi.in_use);

    /* ---- bad arguments: error class returned and handler called, nothing aborts ---- */
    EXPECT_ERR(CMPI_Alltoall(s, -1, MPI_INT, r, 1, MPI_INT, comm), MPI_ERR_COUNT);
    EXPECT_ERR(CMPI_Alltoall(s, 1, MPI_INT, r, -1, MPI_INT, comm), MPI_ERR_COUNT);
    EXPECT_ERR(CMPI_Alltoall(s, 1, MPI_DATATYPE_NULL, r, 1, MPI_INT, comm), MPI_ERR_TYPE);
    EXPECT_ERR(CMPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_DATATYPE_NULL, comm), MPI_ERR_TYPE);
    EXPECT_ERR(CMPI_Alltoall(s, 2, MPI_INT, r, 1, MPI_INT, comm), MPI_ERR_TRUNCATE);
    EXPECT_ERR(CMPI_Allgather(s, 1, MPI_DOUBLE, r, 1, MPI_INT, comm), MPI_ERR_TRUNCATE);
    /* sizes that differ across ranks AND across the mailbox limit (1 KiB by default): rank 0
     * takes the small-block path, the others the slot path; every rank gets the error and
     * nobody hangs (it did); then the same again the other way round, and for Allgather */
    if (P > 1) {
        const int small = 4, large = 600; /* 16 B and 2400 B blocks of ints */
        int *ms = malloc(sizeof(int) * (size_t)large * (size_t)P),
            *mr = malloc(sizeof(int) * (size_t)large * (size_t)P);
        CHECK(ms && mr);
        memset(ms, 0, sizeof(int) * (size_t)large * (size_t)P);
        for (int flip = 0; flip < 2; flip++) {
            int n = (rank == 0) == (flip == 0) ? small : large;
            EXPECT_ERR(CMPI_Alltoall(ms, n, MPI_INT, mr, n, MPI_INT, comm), MPI_ERR_TRUNCATE);
            EXPECT_ERR(CMPI_Allgather(ms, n, MPI_INT, mr, n, MPI_INT, comm), MPI_ERR_TRUNCATE);
        }
        /* and the communicator still works on both paths */
        for (int i = 0; i < large * P; i++) ms[i] = rank * 100000 + i;
        for (int n = small; n <= large; n += large - small) {
            CHECK(CMPI_Alltoall(ms, n, MPI_INT, mr, n, MPI_INT, comm) == MPI_SUCCESS);
            for (int j = 0; j < P; j++) CHECK_EQ_INT(mr[j * n + n - 1], j * 100000 + rank * n + n - 1);
        }
        free(ms);
        free(mr);
    }
    EXPECT_ERR(CMPI_Allgather(s, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, comm), MPI_ERR_BUFFER);
    EXPECT_ERR(CMPI_Allgather(s, -3, MPI_INT, r, 1, MPI_INT, comm), MPI_ERR_COUNT);
    EXPECT_ERR(CMPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_ERR(CMPI_Alloc_mem(-5, MPI_INFO_NULL, &s), MPI_ERR_SIZE);
    EXPECT_ERR(CMPI_Free_mem((char *)s + 64), MPI_ERR_ARG);

    /* ---- a valid call after the errors; the path follows the buffers --------------- */
    CMPIX_Coll_stats a, b;
    CMPIX_Coll_get_stats(&a);
    for (int i = 0; i < 4 * P; i++) s[i] = rank * 1000 + i;
    CHECK(CMPI_Alltoall(s, 4, MPI_INT, r, 4, MPI_INT, comm) == MPI_SUCCESS);
    for (int j = 0; j < P; j++)
        for (int k = 0; k < 4; k++) CHECK_EQ_INT(r[j * 4 + k], j * 1000 + rank * 4 + k);
    CMPIX_Coll_get_stats(&b);
    /* small blocks: the mailbox path (one synchronization), wherever the buffers are */
    if (P > 1)
        CHECK_EQ_INT(b.eager, a.eager + 1);
    else
        CHECK_EQ_INT(b.direct, a.direct + 1);
    memset(r, 0, sizeof(int) * 4 * (size_t)P);
    CHECK(CMPIX_Alltoall_algo(s, 4, MPI_INT, r, 4, MPI_INT, comm, CMPIX_COLL_MORTON) == MPI_SUCCESS);
    for (int j = 0; j < P; j++)
        for (int k = 0; k < 4; k++) CHECK_EQ_INT(r[j * 4 + k], j * 1000 + rank * 4 + k);
    CMPIX_Coll_get_stats(&a);
    CHECK_EQ_INT(a.direct, b.direct + 1); /* forced schedule, all buffers in the heap */

    int *ms = malloc(sizeof(int) * 4 * (size_t)P), *mr = malloc(sizeof(int) * 4 * (size_t)P);
    memcpy(ms, s, sizeof(int) * 4 * (size_t)P);
    CHECK(CMPIX_Alltoall_algo(ms, 4, MPI_INT, mr, 4, MPI_INT, comm, CMPIX_COLL_MORTON) == MPI_SUCCESS);
    CHECK(memcmp(mr, r, sizeof(int) * 4 * (size_t)P) == 0);
    CMPIX_Coll_get_stats(&b);
    CHECK_EQ_INT(b.staged, a.staged + 1); /* forced schedule, buffers outside the heap: staged */
    CMPIX_Coll_get_stats(&a);

    size_t big = (size_t)1 << 20; /* above CLAMPI_COLL_STAGED_MAX's default */
    char *bs = malloc(big * (size_t)P), *br = malloc(big * (size_t)P);
    memset(bs, rank, big * (size_t)P);
    CHECK(CMPI_Alltoall(bs, (int)big, MPI_BYTE, br, (int)big, MPI_BYTE, comm) == MPI_SUCCESS);
    for (int j = 0; j < P; j++) CHECK(br[(size_t)j * big] == j && br[(size_t)j * big + big - 1] == j);
    CMPIX_Coll_get_stats(&b);
    CHECK_EQ_INT(b.delegated, a.delegated + 1);

    /* CMPIX_COLL_MPI forces the library; stats unchanged, result the same */
    CHECK(CMPIX_Alltoall_algo(s, 4, MPI_INT, mr, 4, MPI_INT, comm, CMPIX_COLL_MPI) == MPI_SUCCESS);
    CHECK(memcmp(mr, r, sizeof(int) * 4 * (size_t)P) == 0);

    /* ---- heap exhaustion falls back to MPI_Alloc_mem and frees correctly ----------- */
    CMPIX_Heap_info_get(&hi);
    void *huge = NULL;
    CHECK(CMPI_Alloc_mem((MPI_Aint)(hi.capacity + 4096), MPI_INFO_NULL, &huge) == MPI_SUCCESS);
    CHECK(huge != NULL);
    memset(huge, 1, 4096);
    CMPIX_Heap_info h2;
    CMPIX_Heap_info_get(&h2);
    CHECK_EQ_INT(h2.fallbacks, hi.fallbacks + 1);
    CHECK(CMPI_Free_mem(huge) == MPI_SUCCESS);

    /* ---- per-communicator state comes and goes with the communicator -------------- */
    for (int k = 0; k < 12; k++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, (rank + k) % 2, -rank, &c);
        int cr, cp;
        MPI_Comm_rank(c, &cr);
        MPI_Comm_size(c, &cp);
        int v = rank * 7 + k;
        CHECK(CMPI_Allgather(&v, 1, MPI_INT, r, 1, MPI_INT, c) == MPI_SUCCESS);
        int *ref = malloc(sizeof(int) * (size_t)cp);
        MPI_Allgather(&v, 1, MPI_INT, ref, 1, MPI_INT, c);
        CHECK(memcmp(ref, r, sizeof(int) * (size_t)cp) == 0);
        free(ref);
        MPI_Comm_free(&c);
    }

    CHECK(CMPI_Free_mem(s) == MPI_SUCCESS);
    CHECK(CMPI_Free_mem(r) == MPI_SUCCESS);
    CMPIX_Heap_info_get(&hi);
    CHECK_EQ_INT(hi.in_use, 0);
    free(ms);
    free(mr);
    free(bs);
    free(br);
    MPI_Comm_free(&comm);
    MPI_Errhandler_free(&eh);
    if (rank == 0) printf("coll api: ok (np=%d)\n", P);
    MPI_Finalize();
    return 0;
}
