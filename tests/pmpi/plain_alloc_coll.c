/* Plain MPI program (no clampi calls): buffers from MPI_Alloc_mem, MPI_Alltoall and
 * MPI_Allgather on MPI_COMM_WORLD and on a split communicator, MPI_Free_mem. Under the
 * preload the buffers come from the shared heap and the collectives take clampi's
 * shared-memory path; the "result" lines must not change. Usage: plain_alloc_coll [ITERS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np, iters = argc > 1 ? atoi(argv[1]) : 5;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    long long sum = 0;
    for (int it = 0; it < iters; it++) {
        int blk = 1 + (it * 37) % 300;
        int *send, *recv, *mine;
        MPI_Alloc_mem((MPI_Aint)blk * np * sizeof(int), MPI_INFO_NULL, &send);
        MPI_Alloc_mem((MPI_Aint)blk * np * sizeof(int), MPI_INFO_NULL, &recv);
        mine = malloc(blk * sizeof(int)); /* a buffer outside the heap, too */
        for (int i = 0; i < blk * np; i++) send[i] = me * 1000003 + i * 31 + it;
        for (int i = 0; i < blk; i++) mine[i] = me * 7 + i + it;
        MPI_Comm c = it % 2 ? half : MPI_COMM_WORLD;
        int cn;
        MPI_Comm_size(c, &cn);
        MPI_Alltoall(send, blk, MPI_INT, recv, blk, MPI_INT, c);
        for (int i = 0; i < blk * cn; i++) sum += recv[i] * (long long)(i % 13 + 1);
        MPI_Allgather(mine, blk, MPI_INT, recv, blk, MPI_INT, c);
        for (int i = 0; i < blk * cn; i++) sum += recv[i] * (long long)(i % 11 + 1);
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, send, blk, MPI_INT, c);
        for (int i = 0; i < blk * cn; i++) sum += send[i] * (long long)(i % 7 + 1);
        free(mine);
        MPI_Free_mem(recv);
        MPI_Free_mem(send);
    }
    printf("result rank=%d sum=%lld\n", me, sum);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
