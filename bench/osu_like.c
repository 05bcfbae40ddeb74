/* The OSU Micro-Benchmarks' one-sided patterns as a plain MPI program (no clampi calls):
 * bench/run_osu_like.sh runs it plainly and with LD_PRELOAD=libclampi_pmpi.so, side by
 * side, and counts instructions with callgrind.
 *
 *   osu_like PATTERN WIN SYNC SIZE ITERS      np = 2: rank 0 is the origin, rank 1 the target
 *   PATTERN  get_bw       a window of 64 gets to consecutive target addresses, then the sync
 *                         (osu_get_bw up to OMB 5.x)
 *            get_bw_same  a window of 64 gets of the same target bytes, then the sync
 *                         (osu_get_bw in newer OMB releases: every get reads disp 0)
 *            get_lat      one get, then the sync (osu_get_latency)
 *            put_bw, put_lat, acc_lat, get_acc_lat, fop_lat, cas_lat
 *   WIN      create | allocate | dynamic
 *   SYNC     flush | flush_local | lock | lock_all | fence | pscw
 *            (flush, flush_local: one lock for the whole run, the flush ends each
 *            iteration; lock: lock ... unlock per iteration; lock_all: lock_all ...
 *            unlock_all per iteration; fence, pscw: one access epoch per iteration)
 * Under valgrind --tool=callgrind --collect-atstart=no only rank 0's timed loop is counted.
 * Output (rank 0): "osu_like pattern=... win=... sync=... size=... iters=... us_per_iter=..." */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#define WINDOW 64

enum sync_kind { S_FLUSH, S_FLUSH_LOCAL, S_LOCK, S_LOCK_ALL, S_FENCE, S_PSCW };
static const char *sync_names[] = {"flush", "flush_local", "lock", "lock_all", "fence", "pscw"};

static MPI_Win win;
static MPI_Group peer;
static enum sync_kind sync_kind;
static int me;

/* Opening and closing an access epoch at the origin (rank 0), and the target's part of
 * active-target synchronization (rank 1). */
static void epoch_open(void) {
    if (sync_kind == S_LOCK)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    else if (sync_kind == S_LOCK_ALL)
        MPI_Win_lock_all(0, win);
    else if (sync_kind == S_FENCE)
        MPI_Win_fence(0, win);
    else if (sync_kind == S_PSCW)
        MPI_Win_start(peer, 0, win);
}
static void epoch_close(void) {
    switch (sync_kind) {
    case S_FLUSH: MPI_Win_flush(1, win); break;
    case S_FLUSH_LOCAL: MPI_Win_flush_local(1, win); break;
    case S_LOCK: MPI_Win_unlock(1, win); break;
    case S_LOCK_ALL: MPI_Win_unlock_all(win); break;
    case S_FENCE: MPI_Win_fence(0, win); break;
    case S_PSCW: MPI_Win_complete(win); break;
    }
}
static void target_epoch(void) {
    if (sync_kind == S_FENCE) {
        MPI_Win_fence(0, win);
        MPI_Win_fence(0, win);
    } else if (sync_kind == S_PSCW) {
        MPI_Win_post(peer, 0, win);
        MPI_Win_wait(win);
    }
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: osu_like PATTERN create|allocate|dynamic SYNC SIZE ITERS\n");
        return 2;
    }
    const char *pattern = argv[1], *kind = argv[2];
    int size = atoi(argv[4]), iters = atoi(argv[5]);
    for (int i = 0; i < 6; i++)
        if (!strcmp(argv[3], sync_names[i])) sync_kind = (enum sync_kind)i;
    MPI_Init(&argc, &argv);
    int np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2 || size < 8 || iters < 1) {
        if (me == 0) fprintf(stderr, "osu_like: needs np = 2, SIZE >= 8, ITERS >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const MPI_Aint bytes = (MPI_Aint)size * WINDOW;
    char *base = NULL, *local = malloc(bytes), *result = calloc(1, bytes);
    MPI_Aint disp0 = 0;
    if (!strcmp(kind, "allocate")) {
        MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    } else {
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &base);
        if (!strcmp(kind, "create")) {
            MPI_Win_create(base, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        } else {
            MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
            MPI_Win_attach(win, base, bytes);
            MPI_Aint mine;
            MPI_Get_address(base, &mine);
            MPI_Aint all[2];
            MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
            disp0 = all[1];
        }
    }
    memset(base, me + 1, bytes);
    memset(local, 7, bytes);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int other = 1 - me;
    MPI_Group_incl(world, 1, &other, &peer);
    MPI_Barrier(MPI_COMM_WORLD);

    const int bw = strstr(pattern, "_bw") != NULL, same = !strcmp(pattern, "get_bw_same");
    const int n = bw ? WINDOW : 1, warmup = 100; /* OSU: 100 skipped iterations (small sizes) */
    const int passive = sync_kind == S_FLUSH || sync_kind == S_FLUSH_LOCAL;
    double t0 = 0;
    long long check = 0;
    if (me == 0) {
        if (passive) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (int it = -warmup; it < iters; it++) {
            if (it == 0) {
                t0 = MPI_Wtime();
                CALLGRIND_TOGGLE_COLLECT;
            }
            epoch_open();
            for (int j = 0; j < n; j++) {
                MPI_Aint disp = disp0 + (same ? 0 : (MPI_Aint)j * size);
                char *o = local + (size_t)j * size, *r = result + (size_t)j * size;
                if (!strncmp(pattern, "get_", 4))
                    MPI_Get(r, size, MPI_CHAR, 1, disp, size, MPI_CHAR, win);
                else if (!strncmp(pattern, "put_", 4))
                    MPI_Put(o, size, MPI_CHAR, 1, disp, size, MPI_CHAR, win);
                else if (!strcmp(pattern, "acc_lat"))
                    MPI_Accumulate(o, size / 8, MPI_LONG_LONG, 1, disp, size / 8, MPI_LONG_LONG, MPI_SUM, win);
                else if (!strcmp(pattern, "get_acc_lat"))
                    MPI_Get_accumulate(o, size / 8, MPI_LONG_LONG, r, size / 8, MPI_LONG_LONG, 1, disp, size / 8,
                                       MPI_LONG_LONG, MPI_SUM, win);
                else if (!strcmp(pattern, "fop_lat"))
                    MPI_Fetch_and_op(o, r, MPI_LONG_LONG, 1, disp, MPI_SUM, win);
                else if (!strcmp(pattern, "cas_lat"))
                    MPI_Compare_and_swap(o, r, r + 8, MPI_INT, 1, disp, win);
            }
            epoch_close();
        }
        CALLGRIND_TOGGLE_COLLECT;
        double t = MPI_Wtime() - t0;
        if (passive) MPI_Win_unlock(1, win);
        for (MPI_Aint i = 0; i < bytes; i++) check += result[i];
        printf("osu_like pattern=%s win=%s sync=%s size=%d iters=%d us_per_iter=%.4f check=%lld\n", pattern, kind,
               sync_names[sync_kind], size, iters, t * 1e6 / iters, check);
        fflush(stdout);
    } else {
        for (int it = -warmup; it < iters; it++) target_epoch();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(kind, "dynamic")) MPI_Win_detach(win, base);
    MPI_Win_free(&win);
    if (strcmp(kind, "allocate")) MPI_Free_mem(base);
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    free(local);
    free(result);
    MPI_Finalize();
    return 0;
}
