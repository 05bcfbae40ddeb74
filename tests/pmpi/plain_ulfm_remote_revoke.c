/* ULFM (Open MPI with its fault tolerance on: OMPI_MCA_mpi_ft_enable=1): rank 0 revokes a
 * communicator while rank 1 waits on it; rank 1's waits must end with MPIX_ERR_REVOKED, and
 * a barrier after it on both. Rank 1 first posts DEEP nonblocking receives nobody sends to
 * (more than the MPI carrier's native depth, so that clampi queues most of them), then
 * waits in a blocking receive (the argument "recv"), a blocking probe ("probe") or
 * MPI_Waitall on the deep receives ("waitall") for what rank 0 never sends, or ("freed")
 * learns of the revocation from a failed barrier, frees the communicator, and then waits
 * for the deep receives; "native" waits in a blocking receive without deep receives. Under
 * CLAMPI_MATCH such waits are in clampi's own queue, which no revocation reaches by
 * itself, except the last one, which the MPI carrier leaves to MPI on its duplicate.
 * "ssend" and "rndv" turn it round: rank 1 sends (a synchronous send of one int, or a
 * standard send of RNDV_BYTES, beyond any eager limit) what rank 0 probes but never
 * receives, and rank 0 revokes; the send, which waits for the receiver, must end, with
 * MPIX_ERR_REVOKED or with success (Open MPI 5.0's own ends so: the revocation releases the
 * sender); a line "send_outcome" says which. "ssend_own": rank 1's synchronous send
 * (MPI_Issend) waits for rank 0, which probed it and then makes no MPI call, and rank 1
 * revokes the communicator itself (once rank 0 has probed it: a file says so): its wait must end without rank 0's help (rank 0 waits,
 * outside MPI, for a file rank 1 writes once its wait ended; 30 s at most). Errors of requests of a freed communicator
 * go to MPI_COMM_WORLD's handler in some MPIs: MPI_ERRORS_RETURN there too. An MPI without
 * ULFM says so. */
#include "plain_check.h"
#include "plain_ulfm.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEEP 100
#define RNDV_BYTES (4 << 20)

static int me;

/* Waits (no MPI call) until path exists, 30 s at most: 1 if it appeared. */
static int wait_for_file(const char *path) {
    for (int i = 0; i < 3000; i++) {
        if (access(path, F_OK) == 0) return 1;
        struct timespec t = {0, 10 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    return 0;
}

int main(int argc, char **argv) {
    int provided;
    const char *how = argc > 1 ? argv[1] : "recv";
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#ifdef OMPI_HAVE_MPI_EXT_FTMPI
    MPI_Comm comm;
    int x = me, y = -1, deep[DEEP];
    MPI_Request reqs[DEEP];
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int ndeep = strcmp(how, "native") == 0 || me == 0 ? 0 : DEEP;
    for (int i = 0; i < ndeep; i++) CHECK(MPI_Irecv(&deep[i], 1, MPI_INT, 0, 100 + i, comm, &reqs[i]));
    CHECK(MPI_Sendrecv(&x, 1, MPI_INT, 1 - me, 0, &y, 1, MPI_INT, 1 - me, 0, comm, MPI_STATUS_IGNORE));
    /* both exchanges ended before rank 0 may revoke: else rank 1's receive can meet the
     * revocation first (a full suite on two loaded cores did, on the MPI carrier) */
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int waited = 1, deep_failed = 1, barrier = -1; /* rank 0 does not wait */
    const int own = strcmp(how, "ssend_own") == 0;
    int sends = strcmp(how, "ssend") == 0 || strcmp(how, "rndv") == 0 || own;
    char path[64];
    long pid = (long)getpid();
    CHECK(MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    snprintf(path, sizeof path, "/tmp/clampi_ulfm_ssend_own_%ld", pid);
    char probed[80]; /* rank 0 has probed the message: rank 1 may revoke */
    snprintf(probed, sizeof probed, "%s.probed", path);
    char *big = strcmp(how, "rndv") == 0 ? calloc(RNDV_BYTES, 1) : NULL;
    if (me == 0) {
        if (sends) CHECK(MPI_Probe(1, 5, comm, MPI_STATUS_IGNORE)); /* arrived, never received */
        if (own) {
            FILE *f = fopen(probed, "w");
            if (f) fclose(f);
            waited = wait_for_file(path); /* the sender's wait ended without this side */
            unlink(path);
            unlink(probed);
        } else
            CHECK(MPIX_Comm_revoke(comm));
        /* the revocation alone must let the sender go: comm stays until its send ended */
        if (sends) CHECK(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        int rc = MPI_SUCCESS;
        if (strcmp(how, "ssend") == 0)
            rc = MPI_Ssend(&x, 1, MPI_INT, 0, 5, comm);
        else if (own) {
            MPI_Request sreq;
            CHECK(MPI_Issend(&x, 1, MPI_INT, 0, 5, comm, &sreq));
            wait_for_file(probed);
            CHECK(MPIX_Comm_revoke(comm));
            rc = MPI_Wait(&sreq, MPI_STATUS_IGNORE);
            FILE *f = fopen(path, "w");
            if (f) fclose(f);
        } else if (big)
            rc = MPI_Send(big, RNDV_BYTES, MPI_CHAR, 0, 5, comm);
        if (sends) {
            waited = rc == MPI_SUCCESS || revoked(rc);
            printf("send_outcome rank=1 %s %s\n", how,
                   revoked(rc)         ? "revoked"
                   : rc == MPI_SUCCESS ? "success"
                                       : "other");
            CHECK(MPI_Barrier(MPI_COMM_WORLD));
        }
        if (strcmp(how, "probe") == 0)
            waited = revoked(MPI_Probe(0, 5, comm, MPI_STATUS_IGNORE));
        else if (strcmp(how, "recv") == 0 || strcmp(how, "native") == 0)
            waited = revoked(MPI_Recv(&y, 1, MPI_INT, 0, 5, comm, MPI_STATUS_IGNORE));
        if (strcmp(how, "freed") == 0) {
            barrier = revoked(MPI_Barrier(comm));
            CHECK(MPI_Comm_free(&comm));
        }
        /* every deep receive fails, wherever it waited (clampi's queue or the MPI's) */
        MPI_Status st[DEEP];
        rc = MPI_Waitall(ndeep, reqs, st);
        deep_failed = rc != MPI_SUCCESS || ndeep == 0;
        for (int i = 0; i < ndeep && deep_failed; i++)
            deep_failed = revoked(rc == MPI_ERR_IN_STATUS ? st[i].MPI_ERROR : rc) || st[i].MPI_ERROR == MPI_ERR_PENDING;
        for (int i = 0; i < ndeep; i++)
            if (reqs[i] != MPI_REQUEST_NULL) MPI_Request_free(&reqs[i]);
    }
    if (comm != MPI_COMM_NULL) {
        barrier = revoked(MPI_Barrier(comm));
        CHECK(MPI_Comm_free(&comm));
    }
    free(big);
    int ok = waited && deep_failed && barrier;
    printf("result ulfm_remote rank=%d %s waited=%d deep=%d barrier=%d ok=%d\n", me, how, waited, deep_failed, barrier,
           ok);
#else
    printf("result ulfm_remote rank=%d no_ulfm\n", me);
#endif
    MPI_Finalize();
    return 0;
}
