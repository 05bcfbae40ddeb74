/* Simulated nodes (CLAMPI_NODE_SIZE=K): clampi must treat ranks [iK, (i+1)K) of
 * MPI_COMM_WORLD as one node and share memory only within it.
 *  - CMPI_Win_allocate: a get from a target on my simulated node is a direct copy
 *    (stats `direct`), a get from any other target is not (it goes through MPI);
 *  - collectives: a communicator inside my simulated node takes the shared-heap path,
 *    MPI_COMM_WORLD (spanning the simulated nodes) the hierarchical one, and both give
 *    MPI's results.
 * Without CLAMPI_NODE_SIZE every rank of this one-machine job is on one node. */
#define CLAMPI_TEST_USES_MPI
#include <clampi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *ks = getenv("CLAMPI_NODE_SIZE");
    int K = ks ? atoi(ks) : P;
    CHECK(K > 0);
    int nodes = (P + K - 1) / K;

    /* ---- RMA: direct copies only within the simulated node --------------------------- */
    CMPI_Win w;
    int *base;
    CHECK(CMPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w) == MPI_SUCCESS);
    for (int i = 0; i < 64; i++) base[i] = me * 1000 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    CMPI_Win_lock_all(0, w);
    int same = 0;
    for (int t = 0; t < P; t++) {
        CMPI_Win_stats a, b;
        CMPI_Win_get_stats(w, &a);
        int v = -1;
        CHECK(CMPI_Get(&v, 1, MPI_INT, t, 7, 1, MPI_INT, w) == MPI_SUCCESS);
        CHECK(CMPI_Win_flush(t, w) == MPI_SUCCESS);
        CHECK_EQ_INT(v, t * 1000 + 7);
        CMPI_Win_get_stats(w, &b);
        int on_node = t / K == me / K;
        same += on_node;
        if ((int)(b.direct - a.direct) != on_node) {
            fprintf(stderr, "rank %d: get from target %d (node %d, mine %d): direct %lu -> %lu\n", me, t, t / K, me / K,
                    (unsigned long)a.direct, (unsigned long)b.direct);
            CHECK(0);
        }
    }
    CMPI_Win_unlock_all(w);
    CHECK(CMPI_Win_free(&w) == MPI_SUCCESS);

    /* ---- collectives: shared path inside the node, hierarchical across nodes --------- */
    MPI_Comm node;
    MPI_Comm_split(MPI_COMM_WORLD, me / K, me, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    CHECK_EQ_INT(nsize, same);
    int *s, *r, *ref = malloc(sizeof(int) * 4 * (size_t)P);
    CHECK(CMPI_Alloc_mem(sizeof(int) * 4 * (size_t)P, MPI_INFO_NULL, &s) == MPI_SUCCESS);
    CHECK(CMPI_Alloc_mem(sizeof(int) * 4 * (size_t)P, MPI_INFO_NULL, &r) == MPI_SUCCESS);
    for (int i = 0; i < 4 * P; i++) s[i] = me * 100000 + i;
    CMPIX_Coll_stats a, b;
    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = c == 0 ? node : MPI_COMM_WORLD;
        int cp;
        MPI_Comm_size(comm, &cp);
        CMPIX_Coll_get_stats(&a);
        CHECK(CMPIX_Alltoall_algo(s, 4, MPI_INT, r, 4, MPI_INT, comm, CMPIX_COLL_MORTON) == MPI_SUCCESS);
        MPI_Alltoall(s, 4, MPI_INT, ref, 4, MPI_INT, comm);
        CHECK(memcmp(r, ref, sizeof(int) * 4 * (size_t)cp) == 0);
        CHECK(CMPI_Allgather(s, 3, MPI_INT, r, 3, MPI_INT, comm) == MPI_SUCCESS);
        MPI_Allgather(s, 3, MPI_INT, ref, 3, MPI_INT, comm);
        CHECK(memcmp(r, ref, sizeof(int) * 3 * (size_t)cp) == 0);
        CMPIX_Coll_get_stats(&b);
        if (c == 0 || nodes == 1) { /* within one node: never the hierarchical path */
            CHECK_EQ_INT(b.hierarchical, a.hierarchical);
            CHECK_EQ_INT(b.delegated, a.delegated);
            if (cp > 1) CHECK_EQ_INT(b.direct, a.direct + 1);
        } else {       /* spans the simulated nodes: no direct, mailbox or staged call on it */
            if (K > 1) /* hierarchical; one process per node: the MPI library */
                CHECK_EQ_INT(b.hierarchical, a.hierarchical + 2);
            else
                CHECK_EQ_INT(b.delegated, a.delegated + 2);
            CHECK_EQ_INT(b.direct + b.eager + b.staged, a.direct + a.eager + a.staged);
        }
    }
    if (me == 0) printf("np=%d node size %d (%d nodes): direct gets and collective paths as expected\n", P, K, nodes);
    CHECK(CMPI_Free_mem(s) == MPI_SUCCESS);
    CHECK(CMPI_Free_mem(r) == MPI_SUCCESS);
    free(ref);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
