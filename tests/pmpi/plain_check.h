/* CHECK(call): a failing MPI call in a plain test program prints where and aborts. The
 * including file declares `static int me` (its rank in MPI_COMM_WORLD) first. */
#ifndef CLAMPI_TESTS_PLAIN_CHECK_H
#define CLAMPI_TESTS_PLAIN_CHECK_H
#include <mpi.h>
#include <stdio.h>

#define CHECK(x)                                                                            \
    do {                                                                                    \
        int rc_ = (x);                                                                      \
        if (rc_ != MPI_SUCCESS) {                                                           \
            fprintf(stderr, "rank %d: %s failed (%d) at line %d\n", me, #x, rc_, __LINE__); \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                   \
        }                                                                                   \
    } while (0)
#endif
