/* The UCX windows of one communicator share one duplicate of it (src/backends/ucx/win_comm.c).
 * Eight windows over a duplicate of MPI_COMM_WORLD talk on one communicator, at slots
 * 0..7; after windows 2 and 5 are freed, the next two windows take slots 2 and 5 again.
 * The program then frees the parent communicator, and every window still works (a put to
 * the right neighbour in a fence epoch) and is freed; then a window over MPI_COMM_WORLD
 * starts at slot 0 again. A second communicator's window is freed and made again (slot 0
 * of a new duplicate), and then freed by the program's own attribute delete callback while
 * MPI frees that communicator (a library caching its window on a communicator): clampi must
 * not delete its own attribute there; windows on a third communicator work afterwards.
 * Under MPI_THREAD_MULTIPLE (argv[1] "multiple") every window has a communicator of its
 * own: two threads may fence two windows at once.
 * Prints "result window_comm rank=R shared=S ok=1". */
#include <string.h>

#include "mpi_util.h"
#include "ucx_probe.h"

enum { WINDOWS = 8 };

static int freed_in_callback;

static int free_cached_window(MPI_Comm comm, int key, void *value, void *extra) {
    (void)comm, (void)key, (void)extra;
    freed_in_callback = CMPI_Win_free((CMPI_Win *)value) == MPI_SUCCESS;
    return MPI_SUCCESS;
}

/* A window on comm: its slot and whether it shares comm's duplicate. */
static CMPI_Win window_on(MPI_Comm comm, MPI_Info info, int *slot, int *shared) {
    CMPI_Win w;
    long *m;
    MPI_Comm c;
    CHECK_EQ_INT(CMPI_Win_allocate(sizeof(long), sizeof(long), info, comm, &m, &w), MPI_SUCCESS);
    CHECK_EQ_INT(clampi_ucx_test_comm(w, &c, slot, shared), MPI_SUCCESS);
    return w;
}

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
    int s, sh;
    CMPI_Win again = window_on(MPI_COMM_WORLD, info, &s, &sh);
    CHECK(s == 0 && sh == !multiple);
    CHECK_EQ_INT(CMPI_Win_free(&again), MPI_SUCCESS);

    MPI_Comm second, third;
    MPI_Comm_dup(MPI_COMM_WORLD, &second);
    MPI_Comm_dup(MPI_COMM_WORLD, &third);
    static CMPI_Win cached;
    cached = window_on(second, info, &s, &sh);
    CHECK_EQ_INT(CMPI_Win_free(&cached), MPI_SUCCESS);
    cached = window_on(second, info, &s, &sh); /* the record, empty, gets a duplicate again */
    CHECK(s == 0 && sh == !multiple);
    int key;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_cached_window, &key, NULL);
    MPI_Comm_set_attr(second, key, &cached);
    MPI_Comm_free(&second); /* frees the window inside the deletion of its attributes */
    CHECK(freed_in_callback);
    MPI_Comm_free_keyval(&key);
    CMPI_Win later = window_on(third, info, &s, &sh);
    CHECK(s == 0 && sh == !multiple);
    CHECK_EQ_INT(CMPI_Win_fence(0, later), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_fence(0, later), MPI_SUCCESS);
    CHECK_EQ_INT(CMPI_Win_free(&later), MPI_SUCCESS);
    MPI_Comm_free(&third);
    MPI_Info_free(&info);
    printf("result window_comm rank=%d shared=%d ok=%d\n", rank, !multiple, ok);
    MPI_Finalize();
    return ok ? 0 : 1;
}
