/* Plain MPI program (no clampi calls), MPI_THREAD_MULTIPLE: T threads per rank read a
 * read-only table named "graph" from every rank with MPI_Get, flushing and re-reading,
 * while one thread also writes (MPI_Put + flush) to a second, read-write window.
 * Usage: plain_threads THREADS ITERS. Prints deterministic "result" lines. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 512
static int me, np, nthreads = 4, iters = 50;
static MPI_Win graph, scratch;
static long long sums[64];

static void *reader(void *arg) {
    int id = (int)(long)arg;
    long long sum = 0;
    for (int it = 0; it < iters; it++) {
        int t = (id + it) % np;
        int buf[16];
        for (int k = 0; k < 4; k++) {
            int disp = ((id * 37 + it * 11 + k) % (N / 16)) * 16;
            MPI_Get(buf, 16, MPI_INT, t, disp, 16, MPI_INT, graph);
            MPI_Win_flush(t, graph);
            for (int i = 0; i < 16; i++) sum += buf[i];
        }
        if (id == 0 && it % 5 == 0) { /* writes elsewhere, concurrently with the reads */
            int v = it;
            MPI_Put(&v, 1, MPI_INT, (me + 1) % np, me, 1, MPI_INT, scratch);
            MPI_Win_flush_all(scratch);
        }
        if (id == 1 && it % 7 == 0) MPI_Win_flush_all(graph);
    }
    sums[id] = sum;
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) {
        printf("result skipped=no_thread_multiple\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc > 1) nthreads = atoi(argv[1]);
    if (argc > 2) iters = atoi(argv[2]);
    if (nthreads > 64) nthreads = 64;
    int *mem, *smem;
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &graph);
    MPI_Win_set_name(graph, "graph");
    MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &smem, &scratch);
    for (int i = 0; i < N; i++) mem[i] = me * 1000 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, graph);
    MPI_Win_lock_all(0, scratch);
    pthread_t th[64];
    for (long i = 0; i < nthreads; i++) pthread_create(&th[i], NULL, reader, (void *)i);
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    MPI_Win_unlock_all(scratch);
    MPI_Win_unlock_all(graph);
    long long total = 0;
    for (int i = 0; i < nthreads; i++) total += sums[i];
    printf("result rank=%d sum=%lld\n", me, total);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&scratch);
    MPI_Win_free(&graph);
    MPI_Finalize();
    return 0;
}
