/* Receives still pending when their communicator is freed complete normally (MPI-4.1
 * 7.4.3), and their errors go to that communicator's error handler, as before the free.
 * Rank 1 posts receives on a duplicate with MPI_ERRORS_RETURN (and a handler of its own, in
 * "handler" mode, that counts its calls), frees it, and only then rank 0 sends: a message
 * too long for the first receive (MPI_ERR_TRUNCATE) and one that fits the second. MPI_Wait
 * on the first and MPI_Waitall on both must return the error, not abort through
 * MPI_COMM_WORLD's handler (MPI_ERRORS_ARE_FATAL). Every rank prints what it saw. */
#include "plain_check.h"

#include <string.h>

static int me, handler_calls;

static void count_calls(MPI_Comm *comm, int *code, ...) {
    (void)comm, (void)code;
    handler_calls++;
}

static const char *class_name(int rc) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls == MPI_SUCCESS         ? "success"
           : cls == MPI_ERR_TRUNCATE  ? "truncate"
           : cls == MPI_ERR_IN_STATUS ? "in_status"
                                      : "other";
}

/* One round: how = "wait" (MPI_Wait on the truncated one, then the other) or "waitall". */
static void round_of(const char *how, int use_handler) {
    MPI_Comm comm;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int small = 0, fits[4] = {0}, two[2] = {7, 8}, four[4] = {1, 2, 3, 4};
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (use_handler) {
        CHECK(MPI_Comm_create_errhandler(count_calls, &eh));
        CHECK(MPI_Comm_set_errhandler(comm, eh));
    } else {
        CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    }
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
        const char *first, *second = "-";
        if (strcmp(how, "wait") == 0) {
            first = class_name(MPI_Wait(&reqs[0], &st[0]));
            second = class_name(MPI_Wait(&reqs[1], &st[1]));
        } else {
            first = class_name(MPI_Waitall(2, reqs, st));
        }
        const char *s0 = "-", *s1 = "-"; /* MPI_ERR_IN_STATUS: each status says */
        if (strcmp(how, "waitall") == 0) s0 = class_name(st[0].MPI_ERROR), s1 = class_name(st[1].MPI_ERROR);
        printf("result free_pending %s handler=%d first=%s second=%s status0=%s status1=%s data=%d,%d\n", how,
               use_handler, first, second, s0, s1, fits[0], fits[3]);
    }
    if (eh != MPI_ERRHANDLER_NULL) CHECK(MPI_Errhandler_free(&eh));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int token = me; /* one message on MPI_COMM_WORLD, whose stats line stays */
    CHECK(MPI_Sendrecv_replace(&token, 1, MPI_INT, 1 - me, 9, 1 - me, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    round_of("wait", 0);
    round_of("waitall", 0);
    round_of("wait", 1);
    round_of("waitall", 1);
    if (me == 1) printf("result free_pending handler_calls=%d\n", handler_calls);
    MPI_Finalize();
    return 0;
}
