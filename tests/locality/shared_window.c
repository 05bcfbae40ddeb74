/* MPI shared-memory window, the paper's physical-address case: rank 0 allocates
 * and first-touches the whole window, then every rank r works on page r.
 * Run under `clampi-locality run --exact`; check_locality.py matches the pages
 * across ranks through the mappings (file + offset) in rank<R>.json. */
#include <mpi.h>
#include <string.h>

#define PAGE 4096

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &size);
    char *mine = NULL;
    MPI_Win win;
    MPI_Aint bytes = rank == 0 ? (MPI_Aint)size * PAGE : 0;
    MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node, &mine, &win);
    MPI_Aint seg;
    int disp;
    char *base;
    MPI_Win_shared_query(win, 0, &seg, &disp, &base);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    if (rank == 0) memset(base, 0, (size_t)size * PAGE); /* @FIRST_TOUCH */
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    volatile char *page = base + (size_t)rank * PAGE;
    for (int i = 0; i < 100; i++) page[i] = (char)rank; /* @WORK */
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
