/* Windows made at once from two threads per process on communicators that overlap in a
 * ring (n processes, communicator k = {k, k+1 mod n}), and left to MPI_Finalize, which frees
 * them collectively. Freeing each process's windows in the order it made them could
 * deadlock there: threads make them in different orders on different processes. clampi
 * frees them in one order on every process (clampi_bwin.finalize_order, agreed at
 * creation); the test checks that each window's place is the same on both its members and
 * that places grow with creation on one communicator, then leaves the windows to
 * MPI_Finalize (a hang fails the test by its timeout). */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "mpi_util.h"
#include "rma/window.h"

#define PER_COMM 6

typedef struct {
    MPI_Comm comm;
    CMPI_Win win[PER_COMM];
    long mem[PER_COMM];
    unsigned delay_us;
} job;

static void *make(void *arg) {
    job *j = arg;
    MPI_Info info = ucx_info();
    for (int i = 0; i < PER_COMM; i++) {
        usleep(j->delay_us * (unsigned)(i % 3));
        CHECK_EQ_INT(CMPI_Win_create(&j->mem[i], sizeof(long), sizeof(long), info, j->comm, &j->win[i]), MPI_SUCCESS);
    }
    MPI_Info_free(&info);
    return NULL;
}

/* communicator k of the ring: {k, k+1 mod n}, k first */
static MPI_Comm ring_pair(int k, int rank, int n) {
    const int in = rank == k || rank == (k + 1) % n;
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank == k ? 0 : 1, &c);
    return c;
}

int main(int argc, char **argv) {
    int provided, rank, n;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    CHECK(n >= 3);
    job jobs[2] = {{0}, {0}};
    for (int k = 0; k < n; k++) {
        MPI_Comm c = ring_pair(k, rank, n);
        if (k == rank) jobs[0].comm = c;
        if (k == (rank + n - 1) % n) jobs[1].comm = c;
    }
    jobs[0].delay_us = (unsigned)(rank * 37 % 50);
    jobs[1].delay_us = (unsigned)((rank * 53 + 11) % 50);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, make, &jobs[i]) == 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);

    /* the checks' collectives in the ring's order: communicator k, then k + 1 */
    for (int k = 0; k < n; k++) {
        const int j = k == rank ? 0 : k == (rank + n - 1) % n ? 1 : -1;
        if (j < 0) continue;
        uint64_t prev = 0;
        for (int i = 0; i < PER_COMM; i++) {
            const clampi_win *w = clampi_registry_find(jobs[j].win[i]);
            CHECK(w != NULL);
            uint64_t mine = w->b.finalize_order, lo, hi;
            CHECK(mine != 0);
            MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, jobs[j].comm);
            MPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, jobs[j].comm);
            CHECK(lo == hi);    /* both members free it at the same place */
            CHECK(mine > prev); /* newest first on one communicator */
            prev = mine;
        }
    }
    if (rank == 0) printf("%d windows on each of %d communicators, left to MPI_Finalize\n", PER_COMM, n);
    MPI_Finalize();
    return 0;
}
