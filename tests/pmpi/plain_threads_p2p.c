/* MPI_THREAD_MULTIPLE point-to-point, a plain MPI program: NT threads per rank exchange
 * messages around the ring at the same time, each thread on its own tag of MPI_COMM_WORLD
 * (nonblocking, wildcard source) and on its own communicator (blocking, synchronous and
 * probed). Every thread prints a checksum of what it received as a "result" line, so a run
 * under the preload with CLAMPI_MATCH must print exactly what the plain run prints.
 *   plain_threads_p2p [rounds] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 4
static int rank, size, rounds;
static MPI_Comm comms[NT];

static void *worker(void *arg) {
    int t = (int)(long)arg, peer = (rank + 1) % size, src = (rank + size - 1) % size;
    unsigned long sum = 0;
    int sbuf[64], rbuf[64];
    for (int i = 0; i < rounds; i++) {
        int n = 1 + (i * 7 + t) % 64;
        for (int k = 0; k < n; k++) sbuf[k] = rank * 1000000 + t * 10000 + i * 100 + k;
        MPI_Request q[2];
        MPI_Status st[2];
        MPI_Irecv(rbuf, 64, MPI_INT, MPI_ANY_SOURCE, 100 + t, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(sbuf, n, MPI_INT, peer, 100 + t, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, st);
        int cnt;
        MPI_Get_count(&st[0], MPI_INT, &cnt);
        for (int k = 0; k < cnt; k++) sum = sum * 31 + (unsigned)rbuf[k];
        sum += (unsigned long)st[0].MPI_SOURCE * 7;
        /* the thread's own communicator: blocking, alternating order by rank parity */
        MPI_Comm c = comms[t];
        if (rank % 2 == 0) {
            MPI_Ssend(sbuf, n, MPI_INT, peer, i, c);
            MPI_Status ps;
            MPI_Probe(src, MPI_ANY_TAG, c, &ps);
            MPI_Get_count(&ps, MPI_INT, &cnt);
            MPI_Recv(rbuf, cnt, MPI_INT, src, ps.MPI_TAG, c, MPI_STATUS_IGNORE);
        } else {
            MPI_Status ps;
            MPI_Probe(src, MPI_ANY_TAG, c, &ps);
            MPI_Get_count(&ps, MPI_INT, &cnt);
            MPI_Recv(rbuf, cnt, MPI_INT, src, ps.MPI_TAG, c, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, n, MPI_INT, peer, i, c);
        }
        for (int k = 0; k < cnt; k++) sum = sum * 17 + (unsigned)rbuf[k];
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
    for (int t = 0; t < NT; t++) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++) pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++) MPI_Comm_free(&comms[t]);
    MPI_Finalize();
    return 0;
}
