/* MPICH 4.0.2 (Debian 12), no clampi: MPI_Ialltoallw with MPI_IN_PLACE gives wrong data when
 * the receive types differ between peers (here a contiguous type of rank + peer ints per
 * peer, as MPICH's own test/mpi/coll/alltoallw2 uses). The blocking MPI_Alltoallw is right.
 * Reported as pmodels/mpich issue 6404, fixed for MPICH 4.1. Open MPI 4.1.4 is right.
 *
 * clampi's workaround: on the MPI carrier with CLAMPI_MATCH_CARRIER_COLL_BYTES set (the v/w
 * collectives then run as their nonblocking forms), an in-place MPI_Alltoallw stays MPI's
 * blocking call (src/pmpi/match_progress.c); with the default (0) every collective with data
 * is blocking anyway. The test preload_match_alltoallw_in_place_blocking_np3 runs this
 * program (blocking) plainly and preloaded and compares the "result" lines.
 *
 *   mpicc.mpich mpich40_ialltoallw_in_place.c -o repro
 *   mpiexec.mpich -n 3 ./repro 1   # MPI_Ialltoallw: wrong > 0 on some rank, exits 1
 *   mpiexec.mpich -n 3 ./repro     # MPI_Alltoallw: wrong=0 everywhere, exits 0 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, nonblocking = argc > 1 && atoi(argv[1]) != 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int stride = 2 * size;
    int *buf = malloc(sizeof(int) * (size_t)(size * stride));
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * size);
    for (int i = 0; i < size * stride; i++) buf[i] = -1;
    for (int i = 0; i < size; i++) {
        for (int j = 0; j < i + rank; j++) buf[i * stride + j] = 100 * rank + 10 * i + j;
        displs[i] = i * stride * (int)sizeof(int);
        counts[i] = 1;
        MPI_Type_contiguous(i + rank, MPI_INT, &types[i]);
        MPI_Type_commit(&types[i]);
    }
    if (nonblocking) {
        MPI_Request r;
        MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, counts, displs, types, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, counts, displs, types, MPI_COMM_WORLD);
    }
    long long sum = 0;
    int wrong = 0;
    for (int i = 0; i < size; i++)
        for (int j = 0; j < i + rank; j++) {
            wrong += buf[i * stride + j] != 100 * i + 10 * rank + j;
            sum += buf[i * stride + j];
        }
    printf("result rank=%d %s in place sum=%lld wrong=%d\n", rank, nonblocking ? "MPI_Ialltoallw" : "MPI_Alltoallw",
           sum, wrong);
    for (int i = 0; i < size; i++) MPI_Type_free(&types[i]);
    free(types), free(displs), free(counts), free(buf);
    MPI_Finalize();
    return wrong != 0;
}
