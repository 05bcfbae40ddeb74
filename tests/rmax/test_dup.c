/* CMPIX_Win_dup_with_info: info override (own cache for an always_cache duplicate of a
 * transparent window), shared synchronization (a lock through the parent covers the
 * duplicate's operations; a second lock through the duplicate is refused), freeing a
 * duplicate leaves the parent and its memory alone, freeing the parent invalidates its
 * duplicates, bad input leaves everything as it was. argv[1]: "mpi" or "ucx" backend. */
#include <string.h>

#include "mpi_util.h"

#define N 64

static int get_int_key(CMPI_Win w, const char *key, char *out, int len) {
    MPI_Info info;
    int flag = 0;
    CHECK_EQ_INT(CMPI_Win_get_info(w, &info), MPI_SUCCESS);
    MPI_Info_get(info, key, len - 1, out, &flag);
    MPI_Info_free(&info);
    return flag;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *backend = argc > 1 ? argv[1] : "mpi";
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", (char *)backend);
    MPI_Info_set(info, CLAMPI_MODE, CLAMPI_TRANSPARENT);
    MPI_Info_set(info, CLAMPI_SHM_DIRECT, "false"); /* gets go to the network (and the cache) */
    int *base;
    CMPI_Win w;
    CHECK_EQ_INT(CMPI_Win_allocate(N * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &w), MPI_SUCCESS);
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
    for (int i = 0; i < N; i++) base[i] = rank * 1000 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    const int peer = (rank + 1) % n;

    /* bad input: nothing created */
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, CLAMPI_MODE, "sometimes");
    CMPI_Win untouched = {MPI_WIN_NULL, 77, 77};
    CHECK_CLASS(CMPIX_Win_dup_with_info(w, bad, &untouched), MPI_ERR_INFO_VALUE);
    CHECK(untouched.slot == 77 && untouched.serial == 77);
    MPI_Info_free(&bad);
    CHECK_CLASS(CMPIX_Win_dup_with_info(w, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    CMPI_Win nullwin = {MPI_WIN_NULL, 0, 0};
    CHECK_CLASS(CMPIX_Win_dup_with_info(nullwin, MPI_INFO_NULL, &untouched), MPI_ERR_WIN);

    /* info override: an always_cache duplicate has its own cache; the parent keeps its keys */
    MPI_Info ro;
    MPI_Info_create(&ro);
    MPI_Info_set(ro, CLAMPI_MODE, CLAMPI_ALWAYS_CACHE);
    CMPI_Win d;
    CHECK_EQ_INT(CMPIX_Win_dup_with_info(w, ro, &d), MPI_SUCCESS);
    MPI_Info_free(&ro);
    CHECK(d.win == w.win); /* the same MPI window */
    char v[64];
    CHECK(get_int_key(d, CLAMPI_MODE, v, sizeof v) && !strcmp(v, CLAMPI_ALWAYS_CACHE));
    CHECK(get_int_key(w, CLAMPI_MODE, v, sizeof v) && !strcmp(v, CLAMPI_TRANSPARENT));
    CHECK(get_int_key(d, "clampi_backend", v, sizeof v) && !strcmp(v, backend));

    int buf[N];
    CHECK_EQ_INT(CMPI_Win_lock_all(0, w), MPI_SUCCESS); /* an epoch of the parent serves the dup */
    for (int round = 0; round < 3; round++) {
        memset(buf, 0, sizeof buf);
        CHECK_EQ_INT(CMPI_Get(buf, N, MPI_INT, peer, 0, N, MPI_INT, d), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_flush(peer, d), MPI_SUCCESS);
        for (int i = 0; i < N; i++) CHECK_EQ_INT(buf[i], peer * 1000 + i);
    }
    CMPI_Win_stats sd, sw;
    CMPI_Win_get_stats(d, &sd);
    CMPI_Win_get_stats(w, &sw);
    CHECK_EQ_INT(sd.gets, 3);
    CHECK_EQ_INT(sd.hits, 2); /* rounds 2 and 3 from the duplicate's cache */
    CHECK_EQ_INT(sw.gets, 0); /* the parent saw none of it */
    CHECK_EQ_INT(CMPI_Win_unlock_all(w), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);

    /* shared synchronization: lock through the parent, write through the duplicate */
    MPI_Win_set_errhandler(d.win, MPI_ERRORS_RETURN);
    CMPI_Win d2;
    CHECK_EQ_INT(CMPIX_Win_dup_with_info(w, MPI_INFO_NULL, &d2), MPI_SUCCESS);
    int val = 5000 + rank;
    CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, w), MPI_SUCCESS);
    int rc = CMPI_Win_lock(MPI_LOCK_SHARED, peer, 0, d2); /* already locked: the same epoch */
    CHECK(rc != MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Put(&val, 1, MPI_INT, peer, rank == 0 ? 1 : 2, 1, MPI_INT, d2), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_flush(peer, d2), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_unlock(peer, w), MPI_SUCCESS);
    /* freeing a duplicate is local and leaves the parent (and its memory) alone */
    CHECK_EQ_INT(CMPI_Win_free(&d2), MPI_SUCCESS);
    CHECK(d2.serial == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    const int from = (rank - 1 + n) % n;
    CHECK_EQ_INT(base[from == 0 ? 1 : 2], 5000 + from);
    CHECK_EQ_INT(CMPI_Win_lock(MPI_LOCK_SHARED, peer, 0, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Get(buf, 1, MPI_INT, peer, 0, 1, MPI_INT, w), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_unlock(peer, w), MPI_SUCCESS);
    CHECK_EQ_INT(buf[0], peer * 1000);
    MPI_Barrier(MPI_COMM_WORLD);

    /* freeing the parent frees the live duplicate: its handle is refused afterwards */
    CMPI_Win stale = d;
    CHECK_EQ_INT(CMPI_Win_free(&w), MPI_SUCCESS);
    CHECK_CLASS(CMPI_Get(buf, 1, MPI_INT, peer, 0, 1, MPI_INT, stale), MPI_ERR_WIN);
    CHECK_CLASS(CMPI_Win_free(&stale), MPI_ERR_WIN);
    MPI_Info_free(&info);
    MPI_Finalize();
    if (rank == 0) printf("test_dup(%s): ok\n", backend);
    return 0;
}
