/* MPI_THREAD_MULTIPLE communicator creation, a plain MPI program: NT threads per rank each
 * duplicate, split and free communicators made from their own parent at the same time as
 * the others (legal: collectives on different communicators), each new communicator
 * carrying a ring exchange. Every thread prints a checksum of what it received as a
 * "result" line, so a run under the preload with CLAMPI_MATCH must print what the plain run
 * prints (and return: enabling two communicators at once on two processes must not wait for
 * each other).
 *   plain_threads_comm_create [rounds] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 3
static int rank, size, rounds;
static MPI_Comm parents[NT];

static unsigned long ring(MPI_Comm c, int t, int i, unsigned long sum) {
    int r, n, peer, src, sbuf[8], rbuf[8];
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    peer = (r + 1) % n;
    src = (r + n - 1) % n;
    for (int k = 0; k < 8; k++) sbuf[k] = rank * 100000 + t * 1000 + i * 10 + k;
    MPI_Sendrecv(sbuf, 8, MPI_INT, peer, i, rbuf, 8, MPI_INT, src, i, c, MPI_STATUS_IGNORE);
    for (int k = 0; k < 8; k++) sum = sum * 31 + (unsigned)rbuf[k];
    return sum * 7 + (unsigned)n;
}

static void *worker(void *arg) {
    int t = (int)(long)arg;
    unsigned long sum = 0;
    for (int i = 0; i < rounds; i++) {
        MPI_Comm c;
        if ((i + t) % 3 == 2)
            MPI_Comm_split(parents[t], rank % 2, size - rank, &c);
        else
            MPI_Comm_dup(parents[t], &c);
        sum = ring(c, t, i, sum);
        MPI_Comm_free(&c);
    }
    printf("result rank=%d thread=%d sum=%lu\n", rank, t, sum);
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rounds = argc > 1 ? atoi(argv[1]) : 200;
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("result rank=%d no_thread_multiple\n", rank);
        MPI_Finalize();
        return 0;
    }
    for (int t = 0; t < NT; t++) MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++) pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++) MPI_Comm_free(&parents[t]);
    MPI_Finalize();
    return 0;
}
