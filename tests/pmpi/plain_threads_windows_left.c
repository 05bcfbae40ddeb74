/* Windows made at once from two threads per process, on communicators that overlap in a
 * ring (communicator k = {k, k+1 mod n}), used once with a fence and left to MPI_Finalize.
 * Threads make them in different orders on different processes; under the preload with
 * CLAMPI_BACKEND=ucx clampi frees them inside MPI_Finalize, collectively, in one order
 * agreed when they were made. MPI_Finalize must return on every rank (a hang fails the test
 * by its timeout). */
#include <pthread.h>
#include <unistd.h>

#include "plain_check.h"

#define PER_COMM 5
static int me, np;

typedef struct {
    MPI_Comm comm;
    MPI_Win win[PER_COMM];
    long mem[PER_COMM];
    unsigned delay_us;
    long sum;
} job;

static void *make(void *arg) {
    job *j = arg;
    int r, peer;
    MPI_Comm_rank(j->comm, &r);
    peer = 1 - r;
    for (int i = 0; i < PER_COMM; i++) {
        usleep(j->delay_us * (unsigned)(i % 3));
        j->mem[i] = 0;
        CHECK(MPI_Win_create(&j->mem[i], sizeof(long), sizeof(long), MPI_INFO_NULL, j->comm, &j->win[i]));
        CHECK(MPI_Win_set_name(j->win[i], "ring_left"));
        long v = 1000L * me + i;
        CHECK(MPI_Win_fence(0, j->win[i]));
        CHECK(MPI_Put(&v, 1, MPI_LONG, peer, 0, 1, MPI_LONG, j->win[i]));
        CHECK(MPI_Win_fence(0, j->win[i]));
        j->sum += j->mem[i];
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (provided < MPI_THREAD_MULTIPLE || np < 3) {
        printf("result needs MPI_THREAD_MULTIPLE and 3 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    job jobs[2] = {{0}, {0}};
    for (int k = 0; k < np; k++) {
        const int in = me == k || me == (k + 1) % np;
        MPI_Comm c;
        CHECK(MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, me == k ? 0 : 1, &c));
        if (k == me) jobs[0].comm = c;
        if (k == (me + np - 1) % np) jobs[1].comm = c;
    }
    jobs[0].delay_us = (unsigned)(me * 37 % 50);
    jobs[1].delay_us = (unsigned)((me * 53 + 11) % 50);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, make, &jobs[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    /* from the right neighbour (communicator me) and the left one (me - 1), PER_COMM each */
    const long right = (me + 1) % np, left = (me + np - 1) % np, per = PER_COMM * (PER_COMM - 1) / 2;
    printf("result threads_windows_left rank=%d from_right=%d from_left=%d\n", me,
           jobs[0].sum == 1000L * right * PER_COMM + per, jobs[1].sum == 1000L * left * PER_COMM + per);
    fflush(stdout);
    return MPI_Finalize();
}
