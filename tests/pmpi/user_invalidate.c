/* An MPI program with one clampi call: CMPI_Invalidate(MPI_Win) ends the read-only phase
 * of a window the preload caches in user-defined mode (CLAMPI_WINDOW_MODES=tree:user_defined).
 * Without the preload CMPI_Invalidate does nothing and the results are the same.
 * Usage: user_invalidate [PHASES] */
#include <clampi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 128

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np, phases = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int *mem;
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_name(win, "tree");
    long long sum = 0;
    for (int ph = 0; ph < phases; ph++) {
        /* write phase: each rank updates its own memory */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win);
        for (int i = 0; i < N; i++) mem[i] = me * 1000 + i + ph * 7;
        MPI_Win_unlock(me, win);
        MPI_Barrier(MPI_COMM_WORLD);
        /* read-only phase: several epochs read the same items (cached after the first) */
        for (int ep = 0; ep < 3; ep++) {
            MPI_Win_lock_all(0, win);
            for (int t = 0; t < np; t++) {
                int buf[N];
                for (int i = 0; i < N; i += 8) MPI_Get(&buf[i], 8, MPI_INT, t, i, 8, MPI_INT, win);
                MPI_Win_flush(t, win);
                for (int i = 0; i < N; i++) sum += buf[i] * (long long)(ep + 1);
            }
            MPI_Win_unlock_all(win);
        }
        CMPI_Invalidate(win); /* the window is about to change */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    printf("result rank=%d sum=%lld\n", me, sum);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
