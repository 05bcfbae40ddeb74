/* A thousand windows alive at once on one communicator, as MPICH's test rma/window_creation
 * keeps them, then used and freed. They are made in turn with MPI_Win_create (over malloc
 * memory) and MPI_Win_allocate, over a duplicate of MPI_COMM_WORLD that the program frees
 * before it frees them (argv[2] 1: before their PSCW epochs too; MPI allows it, Intel MPI
 * 2021.19's own windows crash in MPI_Win_wait after it). Every window gets a put from the left neighbour in a fence epoch. Two
 * of them carry interleaved PSCW epochs between ranks 0 and 1: the target posts both, the
 * origin completes the second one first, and the target's MPI_Win_test on the first must
 * not see that completion. Under the preload with CLAMPI_BACKEND=ucx every window is on
 * UCX, and the windows of one communicator share clampi's duplicate of it: with a
 * duplicate per window, Intel MPI ran out of memory for its on-node collectives.
 * argv[1]: windows (default 1000). Prints "result many_windows rank=R windows=N ok=1". */
#include <stdlib.h>

#include "plain_check.h"

static int me, np;

/* Ranks 0 and 1: rank 1 puts into a and b, completing b first. */
static int interleaved_pscw(MPI_Comm comm, MPI_Win a, int *mem_a, MPI_Win b, int *mem_b) {
    MPI_Group world, other;
    MPI_Comm_group(comm, &world);
    int peer = 1 - me, ok = 1;
    MPI_Group_incl(world, 1, &peer, &other);
    if (me == 0) {
        CHECK(MPI_Win_post(other, 0, a));
        CHECK(MPI_Win_post(other, 0, b));
        CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 7, comm, MPI_STATUS_IGNORE)); /* b completed */
        for (int i = 0; i < 100; i++) {
            int flag = 1;
            CHECK(MPI_Win_test(a, &flag));
            if (flag) {
                printf("result pscw rank=0 first_window_ended_early=1\n");
                ok = 0;
                break;
            }
        }
        CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 8, comm));
        if (ok) CHECK(MPI_Win_wait(a));
        CHECK(MPI_Win_wait(b));
        ok &= mem_a[1] == 111 && mem_b[1] == 222;
    } else {
        int v_a = 111, v_b = 222;
        CHECK(MPI_Win_start(other, 0, b));
        CHECK(MPI_Put(&v_b, 1, MPI_INT, 0, 1, 1, MPI_INT, b));
        CHECK(MPI_Win_complete(b));
        CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, 7, comm));
        CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 8, comm, MPI_STATUS_IGNORE)); /* a tested */
        CHECK(MPI_Win_start(other, 0, a));
        CHECK(MPI_Put(&v_a, 1, MPI_INT, 0, 1, 1, MPI_INT, a));
        CHECK(MPI_Win_complete(a));
    }
    MPI_Group_free(&other);
    MPI_Group_free(&world);
    return ok;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int n = argc > 1 ? atoi(argv[1]) : 1000;
    const int free_parent_first = argc > 2 && atoi(argv[2]);
    const int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Win *win = calloc((size_t)n, sizeof *win);
    int **mem = calloc((size_t)n, sizeof *mem);
    int ok = win && mem;
    MPI_Comm comm;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    for (int i = 0; i < n && ok; i++) {
        if (i % 2 == 0) {
            mem[i] = calloc(4, sizeof(int));
            CHECK(MPI_Win_create(mem[i], 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &win[i]));
        } else {
            CHECK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &mem[i], &win[i]));
            for (int k = 0; k < 4; k++) mem[i][k] = 0;
        }
    }
    MPI_Comm pscw_comm;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &pscw_comm));
    for (int i = 0; i < n; i++) {
        int v = 10000 * me + i;
        CHECK(MPI_Win_fence(0, win[i]));
        CHECK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win[i]));
        CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win[i]));
        if (mem[i][0] != 10000 * left + i) {
            if (ok) printf("result window rank=%d index=%d got=%d expected=%d\n", me, i, mem[i][0], 10000 * left + i);
            ok = 0;
        }
    }
    if (free_parent_first) CHECK(MPI_Comm_free(&comm));
    if (np >= 2 && me < 2 && n >= 2) ok &= interleaved_pscw(pscw_comm, win[0], mem[0], win[n - 1], mem[n - 1]);
    for (int i = 0; i < n; i++) {
        CHECK(MPI_Win_free(&win[i]));
        if (i % 2 == 0) free(mem[i]);
    }
    if (!free_parent_first) CHECK(MPI_Comm_free(&comm));
    MPI_Comm_free(&pscw_comm);
    printf("result many_windows rank=%d windows=%d ok=%d\n", me, n, ok);
    free(win);
    free(mem);
    MPI_Finalize();
    return 0;
}
