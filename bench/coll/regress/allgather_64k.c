#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int blk = argc > 1 ? atoi(argv[1]) : 65536, iters = argc > 2 ? atoi(argv[2]) : 200,
        use_alloc = argc > 3 ? atoi(argv[3]) : 0;
    char *s, *r;
    if (use_alloc) {
        MPI_Alloc_mem(blk, MPI_INFO_NULL, &s);
        MPI_Alloc_mem((MPI_Aint)blk * np, MPI_INFO_NULL, &r);
    } else {
        s = malloc(blk);
        r = malloc((size_t)blk * np);
    }
    memset(s, me, blk);
    for (int i = 0; i < 10; i++) MPI_Allgather(s, blk, MPI_BYTE, r, blk, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++) MPI_Allgather(s, blk, MPI_BYTE, r, blk, MPI_BYTE, MPI_COMM_WORLD);
    t = MPI_Wtime() - t;
    if (!me) printf("blk=%d alloc=%d us/call=%.2f\n", blk, use_alloc, t / iters * 1e6);
    MPI_Finalize();
    return 0;
}
