/* clampi_node_split_by_name, the split behind every node-shared path: the processes of a
 * communicator with my name, in the communicator's order, whatever the hash groups are.
 * hash_bits 0 puts every name into one hash group (every pair of names collides), 1 into
 * two, 31 is what clampi uses: the result must be the same each time. Names are given, so a
 * one-machine job has several "nodes": rank r is on node (r * 7 / 3) % 3 of MPI_COMM_WORLD, and the
 * same again on a communicator of the reverse order. */
#define CLAMPI_TEST_USES_MPI
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "topo/node.h"

static int node_of(int world_rank) { return (world_rank * 7 / 3) % 3; }

static void check_split(MPI_Comm comm, unsigned bits) {
    int me, P, wme;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &wme);
    char name[MPI_MAX_PROCESSOR_NAME];
    snprintf(name, sizeof name, "host-%d.cluster", node_of(wme));
    MPI_Comm node;
    CHECK(clampi_node_split_by_name(comm, name, bits, &node) == MPI_SUCCESS);
    /* every process of comm on my node, in comm's order */
    int *nodes = malloc(sizeof(int) * (size_t)P);
    int mine = node_of(wme);
    MPI_Allgather(&mine, 1, MPI_INT, nodes, 1, MPI_INT, comm);
    int expect = 0;
    for (int i = 0; i < P; i++) expect += nodes[i] == mine;
    int n, nr;
    MPI_Comm_size(node, &n);
    MPI_Comm_rank(node, &nr);
    CHECK_EQ_INT(n, expect);
    int *in_comm = malloc(sizeof(int) * (size_t)n);
    MPI_Allgather(&me, 1, MPI_INT, in_comm, 1, MPI_INT, node);
    for (int i = 0; i < n; i++) {
        CHECK_EQ_INT(nodes[in_comm[i]], mine);
        if (i > 0) CHECK(in_comm[i] > in_comm[i - 1]);
    }
    CHECK_EQ_INT(in_comm[nr], me);
    free(in_comm);
    free(nodes);
    MPI_Comm_free(&node);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - me, &reversed);
    const unsigned bits[] = {0, 1, 31};
    for (int b = 0; b < 3; b++) {
        check_split(MPI_COMM_WORLD, bits[b]);
        check_split(reversed, bits[b]);
    }
    MPI_Comm_free(&reversed);
    if (me == 0) printf("np=%d: the split by name is the same with every hash width\n", P);
    MPI_Finalize();
    return 0;
}
