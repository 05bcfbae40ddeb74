/* Communicators spanning (simulated) nodes: an Alltoall block above
 * CLAMPI_COLL_HIER_ALLTOALL_MAX goes to the MPI library, one at or below it takes the
 * hierarchical path; Allgather is hierarchical at every size. Results match the MPI's own.
 * usage (CLAMPI_NODE_SIZE set): test_coll_hier_limit LIMIT_BYTES */
#define CLAMPI_TEST_USES_MPI
#include <clampi/coll.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* One call of kind op (0 Alltoall, 1 Allgather) with blocks of b bytes: returns which
 * counter moved (1 hierarchical, 0 delegated); checks the result against MPI's. */
static int call(int op, int b, int P, int me) {
    const size_t slen = op == 0 ? (size_t)b * P : (size_t)b, rlen = (size_t)b * P;
    char *s, *r, *ref = malloc(rlen);
    CHECK(CMPI_Alloc_mem((MPI_Aint)slen, MPI_INFO_NULL, &s) == MPI_SUCCESS);
    CHECK(CMPI_Alloc_mem((MPI_Aint)rlen, MPI_INFO_NULL, &r) == MPI_SUCCESS);
    for (size_t i = 0; i < slen; i++) s[i] = (char)(i * 31 + (size_t)me * 7 + 1);
    memset(r, 0, rlen);
    CMPIX_Coll_stats before, after;
    CMPIX_Coll_get_stats(&before);
    if (op == 0) {
        CHECK_EQ_INT(CMPI_Alltoall(s, b, MPI_BYTE, r, b, MPI_BYTE, MPI_COMM_WORLD), MPI_SUCCESS);
        MPI_Alltoall(s, b, MPI_BYTE, ref, b, MPI_BYTE, MPI_COMM_WORLD);
    } else {
        CHECK_EQ_INT(CMPI_Allgather(s, b, MPI_BYTE, r, b, MPI_BYTE, MPI_COMM_WORLD), MPI_SUCCESS);
        MPI_Allgather(s, b, MPI_BYTE, ref, b, MPI_BYTE, MPI_COMM_WORLD);
    }
    CMPIX_Coll_get_stats(&after);
    CHECK(memcmp(r, ref, rlen) == 0);
    const int hier = after.hierarchical == before.hierarchical + 1, deleg = after.delegated == before.delegated + 1;
    CHECK(hier != deleg); /* exactly one of them counted this call */
    CMPI_Free_mem(s);
    CMPI_Free_mem(r);
    free(ref);
    return hier;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    CHECK(argc > 1);
    const int limit = atoi(argv[1]);
    const int sizes[] = {8, 1024, limit, limit + 1, 4 * limit};
    for (int i = 0; i < 5; i++) {
        if (sizes[i] <= 0) continue;
        CHECK_EQ_INT(call(0, sizes[i], P, me), sizes[i] <= limit);
        CHECK_EQ_INT(call(1, sizes[i], P, me), 1);
    }
    if (me == 0) printf("hier_limit limit=%d ok\n", limit);
    MPI_Finalize();
    return 0;
}
