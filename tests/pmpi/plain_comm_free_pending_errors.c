/* Receives still pending when their communicator is freed complete normally (MPI-4.1
 * 7.4.3), errors included. Rank 1 posts two receives on a duplicate, frees it, and only then
 * rank 0 sends: a message too long for the first receive (MPI_ERR_TRUNCATE) and one that
 * fits the second. MPI_Wait on each, and MPI_Waitall on both, return the errors (the MPIs
 * raise them on the freed communicator or on MPI_COMM_WORLD: both have MPI_ERRORS_RETURN
 * here) and the data; rank 1 prints what it saw. Under clampi such receives wait in its
 * own queue (the UCX carrier) or the MPI's (the MPI carrier hands them over at the free). */
#include "plain_check.h"

#include <string.h>

static int me;

static const char *class_name(int rc) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls == MPI_SUCCESS         ? "success"
           : cls == MPI_ERR_TRUNCATE  ? "truncate"
           : cls == MPI_ERR_IN_STATUS ? "in_status"
                                      : "other";
}

/* One round: how = "wait" (MPI_Wait on the truncated one, then the other) or "waitall". */
static void round_of(const char *how) {
    MPI_Comm comm;
    int small = 0, fits[4] = {0}, two[2] = {7, 8}, four[4] = {1, 2, 3, 4};
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    MPI_Request reqs[2];
    MPI_Status st[2];
    if (me == 1) {
        CHECK(MPI_Irecv(&small, 1, MPI_INT, 0, 1, comm, &reqs[0]));
        CHECK(MPI_Irecv(fits, 4, MPI_INT, 0, 2, comm, &reqs[1]));
        CHECK(MPI_Comm_free(&comm));
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* rank 1's communicator is freed before anything arrives */
    if (me == 0) {
        CHECK(MPI_Send(two, 2, MPI_INT, 1, 1, comm));
        CHECK(MPI_Send(four, 4, MPI_INT, 1, 2, comm));
        CHECK(MPI_Comm_free(&comm));
    } else {
        const char *first, *second = "-", *s0 = "-", *s1 = "-";
        if (strcmp(how, "wait") == 0) {
            first = class_name(MPI_Wait(&reqs[0], &st[0]));
            second = class_name(MPI_Wait(&reqs[1], &st[1]));
        } else { /* MPI_ERR_IN_STATUS: each status says */
            first = class_name(MPI_Waitall(2, reqs, st));
            s0 = class_name(st[0].MPI_ERROR), s1 = class_name(st[1].MPI_ERROR);
        }
        printf("result free_pending %s first=%s second=%s status0=%s status1=%s data=%d,%d\n", how, first, second, s0,
               s1, fits[0], fits[3]);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int token = me; /* one message on MPI_COMM_WORLD, whose stats line stays */
    CHECK(MPI_Sendrecv_replace(&token, 1, MPI_INT, 1 - me, 9, 1 - me, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    round_of("wait");
    round_of("waitall");
    round_of("wait");
    MPI_Finalize();
    return 0;
}
