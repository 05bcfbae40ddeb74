/* Ordered puts as a plain MPI program writes them (issue workload, no clampi calls): rank 0
 * streams N x (data put, flag put) to rank 1 in one passive epoch on an MPI_Win_allocate
 * window, then one MPI_Win_flush; the target checks the last flag and every data slot.
 *   order_stream MODE N SIZE
 *   MODE  put_flush  a flush after every put (how a program orders without mpi_win_order)
 *         ordered    info mpi_win_order=true, one flush at the end
 *         unordered  info mpi_win_order=false, one flush at the end (the bound)
 * With KEYS in the environment (e.g. ORDER_STREAM_KEYS=clampi_backend=ucx) those keys are
 * set on the window's info too, so under the preload clampi's UCX window serves it.
 * ORDER_STREAM_WIN=create: the window is MPI_Win_create over malloc memory (default
 * allocate: MPI_Win_allocate).
 * Prints: order_stream win=W mode=M n=N size=S us_per_put=X check=ok */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 4 || np != 2) {
        if (me == 0) fprintf(stderr, "usage (2 ranks): order_stream put_flush|ordered|unordered N SIZE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *mode = argv[1];
    const int n = atoi(argv[2]), size = atoi(argv[3]);
    const int flush_each = !strcmp(mode, "put_flush"), ordered = !strcmp(mode, "ordered");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_win_order", ordered ? "true" : "false");
    const char *keys = getenv("ORDER_STREAM_KEYS");
    if (keys && *keys) {
        char *dup = strdup(keys), *save = NULL;
        for (char *kv = strtok_r(dup, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(kv, '=');
            if (eq) *eq = 0, MPI_Info_set(info, kv, eq + 1);
        }
        free(dup);
    }
    /* n data slots of SIZE bytes, then one 8-byte flag; a multiple of 64 bytes, because
     * MPICH 4.0 misplaces a shared-memory window's targets after a segment that is not */
    const MPI_Aint bytes = ((MPI_Aint)n * size + 8 + 63) & ~(MPI_Aint)63;
    unsigned char *base;
    MPI_Win win;
    const char *kind = getenv("ORDER_STREAM_WIN");
    const int create = kind && !strcmp(kind, "create");
    if (create) {
        base = malloc((size_t)bytes);
        MPI_Win_create(base, bytes, 1, info, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, &base, &win);
    }
    MPI_Info_free(&info);
    memset(base, 0, (size_t)bytes);
    unsigned char *src = malloc((size_t)n * size);
    long long *flags = malloc((size_t)n * sizeof *flags);
    for (long long i = 0; i < (long long)n * size; i++) src[i] = (unsigned char)(i * 7 + 1);
    for (int i = 0; i < n; i++) flags[i] = i + 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = 0;
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            MPI_Put(src + (size_t)i * size, size, MPI_BYTE, 1, (MPI_Aint)i * size, size, MPI_BYTE, win);
            if (flush_each) MPI_Win_flush(1, win);
            MPI_Put(&flags[i], 8, MPI_BYTE, 1, (MPI_Aint)n * size, 8, MPI_BYTE, win);
            if (flush_each) MPI_Win_flush(1, win);
        }
        MPI_Win_flush(1, win);
        t = MPI_Wtime() - t0;
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    if (me == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        long long last;
        memcpy(&last, base + (size_t)n * size, 8);
        bad = last != n || memcmp(base, src, (size_t)n * size) != 0;
        MPI_Win_unlock(1, win);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("order_stream win=%s mode=%s n=%d size=%d us_per_put=%.3f check=%s\n", create ? "create" : "allocate",
               mode, n, size, t * 1e6 / (2.0 * n), bad ? "WRONG" : "ok");
    MPI_Win_free(&win);
    if (create) free(base);
    free(src);
    free(flags);
    MPI_Finalize();
    return bad;
}
