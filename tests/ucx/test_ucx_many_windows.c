/* Many UCX windows alive at once share the process's UCX worker: creating one more window
 * opens a handful of descriptors, not a worker's every transport interface (about 200 with
 * UCX 1.13: sockets on every network device, shared-memory segments). On WINDOWS live
 * windows, every rank puts into every window of its right neighbour with a notification
 * (CMPIX_Put_notify), windows taken in reverse order; each rank then waits for exactly one
 * notification per window and checks that its data came with it: the notification handler,
 * one per worker, finds the window by its id. Then a put and a flush_all on each window
 * (which flushes only that window's endpoints): the target reads the data as soon as a
 * message from the origin arrives.
 * argv[1]: windows (default 40); argv[2]: the most descriptors a window may add (8). */
#include <dirent.h>
#include <stdlib.h>

#include "mpi_util.h"

static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const int windows = argc > 1 ? atoi(argv[1]) : 40;
    const int max_fds_per_window = argc > 2 ? atoi(argv[2]) : 8;
    const int right = (rank + 1) % n, left = (rank + n - 1) % n;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    CMPI_Win *w = calloc((size_t)windows, sizeof *w);
    long **mem = calloc((size_t)windows, sizeof *mem);
    CHECK(w && mem);

    /* the first window creates the worker: count from the second one on */
    CHECK_EQ_INT(CMPI_Win_allocate(2 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &mem[0], &w[0]), MPI_SUCCESS);
    const int fds_before = open_fds();
    for (int i = 1; i < windows; i++)
        CHECK_EQ_INT(CMPI_Win_allocate(2 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &mem[i], &w[i]),
                     MPI_SUCCESS);
    const int added = open_fds() - fds_before;
    int most;
    MPI_Allreduce(&added, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("descriptors added by %d more windows: %d (at most %d)\n", windows - 1, most, max_fds_per_window);
    CHECK(most <= max_fds_per_window * (windows - 1));
    for (int i = 0; i < windows; i++) mem[i][0] = mem[i][1] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    for (int i = 0; i < windows; i++) CHECK_EQ_INT(CMPI_Win_lock_all(0, w[i]), MPI_SUCCESS);
    for (int i = windows - 1; i >= 0; i--) {
        long v = 1000L * rank + i;
        CHECK_EQ_INT(CMPIX_Put_notify(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, i % CMPIX_NOTIFY_MAX, w[i]), MPI_SUCCESS);
    }
    for (int i = 0; i < windows; i++) {
        MPI_Request r;
        MPI_Status st;
        CHECK_EQ_INT(CMPIX_Win_notify_request(w[i], i % CMPIX_NOTIFY_MAX, &r), MPI_SUCCESS);
        CHECK_EQ_INT(MPI_Wait(&r, &st), MPI_SUCCESS);
        CHECK_EQ_INT(st.MPI_SOURCE, left);
        CHECK_EQ_INT(st.MPI_TAG, i % CMPIX_NOTIFY_MAX);
        CHECK_EQ_INT(mem[i][0], 1000L * left + i); /* the data came before its notification */
    }
    /* no notification went to a window it was not sent on */
    for (int i = 0; i < windows; i++) {
        MPI_Request r;
        int flag;
        CHECK_EQ_INT(CMPIX_Win_notify_request(w[i], i % CMPIX_NOTIFY_MAX, &r), MPI_SUCCESS);
        CHECK_EQ_INT(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(!flag);
        CHECK_EQ_INT(MPI_Cancel(&r), MPI_SUCCESS);
        CHECK_EQ_INT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }

    for (int i = 0; i < windows; i++) {
        long v = 2000L * rank + i;
        CHECK_EQ_INT(CMPI_Put(&v, 1, MPI_LONG, right, 1, 1, MPI_LONG, w[i]), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_flush_all(w[i]), MPI_SUCCESS);
    }
    /* flushed: complete at the target, which reads once it has our message */
    int token = rank, got;
    MPI_Sendrecv(&token, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < windows; i++) CHECK_EQ_INT(mem[i][1], 2000L * left + i);
    for (int i = 0; i < windows; i++) CHECK_EQ_INT(CMPI_Win_unlock_all(w[i]), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int i = 0; i < windows; i++) CHECK_EQ_INT(CMPI_Win_free(&w[i]), MPI_SUCCESS);
    free(w);
    free(mem);
    MPI_Info_free(&info);
    if (rank == 0) printf("ok: %d live UCX windows on %d ranks\n", windows, n);
    MPI_Finalize();
    return 0;
}
