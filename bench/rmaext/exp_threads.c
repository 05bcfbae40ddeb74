/* The threaded experiments' run: rank 0 starts T threads on body (each gets its exp_thread,
 * waits at the start barrier after its warm-up and records its elapsed time), rank 1 waits in
 * the window's barrier. Returns the mean microseconds per operation over the threads. */
#include <stdlib.h>

#include "exp.h"

double exp_threads_run(bwin *w, int threads, int size, int iters, int style, int rank, void *(*body)(void *)) {
    double lat = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        pthread_t th[64];
        exp_thread args[64];
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, (unsigned)threads);
        for (int t = 0; t < threads; t++) {
            args[t] = (exp_thread){.w = w, .tid = t, .size = size, .iters = iters, .style = style, .start = &start};
            pthread_create(&th[t], NULL, body, &args[t]);
        }
        for (int t = 0; t < threads; t++) {
            pthread_join(th[t], NULL);
            lat += args[t].elapsed / iters * 1e6;
        }
        pthread_barrier_destroy(&start);
        lat /= threads;
    }
    bw_barrier(w);
    return lat;
}
