/* Windows whose per-rank size is not a multiple of 16 bytes (and differs per rank):
 * every get, cached or not, returns the target's bytes. Regression test for MPICH 4.0,
 * whose MPI_Win_allocate misplaces the ranks after such a window (clampi rounds up). */
#define CLAMPI_TEST_USES_MPI
#include <stdint.h>
#include <string.h>

#include "mpi_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *kinds[] = {"true", "false"};
    for (int k = 0; k < 2; k++) {
        MPI_Info info = cache_info(CLAMPI_ALWAYS_CACHE, NULL, NULL);
        MPI_Info_set(info, CLAMPI_SHM_DIRECT, kinds[k]);
        const int ints = 3 + 2 * rank; /* 12, 20, 28, ... bytes */
        int32_t *base;
        CMPI_Win w;
        CHECK(CMPI_Win_allocate(ints * 4, 4, info, MPI_COMM_WORLD, &base, &w) == MPI_SUCCESS);
        MPI_Info_free(&info);
        for (int i = 0; i < ints; i++) base[i] = rank * 1000 + i;
        MPI_Barrier(MPI_COMM_WORLD);
        CMPI_Win_lock_all(0, w);
        for (int round = 0; round < 2; round++)
            for (int t = 0; t < n; t++)
                for (int d = 0; d < 3 + 2 * t; d++) {
                    int32_t v = -1;
                    CHECK(CMPI_Get(&v, 1, MPI_INT32_T, t, d, 1, MPI_INT32_T, w) == MPI_SUCCESS);
                    CMPI_Win_flush(t, w);
                    CHECK_EQ_INT(v, t * 1000 + d);
                }
        CMPI_Win_unlock_all(w);
        CMPI_Win_free(&w);
    }
    MPI_Finalize();
    return 0;
}
