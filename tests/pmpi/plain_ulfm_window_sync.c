/* ULFM (Open MPI, `mpirun --with-ft ulfm`): a window call that fails because a peer died
 * reports through the window's error handler, never through the handler its communicator
 * had when the window was made. MPI_COMM_WORLD and the window each get a counting handler
 * that returns; the last rank kills itself; rank 0's call, chosen by the argument, must fail
 * with MPIX_ERR_PROC_FAILED, its window handler called once, its communicator handler never:
 *   fence  MPI_Win_fence
 *   start  MPI_Win_start on a group of the dead rank (it never posts)
 *   free   MPI_Win_free (the window stays whole: rank 0 prints "window after_free backend=B")
 * Rank 0 prints "result ulfm_window_sync rank=0 call=X class=C win_handler=W comm_handler=K"
 * and stops there (Open MPI's MPI_Finalize after a death may hang). */
#include "plain_check.h"
#include "plain_ulfm.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int me;
#ifdef OMPI_HAVE_MPI_EXT_FTMPI
static int win_calls, comm_calls;

static void on_win(MPI_Win *win, int *code, ...) { (void)win, (void)code, win_calls++; }
static void on_comm(MPI_Comm *comm, int *code, ...) { (void)comm, (void)code, comm_calls++; }

/* The window's clampi_backend info value under the preload; "none" plainly. */
static void backend_of(MPI_Win win, char *backend, int len) {
    MPI_Info info;
    int flag = 0;
    CHECK(MPI_Win_get_info(win, &info));
    CHECK(MPI_Info_get(info, "clampi_backend", len - 1, backend, &flag));
    CHECK(MPI_Info_free(&info));
    if (!flag) strcpy(backend, "none");
}
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *call = argc > 1 ? argv[1] : "fence";
#ifdef OMPI_HAVE_MPI_EXT_FTMPI
    if (size < 2) {
        printf("result ulfm_window_sync rank=0 needs_2_ranks\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Errhandler comm_eh, win_eh;
    CHECK(MPI_Comm_create_errhandler(on_comm, &comm_eh));
    CHECK(MPI_Win_create_errhandler(on_win, &win_eh));
    CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, comm_eh));
    int *mem;
    MPI_Win win;
    CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    CHECK(MPI_Win_set_errhandler(win, win_eh));
    char backend[64];
    backend_of(win, backend, sizeof backend);
    if (me == 0) printf("window backend=%s\n", backend); /* preloaded: clampi's backend */
    CHECK(MPI_Win_fence(0, win));                        /* every process is in the window's collective state */
    CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    const int peer = size - 1;
    int go = 1;
    if (me == peer) {
        CHECK(MPI_Recv(&go, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        raise(SIGKILL);
    }
    if (me == 0) CHECK(MPI_Send(&go, 1, MPI_INT, peer, 0, MPI_COMM_WORLD));
    struct timespec moment = {0, 200 * 1000 * 1000};
    nanosleep(&moment, NULL);
    int rc = MPI_SUCCESS, cls = -1;
    if (!strcmp(call, "start")) {
        MPI_Group world, dead;
        CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
        CHECK(MPI_Group_incl(world, 1, &peer, &dead));
        rc = MPI_Win_start(dead, 0, win);
    } else if (!strcmp(call, "free")) {
        rc = MPI_Win_free(&win);
        if (rc != MPI_SUCCESS && me == 0) { /* still the window it was */
            backend_of(win, backend, sizeof backend);
            printf("window after_free backend=%s\n", backend);
        }
    } else {
        rc = MPI_Win_fence(0, win);
    }
    MPI_Error_class(rc, &cls);
    if (me == 0) {
        printf("result ulfm_window_sync rank=0 call=%s class=%s win_handler=%d comm_handler=%d\n", call,
               cls == MPIX_ERR_PROC_FAILED ? "proc_failed"
               : rc == MPI_SUCCESS         ? "success"
                                           : "other_error",
               win_calls, comm_calls);
        fflush(stdout);
    }
    _exit(0);
#else
    if (me == 0) printf("result ulfm_window_sync rank=0 call=%s no_ulfm\n", call);
    MPI_Finalize();
    return 0;
#endif
}
