/* Windows left to MPI_Finalize (MPI allows it): an allocated, a created and a dynamic
 * window with memory attached, never freed. An MPI_COMM_SELF attribute the program sets
 * right after MPI_Init, before making them, reads every window from its right neighbour in
 * its delete callback, which MPI runs inside MPI_Finalize: the windows must still work
 * there, and MPI_Finalize must then return on every rank. Under the preload with
 * CLAMPI_BACKEND=ucx the windows are on UCX, and clampi frees them in its own step of
 * MPI_Finalize, whose attribute it set inside MPI_Init, so MPI deletes it after the
 * program's (newest first; services/finalize.h). */
#include <stdint.h>
#include <stdlib.h>

#include "plain_check.h"

#define N 64
static int me, np;
static MPI_Win win[3];
static int *mem[3];
static MPI_Aint dyn_addr[64];

static int read_all(MPI_Comm comm, int key, void *val, void *extra) {
    (void)comm, (void)key, (void)val, (void)extra;
    const int right = (me + 1) % np;
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        int got[N];
        MPI_Aint disp = k == 2 ? dyn_addr[right] : 0;
        CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win[k]));
        CHECK(MPI_Get(got, N, MPI_INT, right, disp, N, MPI_INT, win[k]));
        CHECK(MPI_Win_unlock(right, win[k]));
        for (int i = 0; i < N; i++) ok &= got[i] == 1000 * k + 100 * right + i;
    }
    printf("result finalize_reads rank=%d ok=%d\n", me, ok);
    fflush(stdout);
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int key;
    CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, read_all, &key, NULL));
    CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL));
    CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem[0], &win[0]));
    mem[1] = malloc(N * sizeof(int));
    CHECK(MPI_Win_create(mem[1], N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win[1]));
    mem[2] = malloc(N * sizeof(int));
    CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win[2]));
    CHECK(MPI_Win_attach(win[2], mem[2], N * sizeof(int)));
    const char *names[3] = {"left_allocated", "left_created", "left_dynamic"};
    for (int k = 0; k < 3; k++) {
        CHECK(MPI_Win_set_name(win[k], names[k]));
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win[k]));
        for (int i = 0; i < N; i++) mem[k][i] = 1000 * k + 100 * me + i;
        CHECK(MPI_Win_unlock(me, win[k]));
    }
    MPI_Aint mine;
    CHECK(MPI_Get_address(mem[2], &mine));
    CHECK(MPI_Allgather(&mine, 1, MPI_AINT, dyn_addr, 1, MPI_AINT, MPI_COMM_WORLD));
    CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every window filled */
    printf("result left rank=%d windows=3\n", me);
    return MPI_Finalize();
}
