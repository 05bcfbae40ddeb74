/* Intel MPI 2021.19, no clampi: a window from MPI_Win_allocate_shared on a communicator
 * made by MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), then that communicator freed, then
 * MPI_Win_lock_all (or MPI_Win_lock) on the window: SIGSEGV inside Intel MPI. Legal MPI:
 * a window does not depend on its communicator staying alive (MPI-4.1 12.2). Open MPI and
 * MPICH are right.
 *
 * clampi's workaround: the per-node communicator behind a node-shared window is kept for the
 * window's life and freed after it (src/rma/window.c, allocate_shared).
 *
 *   I_MPI_ROOT=VENV VENV/bin/mpicc impi2021_shared_window_comm_freed.c -o repro
 *   I_MPI_ROOT=VENV VENV/bin/mpiexec -n 2 ./repro      # crashes; "ok" with any other MPI */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int *base;
    MPI_Win win;
    MPI_Win_allocate_shared(1024, 1, MPI_INFO_NULL, node, &base, &win);
    MPI_Comm_free(&node); /* legal: the window keeps what it needs */
    MPI_Win_lock_all(0, win);
    base[0] = rank;
    MPI_Win_sync(win);
    MPI_Win_unlock_all(win);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Win_unlock(0, win);
    MPI_Win_free(&win);
    if (rank == 0) printf("ok\n");
    MPI_Finalize();
    return 0;
}
