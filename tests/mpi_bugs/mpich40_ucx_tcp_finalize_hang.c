/* MPICH 4.0.2 with UCX 1.13 (Debian 12), no clampi: with UCX_TLS=tcp and 4 ranks on a 2-core
 * machine, a program that made passive-target gets hangs in MPI_Finalize after it printed its
 * result: two ranks spin in PMPI_Finalize -> ucp_worker_progress -> uct_tcp_iface_progress
 * (flushing endpoints) while the other two wait for them in the PMI barrier. 9 runs of 15
 * hung here (this program and a variant with 2,000 gets); with 2 ranks, or UCX's default
 * transports, 5 runs of 5 finished. MPICH 4.0.2 closes its UCX endpoints and only then
 * enters the PMI barrier, where a peer already waits instead of progressing (docs/testing.md;
 * tests/support/mpich_tcp_guard.sh handles it in the test suite).
 *
 * Not clampi's to work around: the endpoints are MPI's. bench/existing_figures.sh runs its
 * application jobs through the same guard.
 *
 *   mpicc.mpich mpich40_ucx_tcp_finalize_hang.c -o repro
 *   timeout 60 mpiexec.mpich -n 4 -env UCX_TLS tcp ./repro   # prints "done", then often rc 124
 *   timeout 60 mpiexec.mpich -n 4 ./repro                    # rc 0 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int *base = calloc(4096, sizeof(int));
    MPI_Win win;
    MPI_Win_create(base, 4096 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int i = 0; i < 4096; i++) base[i] = r * 10000 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    long sum = 0;
    for (int k = 0; k < 200; k++) {
        int x, t = (r + 1 + k) % n;
        MPI_Get(&x, 1, MPI_INT, t, k % 4096, 1, MPI_INT, win);
        MPI_Win_flush(t, win);
        sum += x;
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(base);
    if (r == 0) printf("done %ld\n", sum);
    MPI_Finalize();
    return 0;
}
