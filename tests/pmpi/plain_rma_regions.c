/* Plain MPI (no clampi calls): a dynamic window with many attached regions (MPICH's
 * linked_list* and window_attach attach hundreds; the UCX backend once held 32 per rank).
 * Every rank attaches R regions of E int64 (separate allocations), publishes their
 * addresses, and in passive-target epochs puts into, accumulates into and gets from every
 * region of its right neighbour; then it detaches every other region, attaches R/2 new
 * ones (the table changes while the neighbour has a copy of it) and does it again.
 * Prints "result" lines (fetched values and the final contents of every region) that
 * run_preload.sh requires to be identical plainly and preloaded.
 * Usage: plain_rma_regions R */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E 8

static int me, np;

#include "plain_check.h"

static uint64_t hash = 1469598103934665603ull;
static void fold(int64_t v) {
    hash ^= (uint64_t)v;
    hash *= 1099511628211ull;
}

/* One round of operations on every region of target t (addresses in remote[]). */
static void round_on(MPI_Win win, int t, const MPI_Aint *remote, int n, int round) {
    int64_t src[E], got[E];
    CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < E; k++) src[k] = 1000000 * round + 1000 * i + k + me;
        CHECK(MPI_Put(src, E / 2, MPI_INT64_T, t, remote[i], E / 2, MPI_INT64_T, win));
        CHECK(MPI_Win_flush(t, win));
    }
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < E; k++) src[k] = i + k;
        CHECK(MPI_Accumulate(src, E, MPI_INT64_T, t, remote[i], E, MPI_INT64_T, MPI_SUM, win));
        CHECK(MPI_Win_flush(t, win));
    }
    for (int i = 0; i < n; i++) {
        CHECK(MPI_Get(got, E, MPI_INT64_T, t, remote[i], E, MPI_INT64_T, win));
        CHECK(MPI_Win_flush(t, win));
        for (int k = 0; k < E; k++) fold(got[k]);
    }
    CHECK(MPI_Win_unlock(t, win));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int R = argc > 1 ? atoi(argv[1]) : 100;
    const int t = (me + 1) % np, from = (me + np - 1) % np;
    MPI_Win win;
    CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int64_t **reg = calloc((size_t)R, sizeof *reg);
    MPI_Aint *mine = calloc((size_t)R, sizeof *mine), *remote = calloc((size_t)R, sizeof *remote);
    for (int i = 0; i < R; i++) {
        reg[i] = calloc(E, sizeof(int64_t));
        CHECK(MPI_Win_attach(win, reg[i], E * sizeof(int64_t)));
        MPI_Get_address(reg[i], &mine[i]);
    }
    /* mine -> the left neighbour (it operates on us); remote <- the right neighbour */
    CHECK(MPI_Sendrecv(mine, R, MPI_AINT, from, 0, remote, R, MPI_AINT, t, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    round_on(win, t, remote, R, 1);
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    /* every other region replaced: detached (contents kept aside), a new one attached */
    int64_t kept = 0;
    for (int i = 0; i < R; i += 2) {
        CHECK(MPI_Win_detach(win, reg[i]));
        for (int k = 0; k < E; k++) kept += reg[i][k];
        free(reg[i]);
    }
    for (int i = 0; i < R; i += 2) {
        reg[i] = calloc(E, sizeof(int64_t));
        CHECK(MPI_Win_attach(win, reg[i], E * sizeof(int64_t)));
        MPI_Get_address(reg[i], &mine[i]);
    }
    CHECK(MPI_Sendrecv(mine, R, MPI_AINT, from, 0, remote, R, MPI_AINT, t, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    round_on(win, t, remote, R, 2);
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    printf("result rank=%d regions=%d fetched=%016llx detached_sum=%lld\n", me, R, (unsigned long long)hash,
           (long long)kept);
    hash = 1469598103934665603ull;
    CHECK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    for (int i = 0; i < R; i++)
        for (int k = 0; k < E; k++) fold(reg[i][k]);
    CHECK(MPI_Win_unlock(me, win));
    printf("result rank=%d window=%016llx\n", me, (unsigned long long)hash);
    fflush(stdout);
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < R; i++) {
        CHECK(MPI_Win_detach(win, reg[i]));
        free(reg[i]);
    }
    CHECK(MPI_Win_free(&win));
    free(reg), free(mine), free(remote);
    MPI_Finalize();
    return 0;
}
