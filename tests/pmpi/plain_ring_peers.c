/* A plain MPI program that talks only to its ring neighbours: ROUNDS rounds of a 1 KiB
 * message to rank + 1 (MPI_Isend / MPI_Irecv from rank - 1, MPI_Waitall), then ROUNDS of
 * MPI_Ssend to rank + 1 (whose acknowledgement goes back to the sender), on MPI_COMM_WORLD
 * and on a duplicate of it. Under the preload with CLAMPI_MATCH on the UCX carrier, each
 * process should hold endpoints to its two neighbours only, never to every rank (the
 * CLAMPI_STATS line "clampi: msg rank=R endpoints=N"; tests/pmpi/CMakeLists.txt).
 * Usage: plain_ring_peers [ROUNDS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long long ring(MPI_Comm comm, int rounds, int sync) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[256], in[256];
    long long sum = 0;
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 256; k++) out[k] = rank * 1000 + i + k;
        MPI_Request q[2];
        MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: gcc 12 misreads MPICH's (-Wstringop-overflow) */
        MPI_Irecv(in, 256, MPI_INT, prev, i, comm, &q[0]);
        if (sync) {
            MPI_Ssend(out, 256, MPI_INT, next, i, comm);
            q[1] = MPI_REQUEST_NULL;
        } else {
            MPI_Isend(out, 256, MPI_INT, next, i, comm, &q[1]);
        }
        MPI_Waitall(2, q, st);
        for (int k = 0; k < 256; k++) sum += in[k] - (prev * 1000 + i + k) == 0 ? 1 : 1000000;
    }
    return sum;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 20, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    long long a = ring(MPI_COMM_WORLD, rounds, 0), b = ring(dup, rounds, 1), c = ring(dup, rounds, 0);
    /* 256 per round when every element arrived intact */
    printf("result rank=%d standard=%lld synchronous=%lld dup=%lld expected=%d\n", rank, a, b, c, 256 * rounds);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
