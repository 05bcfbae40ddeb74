/* A plain MPI program (no clampi calls) using the MPI-4 large-count RMA calls: MPI_Get_c,
 * MPI_Rget_c, MPI_Put_c, MPI_Rput_c, MPI_Accumulate_c, MPI_Raccumulate_c,
 * MPI_Get_accumulate_c, MPI_Rget_accumulate_c, MPI_Win_create_c, MPI_Win_allocate_c,
 * MPI_Win_allocate_shared_c, MPI_Win_shared_query_c. Built only when the MPI has them.
 * It checks every value it reads itself (exit 1 on a wrong one) and prints "result"
 * lines; tests/pmpi/run_preload.sh runs it plainly and preloaded (window "graph" in
 * always_cache mode) and requires the same lines, cache hits and elided flushes.
 * Usage: plain_rma_c [ITERS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 256  /* read-only ints per rank */
#define SLOT 8 /* then one slot of SLOT ints per rank, written by that rank only */
static int me, np, iters = 3, failures;

static int value(int rank, int i) { return rank * 100000 + i * 7; }
static void result(const char *what, long long v) { printf("result rank=%d %s=%lld\n", me, what, v); }
static void expect(const char *what, long long got, long long want) {
    if (got == want) return;
    fprintf(stderr, "rank %d: %s: got %lld, expected %lld\n", me, what, got, want);
    failures++;
}

#include "plain_check.h"

/* Reads target t's read-only ints with MPI_Get_c (8 at a time, every chunk twice), one
 * flush: the same values every epoch, so an always_cache window serves them from cache
 * after the first epoch and its later flushes have nothing to wait for. */
static long long read_all(MPI_Win win, int t) {
    int buf[2][N];
    for (int rep = 0; rep < 2; rep++)
        for (int i = 0; i < N; i += 8) CHECK(MPI_Get_c(&buf[rep][i], (MPI_Count)8, MPI_INT, t, i, 8, MPI_INT, win));
    CHECK(MPI_Win_flush(t, win));
    long long sum = 0;
    for (int rep = 0; rep < 2; rep++)
        for (int i = 0; i < N; i++) {
            expect("MPI_Get_c", buf[rep][i], value(t, i));
            sum += buf[rep][i];
        }
    return sum;
}

/* My slot at target t, read back with MPI_Get_c (after a write: must not be stale). */
static void read_slot(MPI_Win win, int t, int *out) {
    CHECK(MPI_Get_c(out, (MPI_Count)SLOT, MPI_INT, t, N + me * SLOT, (MPI_Count)SLOT, MPI_INT, win));
    CHECK(MPI_Win_flush(t, win));
}

static void slot_expect(const char *what, const int *got, const int *want) {
    for (int i = 0; i < SLOT; i++) expect(what, got[i], want[i]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc > 1) iters = atoi(argv[1]);
    const MPI_Aint ints = N + (MPI_Aint)np * SLOT;

    /* 1. MPI_Win_allocate_c, read-only phase, then every write call on my own slot. */
    int *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate_c(ints * (MPI_Aint)sizeof(int), (MPI_Aint)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                             &win));
    CHECK(MPI_Win_set_name(win, "graph"));
    for (MPI_Aint i = 0; i < ints; i++) mem[i] = i < N ? value(me, (int)i) : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_lock_all(0, win));
    long long sum = 0;
    for (int it = 0; it < iters; it++)
        for (int t = 0; t < np; t++) sum += read_all(win, t);
    result("get_c_sum", sum);

    const int t = (me + 1) % np;
    int want[SLOT], got[SLOT], src[SLOT], res[SLOT];
    read_slot(win, t, got); /* cached (zeros) before the writes */
    for (int i = 0; i < SLOT; i++) want[i] = 0;
    slot_expect("slot before writes", got, want);
    for (int i = 0; i < SLOT; i++) src[i] = me * 10 + i;
    CHECK(MPI_Put_c(src, (MPI_Count)SLOT, MPI_INT, t, N + me * SLOT, (MPI_Count)SLOT, MPI_INT, win));
    CHECK(MPI_Win_flush(t, win));
    read_slot(win, t, got);
    slot_expect("after MPI_Put_c", got, src);

    MPI_Request req;
    for (int i = 0; i < SLOT; i++) src[i] += 1000;
    CHECK(MPI_Rput_c(src, (MPI_Count)SLOT, MPI_INT, t, N + me * SLOT, (MPI_Count)SLOT, MPI_INT, win, &req));
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(MPI_Win_flush(t, win));
    read_slot(win, t, got);
    slot_expect("after MPI_Rput_c", got, src);

    int one[SLOT];
    for (int i = 0; i < SLOT; i++) one[i] = 1, want[i] = src[i] + 1;
    CHECK(MPI_Accumulate_c(one, (MPI_Count)SLOT, MPI_INT, t, N + me * SLOT, (MPI_Count)SLOT, MPI_INT, MPI_SUM, win));
    CHECK(MPI_Win_flush(t, win));
    read_slot(win, t, got);
    slot_expect("after MPI_Accumulate_c", got, want);

    for (int i = 0; i < SLOT; i++) want[i] += 1;
    CHECK(MPI_Raccumulate_c(one, (MPI_Count)SLOT, MPI_INT, t, N + me * SLOT, (MPI_Count)SLOT, MPI_INT, MPI_SUM, win,
                            &req));
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(MPI_Win_flush(t, win));
    read_slot(win, t, got);
    slot_expect("after MPI_Raccumulate_c", got, want);

    CHECK(MPI_Get_accumulate_c(one, (MPI_Count)SLOT, MPI_INT, res, (MPI_Count)SLOT, MPI_INT, t, N + me * SLOT,
                               (MPI_Count)SLOT, MPI_INT, MPI_SUM, win));
    CHECK(MPI_Win_flush(t, win));
    slot_expect("MPI_Get_accumulate_c result", res, want);
    for (int i = 0; i < SLOT; i++) want[i] += 1;
    read_slot(win, t, got);
    slot_expect("after MPI_Get_accumulate_c", got, want);

    CHECK(MPI_Rget_accumulate_c(one, (MPI_Count)SLOT, MPI_INT, res, (MPI_Count)SLOT, MPI_INT, t, N + me * SLOT,
                                (MPI_Count)SLOT, MPI_INT, MPI_SUM, win, &req));
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(MPI_Win_flush(t, win));
    slot_expect("MPI_Rget_accumulate_c result", res, want);
    for (int i = 0; i < SLOT; i++) want[i] += 1;
    CHECK(MPI_Rget_c(got, (MPI_Count)SLOT, MPI_INT, t, N + me * SLOT, (MPI_Count)SLOT, MPI_INT, win, &req));
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(MPI_Win_flush(t, win));
    slot_expect("MPI_Rget_c after MPI_Rget_accumulate_c", got, want);
    long long slot_sum = 0;
    for (int i = 0; i < SLOT; i++) slot_sum += got[i];
    result("slot_sum", slot_sum);
    CHECK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_free(&win));

    /* 2. MPI_Win_create_c (transparent mode), read with MPI_Get_c under fence. */
    int *base = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) base[i] = value(me, i);
    CHECK(
        MPI_Win_create_c(base, N * (MPI_Aint)sizeof(int), (MPI_Aint)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    sum = 0;
    for (int it = 0; it < iters; it++) {
        int buf[N];
        CHECK(MPI_Win_fence(0, win));
        CHECK(MPI_Get_c(buf, (MPI_Count)N, MPI_INT, t, 0, (MPI_Count)N, MPI_INT, win));
        CHECK(MPI_Win_fence(0, win));
        for (int i = 0; i < N; i++) {
            expect("MPI_Get_c on MPI_Win_create_c", buf[i], value(t, i));
            sum += buf[i];
        }
    }
    result("create_c_sum", sum);
    CHECK(MPI_Win_free(&win));
    free(base);

    /* 3. MPI_Win_allocate_shared_c on the node, MPI_Win_shared_query_c, MPI_Get_c. */
    MPI_Comm node;
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nme, nnp;
    MPI_Comm_rank(node, &nme);
    MPI_Comm_size(node, &nnp);
    int *shm;
    CHECK(MPI_Win_allocate_shared_c(N * (MPI_Aint)sizeof(int), (MPI_Aint)sizeof(int), MPI_INFO_NULL, node, &shm, &win));
    for (int i = 0; i < N; i++) shm[i] = value(nme, i);
    MPI_Barrier(node);
    const int nt = (nme + 1) % nnp;
    MPI_Aint qsize = 0, qunit = 0;
    int *qbase = NULL;
    CHECK(MPI_Win_shared_query_c(win, nt, &qsize, &qunit, &qbase));
    expect("MPI_Win_shared_query_c size", qsize, N * (long long)sizeof(int));
    expect("MPI_Win_shared_query_c disp_unit", qunit, sizeof(int));
    expect("MPI_Win_shared_query_c base", qbase[5], value(nt, 5));
    CHECK(MPI_Win_lock_all(0, win));
    int buf[N];
    CHECK(MPI_Get_c(buf, (MPI_Count)N, MPI_INT, nt, 0, (MPI_Count)N, MPI_INT, win));
    CHECK(MPI_Win_flush(nt, win));
    sum = 0;
    for (int i = 0; i < N; i++) {
        expect("MPI_Get_c on MPI_Win_allocate_shared_c", buf[i], value(nt, i));
        sum += buf[i];
    }
    result("shared_c_sum", sum - (long long)nme * 100000 * N); /* node ranks differ from world ranks */
    CHECK(MPI_Win_unlock_all(win));
    CHECK(MPI_Win_free(&win));
    MPI_Comm_free(&node);

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    result("failures", all);
    MPI_Finalize();
    return all != 0;
}
