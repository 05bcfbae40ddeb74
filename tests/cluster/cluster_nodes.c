/* What MPI itself sees of the nodes: the number of distinct processor names and the size of
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), checked against the layout the cluster was
 * asked for (NODES nodes, ranks in blocks), printed as "result" lines. MPI only. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, np, local, len;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_Get_processor_name(name, &len);
    char *all = rank == 0 ? calloc((size_t)np, MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    int min_local, max_local;
    MPI_Reduce(&local, &min_local, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local, &max_local, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    /* ranks in blocks: rank r's node leader is the lowest rank with r's processor name */
    int leader = 0;
    MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node);
    int blocks = leader == rank - rank % local, all_blocks;
    MPI_Reduce(&blocks, &all_blocks, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int distinct = 0;
        for (int i = 0; i < np; i++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, all + (size_t)j * MPI_MAX_PROCESSOR_NAME) == 0;
            distinct += !seen;
        }
        printf("result nodes=%d local_size=%d..%d blocks=%d\n", distinct, min_local, max_local, all_blocks);
        free(all);
    }
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
