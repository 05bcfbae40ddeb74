/* Several windows at once, each with its own cache, mode and sizes: gets on one never
 * hit in the other, invalidating one leaves the other intact, stats are per window.
 * With CLAMPI_STATS set, each window prints its line at free (checked by CTest). */
#define CLAMPI_TEST_USES_MPI
#include "mpi_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Info ig = cache_info(CLAMPI_ALWAYS_CACHE, "1M", "4096");
    MPI_Info it = cache_info(CLAMPI_USER_DEFINED, "64K", "256");
    int *gbase, *tbase;
    CMPI_Win graph, tree;
    CHECK(CMPI_Win_allocate(1024 * sizeof(int), sizeof(int), ig, MPI_COMM_WORLD, &gbase, &graph) == MPI_SUCCESS);
    CHECK(CMPI_Win_allocate(1024 * sizeof(int), sizeof(int), it, MPI_COMM_WORLD, &tbase, &tree) == MPI_SUCCESS);
    MPI_Info_free(&ig);
    MPI_Info_free(&it);
    MPI_Win_set_name(graph.win, "graph");
    MPI_Win_set_name(tree.win, "tree");
    for (int i = 0; i < 1024; i++) {
        gbase[i] = rank * 10000 + i;
        tbase[i] = -(rank * 10000 + i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(CMPI_Win_lock_all(0, graph) == MPI_SUCCESS);
    CHECK(CMPI_Win_lock_all(0, tree) == MPI_SUCCESS);
    int t = (rank + 1) % nranks;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 100; i++) {
            int g = 0, r = 0;
            CHECK(CMPI_Get(&g, 1, MPI_INT, t, i, 1, MPI_INT, graph) == MPI_SUCCESS);
            CHECK(CMPI_Get(&r, 1, MPI_INT, t, i, 1, MPI_INT, tree) == MPI_SUCCESS); /* same (target, disp) */
            CHECK(CMPI_Win_flush(t, graph) == MPI_SUCCESS);
            CHECK(CMPI_Win_flush(t, tree) == MPI_SUCCESS);
            CHECK_EQ_INT(g, t * 10000 + i);
            CHECK_EQ_INT(r, -(t * 10000 + i));
        }
        if (round == 1) CHECK(CMPI_Win_invalidate(tree) == MPI_SUCCESS);
    }
    CMPI_Win_stats g = stats_of(graph), r = stats_of(tree);
    CHECK_EQ_INT(g.misses, 100);
    CHECK_EQ_INT(g.hits, 200);
    CHECK_EQ_INT(g.invalidations, 0);
    CHECK_EQ_INT(r.misses, 200); /* round 0 and the round after the invalidation */
    CHECK_EQ_INT(r.hits, 100);
    CHECK_EQ_INT(r.invalidations, 1);
    CHECK(g.index_entries >= 4096 && r.index_entries >= 256 && r.index_entries < 4096);
    CHECK_EQ_INT(g.buffer_bytes, 1 << 20);
    CHECK_EQ_INT(r.buffer_bytes, 64 << 10);
    CHECK(CMPI_Win_unlock_all(graph) == MPI_SUCCESS);
    CHECK(CMPI_Win_unlock_all(tree) == MPI_SUCCESS);
    CHECK(CMPI_Win_free(&tree) == MPI_SUCCESS);
    CHECK(CMPI_Win_free(&graph) == MPI_SUCCESS);
    MPI_Finalize();
    return 0;
}
