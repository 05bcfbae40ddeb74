/* The UCX windows of one communicator share one duplicate of it (src/backends/ucx/win_comm.c).
 * Eight windows over a duplicate of MPI_COMM_WORLD talk on one communicator, at slots
 * 0..7; after windows 2 and 5 are freed, the next two windows take slots 2 and 5 again.
 * The program then frees the parent communicator, and every window still works (a put to
 * the right neighbour in a fence epoch) and is freed; then a window over MPI_COMM_WORLD
 * starts at slot 0 again. Under MPI_THREAD_MULTIPLE (argv[1] "multiple") every window has
 * a communicator of its own: two threads may fence two windows at once.
 * Prints "result window_comm rank=R shared=S ok=1". */
#include <string.h>

#include "mpi_util.h"
#include "ucx_probe.h"

enum { WINDOWS = 8 };

int main(int argc, char **argv) {
    const int multiple = argc > 1 && strcmp(argv[1], "multiple") == 0;
    int provided;
    MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    CHECK(!multiple || provided == MPI_THREAD_MULTIPLE);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Info info = ucx_info();
    MPI_Comm parent;
    MPI_Comm_dup(MPI_COMM_WORLD, &parent);
    CMPI_Win w[WINDOWS];
    long *mem[WINDOWS];
    MPI_Comm comm[WINDOWS];
    int slot[WINDOWS], shared[WINDOWS];
    for (int i = 0; i < WINDOWS; i++) {
        CHECK_EQ_INT(CMPI_Win_allocate(sizeof(long), sizeof(long), info, parent, &mem[i], &w[i]), MPI_SUCCESS);
        CHECK_EQ_INT(clampi_ucx_test_comm(w[i], &comm[i], &slot[i], &shared[i]), MPI_SUCCESS);
    }
    for (int i = 0; i < WINDOWS; i++) {
        CHECK(comm[i] != parent && comm[i] != MPI_COMM_WORLD);
        if (multiple) {
            CHECK(!shared[i] && slot[i] == 0);
            for (int j = 0; j < i; j++) CHECK(comm[i] != comm[j]);
        } else {
            CHECK(shared[i] && slot[i] == i && comm[i] == comm[0]);
        }
    }
    CHECK_EQ_INT(CMPI_Win_free(&w[2]), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&w[5]), MPI_SUCCESS);
    for (int i = 2; i <= 5; i += 3) {
        CHECK_EQ_INT(CMPI_Win_allocate(sizeof(long), sizeof(long), info, parent, &mem[i], &w[i]), MPI_SUCCESS);
        CHECK_EQ_INT(clampi_ucx_test_comm(w[i], &comm[i], &slot[i], &shared[i]), MPI_SUCCESS);
        if (!multiple) CHECK(shared[i] && slot[i] == i && comm[i] == comm[0]);
    }
    MPI_Comm_free(&parent); /* the windows keep their communicator */
    const int right = (rank + 1) % n, left = (rank + n - 1) % n;
    int ok = 1;
    for (int i = 0; i < WINDOWS; i++) {
        long v = 100L * rank + i;
        CHECK_EQ_INT(CMPI_Win_fence(0, w[i]), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, w[i]), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_fence(MPI_MODE_NOSUCCEED, w[i]), MPI_SUCCESS);
        ok &= mem[i][0] == 100L * left + i;
    }
    for (int i = 0; i < WINDOWS; i++) CHECK_EQ_INT(CMPI_Win_free(&w[i]), MPI_SUCCESS);
    CMPI_Win again;
    long *m;
    MPI_Comm c;
    int s, sh;
    CHECK_EQ_INT(CMPI_Win_allocate(sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &m, &again), MPI_SUCCESS);
    CHECK_EQ_INT(clampi_ucx_test_comm(again, &c, &s, &sh), MPI_SUCCESS);
    CHECK(s == 0 && sh == !multiple);
    CHECK_EQ_INT(CMPI_Win_free(&again), MPI_SUCCESS);
    MPI_Info_free(&info);
    printf("result window_comm rank=%d shared=%d ok=%d\n", rank, !multiple, ok);
    MPI_Finalize();
    return ok ? 0 : 1;
}
