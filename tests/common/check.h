/* Minimal assertion helpers shared by clampi's tests. A failed check prints where and
 * why, and the test exits non-zero (MPI tests abort the job so no rank hangs). */
#ifndef CLAMPI_TEST_CHECK_H
#define CLAMPI_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#ifdef CLAMPI_TEST_USES_MPI
#include <mpi.h>
#define CHECK_FAIL_EXIT() MPI_Abort(MPI_COMM_WORLD, 1)
#else
#define CHECK_FAIL_EXIT() exit(1)
#endif

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            CHECK_FAIL_EXIT();                                                       \
        }                                                                            \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                                         \
    do {                                                                                                           \
        long long _a = (long long)(a), _b = (long long)(b);                                                        \
        if (_a != _b) {                                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a, #b, _a, _b); \
            CHECK_FAIL_EXIT();                                                                                     \
        }                                                                                                          \
    } while (0)

#endif
