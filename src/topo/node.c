/* The node split (see node.h). CLAMPI_NODE_SIZE comes from the options table. */
#include "topo/node.h"

#include "common/options.h"

static int node_size(void) { return (int)clampi_opt_process(CLAMPI_OPT_NODE_SIZE).u; }

int clampi_node_simulated(void) { return node_size() > 0; }

int clampi_node_split(MPI_Comm comm, MPI_Comm *node) {
    int k = node_size();
    if (k <= 0) return MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node);
    MPI_Comm real;
    int err = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &real);
    if (err != MPI_SUCCESS) return err;
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    /* key 0 everywhere: ties keep real's order, which is comm's order */
    err = MPI_Comm_split(real, wrank / k, 0, node);
    MPI_Comm_free(&real);
    return err;
}
