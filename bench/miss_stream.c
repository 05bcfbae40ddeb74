/* A stream of get misses, as a program that knows nothing of clampi writes it: rank 0
 * reads distinct SIZE-byte blocks of rank 1's window, each MPI_Get followed by
 * MPI_Win_flush, in a lock_all epoch; no block is read twice. Run plain and under the
 * preload with CLAMPI_MODE=always_cache (bench/run_miss_stream.sh): every get is a miss
 * there, and a miss should cost what MPI's get costs.
 * Usage: miss_stream SIZE create|allocate [GETS] -> "miss_stream SIZE MEM: T us per get+flush" */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const size_t size = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
    const char *mem = argc > 2 ? argv[2] : "create";
    const int gets = argc > 3 ? atoi(argv[3]) : 2000, reps = 3;
    const size_t bytes = (size_t)reps * gets * size;
    char *base;
    MPI_Win win;
    if (!strcmp(mem, "create")) { /* memory from malloc: the program's own */
        base = calloc(1, bytes);
        MPI_Win_create(base, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    }
    char *buf = malloc(size);
    MPI_Win_lock_all(0, win);
    double best = 1e30;
    for (int rep = 0; rep < reps; rep++) { /* the best of 3 passes, each over new blocks */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            double t = MPI_Wtime();
            for (int i = 0; i < gets; i++) {
                MPI_Get(buf, (int)size, MPI_BYTE, 1, (MPI_Aint)((size_t)(rep * gets + i) * size), (int)size, MPI_BYTE,
                        win);
                MPI_Win_flush(1, win);
            }
            t = (MPI_Wtime() - t) / gets * 1e6;
            if (t < best) best = t;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_unlock_all(win);
    if (rank == 0) printf("miss_stream %zu %s: %.2f us per get+flush\n", size, mem, best);
    MPI_Win_free(&win);
    if (!strcmp(mem, "create")) free(base);
    free(buf);
    MPI_Finalize();
    return 0;
}
