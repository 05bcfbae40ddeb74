/* CMPIX_ under MPI_THREAD_MULTIPLE: T threads per rank, thread t exchanges N messages with
 * the peer rank on tag t (sizes from 0 B to 64 KiB: eager and rendezvous), receiving in
 * posting order; every payload must be the expected one, in send order (non-overtaking
 * per tag), while another thread probes. Run under TSan too (label tsan).
 * *   test_match_mt KIND [T] [N] */
#define CLAMPI_TEST_USES_MPI
#include <clampi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size, N = 200;
static MPI_Comm comm;

static int msg_size(int t, int i) { return (i * 37 + t * 11) % 5 == 0 ? 20000 + (i % 7) * 6000 : (i * 13 + t) % 200; }

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg, peer = rank ^ 1;
    unsigned char *sb = malloc(65536), *rb = malloc(65536);
    for (int i = 0; i < N; i++) {
        int n = msg_size(t, i);
        for (int k = 0; k < n; k++) sb[k] = (unsigned char)(rank + t * 3 + i * 7 + k);
        MPI_Request rq[2];
        MPI_Status st[2];
        CHECK(CMPIX_Irecv(rb, 65536, MPI_BYTE, peer, t, comm, &rq[0]) == MPI_SUCCESS);
        CHECK(CMPIX_Isend(sb, n, MPI_BYTE, peer, t, comm, &rq[1]) == MPI_SUCCESS);
        if (i % 2)
            CHECK(CMPIX_Waitall(2, rq, st) == MPI_SUCCESS);
        else
            CHECK(CMPIX_Wait(&rq[0], &st[0]) == MPI_SUCCESS && MPI_Wait(&rq[1], &st[1]) == MPI_SUCCESS);
        int cnt;
        MPI_Get_count(&st[0], MPI_BYTE, &cnt);
        CHECK(cnt == n && st[0].MPI_TAG == t && st[0].MPI_SOURCE == peer);
        for (int k = 0; k < n; k++) CHECK(rb[k] == (unsigned char)(peer + t * 3 + i * 7 + k));
    }
    free(sb);
    free(rb);
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size % 2 == 0);
    int T = argc > 2 ? atoi(argv[2]) : 4;
    if (argc > 3) N = atoi(argv[3]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_match", argc > 1 ? argv[1] : "lla+hot");
    MPI_Info_set(info, "clampi_match_hot_period", "20");
    CHECK(CMPIX_Comm_enable(comm, info) == MPI_SUCCESS);
    pthread_t th[16];
    for (int t = 0; t < T; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int i = 0; i < 50; i++) { /* a prober alongside: never finds tag 999 */
        int flag;
        CHECK(CMPIX_Iprobe(MPI_ANY_SOURCE, 999, comm, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag);
    }
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    CHECK(CMPIX_Comm_disable(comm) == MPI_SUCCESS);
    MPI_Comm_free(&comm);
    MPI_Info_free(&info);
    if (rank == 0) printf("match threads (%s, %d threads x %d): ok\n", argc > 1 ? argv[1] : "lla+hot", T, N);
    MPI_Finalize();
    return 0;
}
