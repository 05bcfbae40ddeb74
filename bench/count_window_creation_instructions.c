/* One (or N) clampi_backend=ucx windows on MPI_COMM_WORLD, alive at once, then freed: the
 * program bench/count_window_creation_instructions.sh counts under callgrind.
 *   count_window_creation_instructions [N [a]]   (a: CMPI_Win_allocate, else CMPI_Win_create) */
#include <mpi.h>
#include <stdlib.h>

#include "clampi/rma.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    static long mem[8];
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    int nw = argc > 1 ? atoi(argv[1]) : 1;
    if (nw < 1 || nw > 64) nw = 1;
    const int alloc = argc > 2 && argv[2][0] == 'a';
    CMPI_Win w[64];
    for (int i = 0; i < nw; i++) {
        if (alloc) {
            long *p;
            CMPI_Win_allocate(sizeof mem, 8, info, MPI_COMM_WORLD, &p, &w[i]);
        } else {
            CMPI_Win_create(mem, sizeof mem, 8, info, MPI_COMM_WORLD, &w[i]);
        }
    }
    for (int i = 0; i < nw; i++) CMPI_Win_free(&w[i]);
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
