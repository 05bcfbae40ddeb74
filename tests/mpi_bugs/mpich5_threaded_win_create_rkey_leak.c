/* MPICH 5.0.2 (PyPI wheel, ch4:ucx, its UCX 1.20), no clampi: windows made with
 * MPI_Win_create from two threads at once (MPI_THREAD_MULTIPLE, each thread on its own
 * communicator of a ring of pairs), then freed, leave MPICH's UCX worker with rkeys "not
 * returned" at MPI_Finalize: about 120 lines "UCX WARN object 0x... was not returned to
 * mpool ucp_rkeys" from one rank, in 1 of 300 runs here (2 cores, loaded). The program's
 * results are right; the warning is MPICH's (its own MPI_Win_create unpacks the rkeys, from
 * both threads). tests/rmax/CMakeLists.txt tolerates exactly that line in the one threaded
 * windows test on MPICH 5.
 *
 *   mpicc mpich5_threaded_win_create_rkey_leak.c -o repro -lpthread   (the wheel's mpicc)
 *   for i in $(seq 300); do mpiexec -n 3 ./repro 2>&1 | grep -c "ucp_rkeys"; done | sort | uniq -c */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define PER 6

typedef struct {
    MPI_Comm comm;
    MPI_Win win[PER];
    long mem[PER];
    unsigned delay_us;
} job;

static void *make(void *arg) {
    job *j = arg;
    for (int i = 0; i < PER; i++) {
        usleep(j->delay_us * (unsigned)(i % 3));
        MPI_Win_create(&j->mem[i], sizeof(long), sizeof(long), MPI_INFO_NULL, j->comm, &j->win[i]);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank, n;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    job jobs[2] = {{0}, {0}};
    for (int k = 0; k < n; k++) { /* communicator k of the ring: {k, k+1 mod n} */
        const int in = rank == k || rank == (k + 1) % n;
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank == k ? 0 : 1, &c);
        if (k == rank) jobs[0].comm = c;
        if (k == (rank + n - 1) % n) jobs[1].comm = c;
    }
    jobs[0].delay_us = (unsigned)(rank * 37 % 50);
    jobs[1].delay_us = (unsigned)((rank * 53 + 11) % 50);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, make, &jobs[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int k = 0; k < n; k++) { /* freed in the ring's order: no collective waits on another */
        const int j = k == rank ? 0 : k == (rank + n - 1) % n ? 1 : -1;
        if (j < 0) continue;
        for (int i = 0; i < PER; i++) MPI_Win_free(&jobs[j].win[i]);
    }
    if (rank == 0) printf("done\n");
    MPI_Finalize();
    return 0;
}
