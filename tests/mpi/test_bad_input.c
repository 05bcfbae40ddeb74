/* Bad input: each case returns a clear MPI error through the error handler (here
 * MPI_ERRORS_RETURN), and changes nothing: the cache keeps its entries, later gets
 * still return the right bytes. */
#define CLAMPI_TEST_USES_MPI
#include <stdlib.h>
#include <string.h>

#include "mpi_util.h"

static int rank, nranks;
#define N 1024

/* The message is clampi's, or the MPI's own for the class: never an unrelated one (MPICH
 * 4.0.2 prints stray messages for codes made by MPI_Add_error_code; clampi then raises
 * the class itself). */
static void check_message(int rc) {
    char msg[MPI_MAX_ERROR_STRING], class_msg[MPI_MAX_ERROR_STRING];
    int len, class_len, cls;
    MPI_Error_string(rc, msg, &len);
    MPI_Error_class(rc, &cls);
    MPI_Error_string(cls, class_msg, &class_len);
    CHECK(len > 0);
    if (strncmp(msg, "clampi: ", 8) != 0 && strcmp(msg, class_msg) != 0) {
        fprintf(stderr, "error %d (class %d) prints \"%s\", neither clampi's nor the class's \"%s\"\n", rc, cls, msg,
                class_msg);
        CHECK(0);
    }
}

/* A valid get of target's word i returns target * 1000 + i. */
static void check_good_get(CMPI_Win w, int target, int i) {
    int v = -1;
    CHECK(CMPI_Get(&v, 1, MPI_INT, target, i, 1, MPI_INT, w) == MPI_SUCCESS);
    CHECK(CMPI_Win_flush(target, w) == MPI_SUCCESS);
    CHECK_EQ_INT(v, target * 1000 + i);
}

static void test_rma_arguments(void) {
    MPI_Info info = cache_info(CLAMPI_ALWAYS_CACHE, "64K", "64");
    int *base;
    CMPI_Win w;
    CHECK(CMPI_Win_allocate(N * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &w) == MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
    for (int i = 0; i < N; i++) base[i] = rank * 1000 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(CMPI_Win_lock_all(0, w) == MPI_SUCCESS);
    int t = (rank + 1) % nranks;
    check_good_get(w, t, 5); /* cached now */
    check_good_get(w, t, 5);
    CMPI_Win_stats before = stats_of(w);
    CHECK_EQ_INT(before.cached_entries, 1);

    int buf[8] = {0};
    CHECK_CLASS(CMPI_Get(buf, -1, MPI_INT, t, 0, 1, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_CLASS(CMPI_Get(buf, 1, MPI_INT, t, 0, -1, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_CLASS(CMPI_Get(buf, 1, MPI_INT, nranks, 0, 1, MPI_INT, w), MPI_ERR_RANK);
    CHECK_CLASS(CMPI_Get(buf, 1, MPI_INT, -7, 0, 1, MPI_INT, w), MPI_ERR_RANK);
    CHECK_CLASS(CMPI_Get(buf, 1, MPI_INT, t, -1, 1, MPI_INT, w), MPI_ERR_DISP);
    CHECK_CLASS(CMPI_Get(buf, 1, MPI_INT, t, N, 1, MPI_INT, w), MPI_ERR_RMA_RANGE);     /* just past the end */
    CHECK_CLASS(CMPI_Get(buf, 4, MPI_INT, t, N - 2, 4, MPI_INT, w), MPI_ERR_RMA_RANGE); /* straddles the end */
    CHECK_CLASS(CMPI_Get(buf, 1, MPI_INT, t, (MPI_Aint)1 << 61, 1, MPI_INT, w), MPI_ERR_RMA_RANGE); /* overflow */
    CHECK_CLASS(CMPI_Get(buf, 1, MPI_DATATYPE_NULL, t, 0, 1, MPI_INT, w), MPI_ERR_TYPE);
    CHECK_CLASS(CMPI_Get(buf, 1, MPI_INT, t, 0, 1, MPI_DATATYPE_NULL, w), MPI_ERR_TYPE);
    CHECK_CLASS(CMPI_Get(buf, 1, MPI_INT, t, 0, 3, MPI_BYTE, w), MPI_ERR_TYPE); /* 4 bytes vs 3 */
    CHECK_CLASS(CMPI_Put(buf, 1, MPI_INT, nranks, 0, 1, MPI_INT, w), MPI_ERR_RANK);
    CHECK_CLASS(CMPI_Put(buf, 1, MPI_INT, t, N, 1, MPI_INT, w), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(CMPI_Accumulate(buf, 1, MPI_INT, t, -3, 1, MPI_INT, MPI_SUM, w), MPI_ERR_DISP);
    CHECK_CLASS(CMPI_Win_flush(nranks, w), MPI_ERR_RANK);
    CHECK_CLASS(CMPI_Win_flush_local(-1, w), MPI_ERR_RANK);
    check_message(CMPI_Get(buf, 1, MPI_INT, nranks, 0, 1, MPI_INT, w));
    CHECK(CMPI_Get(buf, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w) == MPI_SUCCESS); /* valid no-op */
    CHECK(CMPI_Get(buf, 0, MPI_INT, t, N, 0, MPI_INT, w) == MPI_SUCCESS);             /* empty get at the end */

    /* Nothing changed: the same entry is cached and the next get still hits. */
    CMPI_Win_stats after = stats_of(w);
    CHECK_EQ_INT(after.cached_entries, before.cached_entries);
    CHECK_EQ_INT(after.evictions, before.evictions);
    CHECK_EQ_INT(after.misses, before.misses);
    check_good_get(w, t, 5);
    CHECK_EQ_INT(stats_of(w).hits, before.hits + 1);

    /* An entry larger than the whole cache buffer (64 KiB here): served, uncached. */
    int *large = malloc(N * sizeof(int));
    CHECK(CMPI_Get(large, N, MPI_INT, t, 0, N, MPI_INT, w) == MPI_SUCCESS); /* 4 KiB: fits */
    CHECK(CMPI_Win_flush(t, w) == MPI_SUCCESS);
    for (int i = 0; i < N; i++) CHECK_EQ_INT(large[i], t * 1000 + i);
    free(large);
    CHECK(CMPI_Win_unlock_all(w) == MPI_SUCCESS);
    CHECK(CMPI_Win_free(&w) == MPI_SUCCESS);

    /* Window whose buffer is smaller than one get. */
    info = cache_info(CLAMPI_ALWAYS_CACHE, "4K", "64");
    CHECK(CMPI_Win_allocate(N * 64, 1, info, MPI_COMM_WORLD, &base, &w) == MPI_SUCCESS);
    MPI_Info_free(&info);
    memset(base, rank + 1, N * 64);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(CMPI_Win_lock_all(0, w) == MPI_SUCCESS);
    unsigned char *big = malloc(N * 64);
    for (int k = 0; k < 2; k++) {
        memset(big, 0, N * 64);
        CHECK(CMPI_Get(big, N * 64, MPI_BYTE, t, 0, N * 64, MPI_BYTE, w) == MPI_SUCCESS);
        CHECK(CMPI_Win_flush(t, w) == MPI_SUCCESS);
        for (int i = 0; i < N * 64; i++) CHECK_EQ_INT(big[i], t + 1);
    }
    CMPI_Win_stats s = stats_of(w);
    CHECK_EQ_INT(s.hits, 0);
    CHECK_EQ_INT(s.misses, 2);
    CHECK_EQ_INT(s.cached_entries, 0);
    free(big);
    CHECK(CMPI_Win_unlock_all(w) == MPI_SUCCESS);
    CHECK(CMPI_Win_free(&w) == MPI_SUCCESS);
}

static void test_window_handles(void) {
    int *base;
    CMPI_Win w, stale;
    CHECK(CMPI_Win_allocate(64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w) == MPI_SUCCESS);
    stale = w;
    CHECK(CMPI_Win_free(&w) == MPI_SUCCESS);
    CHECK(w.win == MPI_WIN_NULL);
    int v;
    CHECK_CLASS(CMPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, stale), MPI_ERR_WIN);
    CHECK_CLASS(CMPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, w), MPI_ERR_WIN);
    CHECK_CLASS(CMPI_Win_flush(0, stale), MPI_ERR_WIN);
    CHECK_CLASS(CMPI_Win_invalidate(stale), MPI_ERR_WIN);
    CHECK_CLASS(CMPI_Win_free(&w), MPI_ERR_WIN);
    CHECK_CLASS(CMPI_Win_free(&stale), MPI_ERR_WIN);
    CHECK_CLASS(CMPI_Win_free(NULL), MPI_ERR_WIN);
    CMPI_Win zero;
    memset(&zero, 0, sizeof zero);
    zero.win = MPI_WIN_NULL;
    CHECK_CLASS(CMPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, zero), MPI_ERR_WIN);
    CMPI_Win_stats s;
    CHECK_CLASS(CMPI_Win_get_stats(zero, &s), MPI_ERR_WIN);
    /* A new window reusing the freed slot is not reachable through the stale handle. */
    CHECK(CMPI_Win_allocate(64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w) == MPI_SUCCESS);
    CHECK_CLASS(CMPI_Win_flush(0, stale), MPI_ERR_WIN);
    CHECK(CMPI_Win_free(&w) == MPI_SUCCESS);
}

static void test_creation(void) {
    CMPI_Win w;
    int *base;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_MODE, "always-cached"); /* typo */
    CHECK_CLASS(CMPI_Win_allocate(64, 4, info, MPI_COMM_WORLD, &base, &w), MPI_ERR_INFO_VALUE);
    MPI_Info_free(&info);
    /* A bad value on one rank only: every rank fails (no one is left inside a collective). */
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BUFFER_SIZE, rank == nranks - 1 ? "lots" : "1M");
    CHECK_CLASS(CMPI_Win_allocate(64, 4, info, MPI_COMM_WORLD, &base, &w), MPI_ERR_INFO_VALUE);
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_INDEX_SIZE, "-5");
    int buf[16];
    CHECK_CLASS(CMPI_Win_create(buf, sizeof buf, 4, info, MPI_COMM_WORLD, &w), MPI_ERR_INFO_VALUE);
    MPI_Info_free(&info);
    setenv("CLAMPI_MODE", "bogus", 1);
    CHECK_CLASS(CMPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &w), MPI_ERR_INFO_VALUE);
    unsetenv("CLAMPI_MODE");
    CHECK_CLASS(CMPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &w), MPI_ERR_ARG);
    CHECK_CLASS(CMPI_Win_create(buf, -1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &w), MPI_ERR_ARG);
    CHECK_CLASS(CMPI_Win_allocate(64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, NULL, &w), MPI_ERR_ARG);

    /* A cache that cannot be allocated: the window works uncached. */
    info = cache_info(CLAMPI_ALWAYS_CACHE, "1000000G", NULL);
    CHECK(CMPI_Win_allocate(sizeof buf, 4, info, MPI_COMM_WORLD, &base, &w) == MPI_SUCCESS);
    for (int i = 0; i < 16; i++) base[i] = rank * 1000 + i;
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(CMPI_Win_lock_all(0, w) == MPI_SUCCESS);
    for (int k = 0; k < 3; k++) check_good_get(w, (rank + 1) % nranks, 3);
    CMPI_Win_stats s = stats_of(w);
    CHECK_EQ_INT(s.buffer_bytes, 0);
    CHECK_EQ_INT(s.hits, 0);
    CHECK_EQ_INT(s.misses, 3);
    CHECK(CMPI_Win_unlock_all(w) == MPI_SUCCESS);
    CHECK(CMPI_Win_free(&w) == MPI_SUCCESS);
}

/* A UCX dynamic window with the two halves of one array attached separately: an access
 * over both is served (MPICH's win_dynamic_rma_flush_get), one that runs past them, or
 * starts below, raises MPI_ERR_RMA_RANGE and writes nothing, contiguous or not. */
static void test_dynamic_unattached(void) {
    enum { H = 16 };
    int *mem = malloc(2 * H * sizeof *mem), got[2 * H], src[2 * H];
    for (int i = 0; i < 2 * H; i++) mem[i] = rank * 1000 + i, src[i] = -1;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_BACKEND, "ucx");
    CMPI_Win w;
    int rc = CMPI_Win_create_dynamic(info, MPI_COMM_WORLD, &w);
    MPI_Info_free(&info);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    if (rc != MPI_SUCCESS && nranks == 1 && strstr(lib, "Open MPI")) { /* its osc has no dynamic window at np 1 */
        if (rank == 0) puts("bad input: dynamic window skipped (Open MPI cannot create one with one process)");
        free(mem);
        return;
    }
    CHECK(rc == MPI_SUCCESS);
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
    CHECK(CMPI_Win_attach(w, mem, H * sizeof *mem) == MPI_SUCCESS);
    CHECK(CMPI_Win_attach(w, mem + H, H * sizeof *mem) == MPI_SUCCESS);
    MPI_Aint mine, *base = malloc((size_t)nranks * sizeof *base);
    MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, base, 1, MPI_AINT, MPI_COMM_WORLD);
    const int t = (rank + 1) % nranks;
#define AT(i) MPI_Aint_add(base[t], (MPI_Aint)(i) * (MPI_Aint)sizeof(int))
    MPI_Datatype every_other;
    MPI_Type_vector(H, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    CHECK(CMPI_Win_lock_all(0, w) == MPI_SUCCESS);
    CHECK(CMPI_Get(got, H, MPI_INT, t, AT(H / 2), H, MPI_INT, w) == MPI_SUCCESS); /* over the middle */
    CHECK(CMPI_Win_flush(t, w) == MPI_SUCCESS);
    for (int i = 0; i < H; i++) CHECK_EQ_INT(got[i], t * 1000 + H / 2 + i);
    CHECK_CLASS(CMPI_Put(src, H, MPI_INT, t, AT(H + H / 2), H, MPI_INT, w), MPI_ERR_RMA_RANGE); /* past the end */
    CHECK_CLASS(CMPI_Put(src, 2, MPI_INT, t, AT(-1), 2, MPI_INT, w), MPI_ERR_RMA_RANGE);        /* below */
    CHECK_CLASS(CMPI_Put(src, H, MPI_INT, t, AT(3), 1, every_other, w), MPI_ERR_RMA_RANGE);     /* vector past */
    CHECK_CLASS(CMPI_Accumulate(src, 2 * H, MPI_INT, t, AT(1), 2 * H, MPI_INT, MPI_SUM, w), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(CMPI_Get_accumulate(src, H, MPI_INT, got, H, MPI_INT, t, AT(H + 1), H, MPI_INT, MPI_REPLACE, w),
                MPI_ERR_RMA_RANGE);
    CHECK(CMPI_Win_flush(t, w) == MPI_SUCCESS);
    CHECK(CMPI_Get(got, 2 * H, MPI_INT, t, AT(0), 2 * H, MPI_INT, w) == MPI_SUCCESS);
    CHECK(CMPI_Win_flush(t, w) == MPI_SUCCESS);
    for (int i = 0; i < 2 * H; i++) CHECK_EQ_INT(got[i], t * 1000 + i); /* nothing written */
#undef AT
    CHECK(CMPI_Win_unlock_all(w) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&every_other);
    CHECK(CMPI_Win_detach(w, mem) == MPI_SUCCESS);
    CHECK(CMPI_Win_detach(w, mem + H) == MPI_SUCCESS);
    CHECK(CMPI_Win_free(&w) == MPI_SUCCESS);
    free(mem), free(base);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_rma_arguments();
    test_window_handles();
    test_creation();
#if CLAMPI_HAVE_UCX /* range checks of dynamic windows: the UCX backend's */
    test_dynamic_unattached();
#endif
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) puts("bad input: ok");
    MPI_Finalize();
    return 0;
}
