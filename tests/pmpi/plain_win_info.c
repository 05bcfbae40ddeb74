/* Plain MPI (no clampi calls): MPI_Win_get_info reports the values in effect under the
 * preload, never the values asked for. Under the preload (found with dlsym: libclampi_pmpi
 * exports MPIX_Win_dup_with_info) every check is made and a failing one prints
 * "result ... BAD"; plainly MPI does not know the keys and nothing is checked. Either way
 * the result lines are the same when all is well (run_preload.sh), and the preloaded run
 * prints "infocheck preload=1 failures=0".
 * Checks: thread scope on MPI_Win_create (UCX backend); MPI_Win_allocate_shared with
 * thread scope and clampi_backend=ucx asked: process scope, backend mpi (not honoured);
 * MPI_Win_set_info of creation-time keys (clampi_backend, mpi_win_scope) changes nothing
 * reported, on a UCX and on an MPI window; mpi_win_order on an MPI window stays false,
 * on a UCX window it can change. Also a put whose target type is a transpose (MPICH's
 * transpose1: the UCX backend once took such a type for contiguous). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int me, preload, failures;

static void expect(MPI_Win win, const char *check, const char *key, const char *value) {
    if (preload) {
        MPI_Info used;
        char v[MPI_MAX_INFO_VAL + 1] = "-";
        int flag = 0;
        MPI_Win_get_info(win, &used);
        MPI_Info_get(used, key, MPI_MAX_INFO_VAL, v, &flag);
        MPI_Info_free(&used);
        if (!flag || strcmp(v, value)) {
            printf("result rank=%d check=%s %s=%s BAD (expected %s)\n", me, check, key, flag ? v : "-", value);
            failures++;
            return;
        }
    }
    printf("result rank=%d check=%s %s ok\n", me, check, key);
}

static MPI_Info info_of(const char *k1, const char *v1, const char *k2, const char *v2) {
    MPI_Info info;
    MPI_Info_create(&info);
    if (k1) MPI_Info_set(info, k1, v1);
    if (k2) MPI_Info_set(info, k2, v2);
    return info;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    preload = dlsym(RTLD_DEFAULT, "MPIX_Win_dup_with_info") != NULL;
    static int mem[64];
    int *shared = NULL, *alloc = NULL;

    MPI_Info thread = info_of("mpi_win_scope", "thread", NULL, NULL);
    MPI_Win ucx;
    MPI_Win_create(mem, sizeof mem, sizeof(int), thread, MPI_COMM_WORLD, &ucx);
    expect(ucx, "create_thread", "mpi_win_scope", "thread");
    expect(ucx, "create_thread", "clampi_backend", "ucx");

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Info both = info_of("mpi_win_scope", "thread", "clampi_backend", "ucx");
    MPI_Win shm;
    MPI_Win_allocate_shared(64 * sizeof(int), sizeof(int), both, node, &shared, &shm);
    expect(shm, "allocate_shared", "mpi_win_scope", "process");
    expect(shm, "allocate_shared", "clampi_backend", "mpi");

    /* creation-time keys: set_info changes nothing reported */
    MPI_Info back = info_of("mpi_win_scope", "process", "clampi_backend", "mpi");
    MPI_Win_set_info(ucx, back);
    expect(ucx, "set_info_on_ucx", "mpi_win_scope", "thread");
    expect(ucx, "set_info_on_ucx", "clampi_backend", "ucx");
    MPI_Win mpiwin;
    MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &alloc, &mpiwin);
    MPI_Win_set_info(mpiwin, both);
    expect(mpiwin, "set_info_on_mpi", "mpi_win_scope", "process");
    expect(mpiwin, "set_info_on_mpi", "clampi_backend", "mpi");
    MPI_Info order = info_of("mpi_win_order", "true", NULL, NULL);
    MPI_Win_set_info(mpiwin, order);
    expect(mpiwin, "order_on_mpi", "mpi_win_order", "false");
    MPI_Win_set_info(ucx, order);
    expect(ucx, "order_on_ucx", "mpi_win_order", "true");

    /* the UCX window still works: a put to the right neighbour, read back */
    int np, right, got = -1, v;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    right = (me + 1) % np;
    v = 1000 + me;
    MPI_Win_lock_all(0, ucx);
    MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, ucx);
    MPI_Win_flush_all(ucx);
    MPI_Win_unlock_all(ucx);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, ucx);
    MPI_Get(&got, 1, MPI_INT, me, 3, 1, MPI_INT, ucx);
    MPI_Win_unlock(me, ucx);
    printf("result rank=%d put_from_left=%d\n", me, got);

    /* a target type that permutes its extent (transpose: hvector of column vectors) */
    MPI_Datatype column, xpose;
    MPI_Type_vector(8, 1, 8, MPI_INT, &column);
    MPI_Type_create_hvector(8, 1, sizeof(int), column, &xpose);
    MPI_Type_commit(&xpose);
    int src[64];
    for (int i = 0; i < 64; i++) src[i] = i;
    MPI_Win_fence(0, ucx);
    if (me == 0) MPI_Put(src, 64, MPI_INT, 1, 0, 1, xpose, ucx);
    MPI_Win_fence(0, ucx);
    if (me == 1) {
        int wrong = 0;
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++) wrong += mem[i * 8 + j] != j * 8 + i;
        printf("result rank=%d transposed_put_wrong=%d\n", me, wrong);
    }
    MPI_Type_free(&column);
    MPI_Type_free(&xpose);

    MPI_Info_free(&thread);
    MPI_Info_free(&both);
    MPI_Info_free(&back);
    MPI_Info_free(&order);
    MPI_Win_free(&mpiwin);
    MPI_Win_free(&shm);
    MPI_Win_free(&ucx);
    MPI_Comm_free(&node);
    if (me == 0) printf("infocheck preload=%d failures=%d\n", preload, failures);
    MPI_Finalize();
    return 0;
}
