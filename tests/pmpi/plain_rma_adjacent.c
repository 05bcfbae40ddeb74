/* Plain MPI (no clampi calls): accesses that run over two adjacent attached regions of a
 * dynamic window, as MPICH's win_dynamic_rma_flush_get does (it attaches the two halves of
 * one array separately, then puts, accumulates and gets across the middle). MPI does not
 * forbid it and both MPIs accept it; clampi's UCX backend once answered MPI_ERR_RMA_RANGE.
 * Every rank attaches the halves [0, H) and [H, 2H) of an int64 array and, in a
 * passive-target epoch on its right neighbour, issues put, accumulate, get_accumulate and
 * get across the middle, contiguous and with a vector type, then fetch_and_op and
 * compare_and_swap on the two elements beside the boundary and a 4-element accumulate and
 * get_accumulate across it (UCX atomics with mpi_assert_accumulate_intrinsic). Prints "result" lines that
 * run_preload.sh requires to be identical plainly and preloaded.
 * Usage: plain_rma_adjacent H */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int me, np;

#include "plain_check.h"

static uint64_t hash = 1469598103934665603ull;
static void fold(int64_t v) {
    hash ^= (uint64_t)v;
    hash *= 1099511628211ull;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int H = argc > 1 ? atoi(argv[1]) : 64;
    const int t = (me + 1) % np, from = (me + np - 1) % np;
    int64_t *mem = calloc(2 * (size_t)H, sizeof *mem);
    int64_t *src = malloc(2 * (size_t)H * sizeof *src), *got = calloc(2 * (size_t)H, sizeof *got);
    MPI_Win win;
    CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(MPI_Win_attach(win, mem, (MPI_Aint)H * sizeof *mem));
    CHECK(MPI_Win_attach(win, mem + H, (MPI_Aint)H * sizeof *mem));
    MPI_Aint mine, base;
    MPI_Get_address(mem, &mine);
    CHECK(MPI_Sendrecv(&mine, 1, MPI_AINT, from, 0, &base, 1, MPI_AINT, t, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
#define AT(i) MPI_Aint_add(base, (MPI_Aint)(i) * (MPI_Aint)sizeof(int64_t))
    MPI_Datatype every_other;
    CHECK(MPI_Type_vector(H / 2, 1, 2, MPI_INT64_T, &every_other));
    CHECK(MPI_Type_commit(&every_other));

    CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    for (int i = 0; i < 2 * H; i++) src[i] = 1000 * me + i + 1;
    CHECK(MPI_Put(src, H, MPI_INT64_T, t, AT(H / 2), H, MPI_INT64_T, win));
    CHECK(MPI_Win_flush(t, win));
    CHECK(MPI_Accumulate(src, H, MPI_INT64_T, t, AT(H / 4), H, MPI_INT64_T, MPI_SUM, win));
    CHECK(MPI_Win_flush(t, win));
    CHECK(MPI_Get_accumulate(src, H, MPI_INT64_T, got, H, MPI_INT64_T, t, AT(H / 2 + 3), H, MPI_INT64_T, MPI_SUM, win));
    CHECK(MPI_Win_flush(t, win));
    for (int i = 0; i < H; i++) fold(got[i]);
    /* vector target: every other element of [H/2, 3H/2) */
    CHECK(MPI_Put(src + H, H / 2, MPI_INT64_T, t, AT(H / 2 + 1), 1, every_other, win));
    CHECK(MPI_Win_flush(t, win));
    CHECK(MPI_Accumulate(src, H / 2, MPI_INT64_T, t, AT(H / 2), 1, every_other, MPI_SUM, win));
    CHECK(MPI_Win_flush(t, win));
    int64_t one = 7, old = 0, cmp = 0;
    CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, AT(H - 1), MPI_SUM, win));
    CHECK(MPI_Win_flush(t, win));
    fold(old);
    CHECK(MPI_Get(&cmp, 1, MPI_INT64_T, t, AT(H), 1, MPI_INT64_T, win));
    CHECK(MPI_Win_flush(t, win));
    CHECK(MPI_Compare_and_swap(&one, &cmp, &old, MPI_INT64_T, t, AT(H), win));
    CHECK(MPI_Win_flush(t, win));
    fold(old);
    /* a few elements on both sides of the boundary (what UCX atomics take, at most 8) */
    CHECK(MPI_Accumulate(src, 4, MPI_INT64_T, t, AT(H - 2), 4, MPI_INT64_T, MPI_SUM, win));
    CHECK(MPI_Win_flush(t, win));
    CHECK(MPI_Get_accumulate(src, 4, MPI_INT64_T, got, 4, MPI_INT64_T, t, AT(H - 1), 4, MPI_INT64_T, MPI_BXOR, win));
    CHECK(MPI_Win_flush(t, win));
    for (int i = 0; i < 4; i++) fold(got[i]);
    CHECK(MPI_Get(got, 2 * H, MPI_INT64_T, t, AT(0), 2 * H, MPI_INT64_T, win));
    CHECK(MPI_Win_flush(t, win));
    for (int i = 0; i < 2 * H; i++) fold(got[i]);
    CHECK(MPI_Get(got, H / 2, MPI_INT64_T, t, AT(H / 2), 1, every_other, win));
    CHECK(MPI_Win_unlock(t, win));
    for (int i = 0; i < H / 2; i++) fold(got[i]);
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    printf("result rank=%d half=%d fetched=%016llx\n", me, H, (unsigned long long)hash);
    hash = 1469598103934665603ull;
    CHECK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    for (int i = 0; i < 2 * H; i++) fold(mem[i]);
    CHECK(MPI_Win_unlock(me, win));
    printf("result rank=%d window=%016llx\n", me, (unsigned long long)hash);
    fflush(stdout);
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(MPI_Type_free(&every_other));
    CHECK(MPI_Win_detach(win, mem));
    CHECK(MPI_Win_detach(win, mem + H));
    CHECK(MPI_Win_free(&win));
    free(mem), free(src), free(got);
    MPI_Finalize();
    return 0;
}
