/* Buffered sends from several threads at once (MPI_THREAD_MULTIPLE), as MPICH's
 * threads/pt2pt/mt_bsendrecv tests do: T threads per rank, thread t sends ITER buffered
 * messages of COUNT ints with tag t to the other rank and receives as many from it, one
 * attached buffer for all. Under CLAMPI_MATCH every send packs into the attached buffer and
 * a later send reaps the ones that have left: one thread reaping while another has reserved
 * space but not yet posted its send used to test a request that did not exist yet ("Invalid
 * MPI_Request" on MPICH). Prints a "result" line per rank (the sum of what it received).
 * Usage: plain_bsend_threads [THREADS ITER COUNT] (2 ranks) */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, peer, iters, count, errors;
static pthread_mutex_t sum_lock = PTHREAD_MUTEX_INITIALIZER;
static long long sum;

static void *worker(void *arg) {
    int t = (int)(long)arg;
    int *out = malloc(sizeof(int) * (size_t)count), *in = malloc(sizeof(int) * (size_t)count);
    long long mine = 0;
    for (int i = 0; i < iters; i++) {
        for (int k = 0; k < count; k++) out[k] = rank * 1000000 + t * 10000 + i + k;
        if (MPI_Bsend(out, count, MPI_INT, peer, t, MPI_COMM_WORLD) != MPI_SUCCESS) errors++;
        if (MPI_Recv(in, count, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) errors++;
        for (int k = 0; k < count; k++) {
            if (in[k] != peer * 1000000 + t * 10000 + i + k) errors++;
            mine += in[k];
        }
    }
    pthread_mutex_lock(&sum_lock);
    sum += mine;
    pthread_mutex_unlock(&sum_lock);
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char **argv) {
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) fprintf(stderr, "FAIL: needs 2 ranks and MPI_THREAD_MULTIPLE (provided %d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int nthreads = argc > 1 ? atoi(argv[1]) : 4;
    iters = argc > 2 ? atoi(argv[2]) : 1024;
    count = argc > 3 ? atoi(argv[3]) : 1;
    peer = 1 - rank;
    int pack;
    MPI_Pack_size(count, MPI_INT, MPI_COMM_WORLD, &pack);
    /* room for every send of every thread: no send can fail for lack of space */
    int bytes = nthreads * iters * (pack + MPI_BSEND_OVERHEAD);
    char *buf = malloc((size_t)bytes);
    MPI_Buffer_attach(buf, bytes);
    pthread_t th[64];
    if (nthreads > 64) nthreads = 64;
    for (int t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    void *back;
    int back_size;
    MPI_Buffer_detach(&back, &back_size);
    if (back != buf || back_size != bytes) errors++;
    free(buf);
    printf("result rank %d threads %d iters %d count %d sum %lld errors %d\n", rank, nthreads, iters, count, sum,
           errors);
    MPI_Finalize();
    return errors != 0;
}
