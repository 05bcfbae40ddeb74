/* Instructions on the hit path of an 8-byte CMPI_Get, counted by callgrind.
 * Run: valgrind --tool=callgrind --collect-atstart=no --toggle-collect=CMPI_Get ./hit_path_cost
 * (bench/hit_path_cost.sh does). A single rank reads its own always-cache window (cache
 * path, no shared-memory shortcut); one warm-up get fills the cache, the counters are
 * zeroed, then HITS gets are counted: only instructions inside CMPI_Get (and what it
 * calls) are collected. */
#include <clampi.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>

#define HITS 10000

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, CLAMPI_MODE, CLAMPI_ALWAYS_CACHE);
    MPI_Info_set(info, CLAMPI_SHM_DIRECT, "false");
    double *base;
    CMPI_Win w;
    if (CMPI_Win_allocate(4096, 8, info, MPI_COMM_SELF, &base, &w) != MPI_SUCCESS) return 1;
    MPI_Info_free(&info);
    for (int i = 0; i < 512; i++) base[i] = i;
    CMPI_Win_lock_all(0, w);
    double v = -1, sum = 0;
    CMPI_Get(&v, 1, MPI_DOUBLE, 0, 5, 1, MPI_DOUBLE, w);
    CMPI_Win_flush(0, w);
    CALLGRIND_ZERO_STATS; /* forget the warm-up miss */
    for (int i = 0; i < HITS; i++) {
        CMPI_Get(&v, 1, MPI_DOUBLE, 0, 5, 1, MPI_DOUBLE, w);
        sum += v;
    }
    CMPI_Win_stats s;
    CMPI_Win_get_stats(w, &s);
    printf("hits=%llu sum=%.0f calls=%d\n", (unsigned long long)s.hits, sum, HITS);
    CMPI_Win_unlock_all(w);
    CMPI_Win_free(&w);
    MPI_Finalize();
    return s.hits == HITS && sum == 5.0 * HITS ? 0 : 1;
}
