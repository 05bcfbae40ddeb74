/* What freeing a window costs in collectives: N windows (MPI_Win_allocate, 4 KiB), each
 * given one put and a flush under lock_all, then freed; the calls in MPI_Win_free counted by
 * tests/support/count_collectives.c preloaded after clampi. On a ucx-backend window (info
 * clampi_backend=ucx) the free flushes and meets the others once (the quiesce: a failure is
 * raised on a window that stays whole), then closes the endpoints between two more barriers;
 * the MPI window's own free synchronizes inside MPI, uncounted. Every process must make the
 * same calls: with "dup", the last rank alone keeps a duplicate of each window
 * (MPIX_Win_dup_with_info, local) that the parent's free takes with it.
 * Usage: plain_win_free_cost MAX_COLLECTIVES [dup] (per MPI_Win_free); without the counting
 * library only the program runs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*counts_fn)(unsigned long *comm_makes, unsigned long *collectives);
typedef int (*dup_fn)(MPI_Win win, MPI_Info info, MPI_Win *newwin);
#define N 20

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    counts_fn counts = (counts_fn)dlsym(RTLD_DEFAULT, "clampi_test_collective_counts");
    dup_fn dup = (dup_fn)dlsym(RTLD_DEFAULT, "MPIX_Win_dup_with_info");
    const int keep_dup = argc > 2 && strcmp(argv[2], "dup") == 0 && dup && rank == size - 1;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    unsigned long total = 0;
    for (int i = 0; i < N; i++) {
        int *base;
        MPI_Win win;
        MPI_Win_allocate(4096, sizeof(int), info, MPI_COMM_WORLD, &base, &win);
        if (counts) { /* under clampi: the window must be a ucx-backend one, or nothing is measured */
            MPI_Info used;
            char value[16] = "";
            int flag = 0;
            MPI_Win_get_info(win, &used);
            MPI_Info_get(used, "clampi_backend", sizeof value - 1, value, &flag);
            MPI_Info_free(&used);
            if (!flag || strcmp(value, "ucx") != 0) {
                printf("FAIL: rank %d window %d is not a ucx-backend window (clampi_backend=%s)\n", rank, i,
                       flag ? value : "unset");
                bad = 1;
            }
        }
        MPI_Win_lock_all(0, win);
        int v = rank * 1000 + i, peer = (rank + 1) % size;
        MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, win);
        MPI_Win_flush(peer, win);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        int from = (rank + size - 1) % size;
        if (base[0] != from * 1000 + i) {
            printf("FAIL: rank %d window %d holds %d, not %d\n", rank, i, base[0], from * 1000 + i);
            bad = 1;
        }
        MPI_Win child;
        if (keep_dup && dup(win, MPI_INFO_NULL, &child) != MPI_SUCCESS) {
            printf("FAIL: rank %d: MPIX_Win_dup_with_info\n", rank);
            bad = 1;
        }
        unsigned long m0 = 0, o0 = 0, m1 = 0, o1 = 0;
        if (counts) counts(&m0, &o0);
        MPI_Win_free(&win);
        if (counts) counts(&m1, &o1);
        total += (m1 - m0) + (o1 - o0);
    }
    MPI_Info_free(&info);
    unsigned long *all = malloc(sizeof *all * (size_t)size);
    MPI_Allgather(&total, 1, MPI_UNSIGNED_LONG, all, 1, MPI_UNSIGNED_LONG, MPI_COMM_WORLD);
    for (int r = 1; r < size; r++)
        if (rank == 0 && all[r] != all[0]) {
            printf("FAIL: rank %d made %lu collective calls in its frees, rank 0 %lu\n", r, all[r], all[0]);
            bad = 1;
        }
    free(all);
    if (counts && rank == 0) {
        double per_free = (double)total / N;
        printf("win_free_cost: per MPI_Win_free %.2f collective calls\n", per_free);
        if (argc > 1 && per_free > atof(argv[1])) {
            printf("FAIL: more than %s collective calls per MPI_Win_free\n", argv[1]);
            bad = 1;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf(bad ? "win_free_cost: FAIL\n" : "win_free_cost: ok%s\n", counts ? "" : " (not counted)");
    MPI_Finalize();
    return bad;
}
