/* ULFM (Open MPI, fault tolerance on): a revocation, or a process's death, reaches the
 * processes that are already waiting inside MPI_Alltoall for a peer that will never join.
 * The MPI's own collective then ends with MPIX_ERR_REVOKED (MPIX_ERR_PROC_FAILED); so must
 * clampi's, on one node (the shared heap) and across nodes (the hierarchical path: on-node
 * waits, and the node leaders inside the MPI's exchange among themselves).
 * The last rank L is the peer. Rank 0 tells L (on MPI_COMM_WORLD) that it enters
 * MPI_Alltoall on a duplicate of MPI_COMM_WORLD and enters it, as do ranks 1..L-1; L, once
 * told, waits a moment (so that the others are inside the call; the outcome checked is the
 * same if they are not yet) and revokes the duplicate instead of joining; all then meet in
 * a barrier on MPI_COMM_WORLD. The argument: "small" (8-byte blocks: clampi's mailbox path
 * on one node), "large" (4 KiB: its slot path), "kill" (8 bytes, and L kills itself instead
 * of revoking: the launcher must keep the job going, Open MPI's `mpirun --with-ft ulfm`;
 * "kill_finalize": the same, and the survivors then call MPI_Finalize),
 * "late" (8 bytes, and L joins the call late instead: however long the others wait and ask
 * the MPI, the call succeeds on all). Every rank but L prints "coll_outcome rank=R
 * revoked|proc_failed|success|..." and every survivor "result ulfm_coll_inside rank=R
 * ok=1" when the calls ended so. An MPI without ULFM says so. */
#include "plain_check.h"
#include "plain_ulfm.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef OMPI_HAVE_MPI_EXT_FTMPI
/* include/clampi/coll.h's CMPIX_Coll_stats, for a program that does not link clampi */
typedef struct {
    unsigned long direct, staged, delegated, eager, hierarchical, abandoned;
} CMPIX_Coll_stats_like;
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifdef OMPI_HAVE_MPI_EXT_FTMPI
    const char *mode = argc > 1 ? argv[1] : "small";
    const int finalize_after_death = strcmp(mode, "kill_finalize") == 0;
    const int block = strcmp(mode, "large") == 0 ? 4096 : 8, die = strcmp(mode, "kill") == 0 || finalize_after_death,
              late = strcmp(mode, "late") == 0;
    char *send, *recv; /* MPI_Alloc_mem: under the preload, the shared heap (no staging) */
    CHECK(MPI_Alloc_mem((MPI_Aint)size * block, MPI_INFO_NULL, &send));
    CHECK(MPI_Alloc_mem((MPI_Aint)size * block, MPI_INFO_NULL, &recv));
    memset(send, 0, (size_t)size * (size_t)block);
    MPI_Comm comm;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    /* one call everybody joins: the collective's state is made, the path is clampi's */
    CHECK(MPI_Alltoall(send, block, MPI_BYTE, recv, block, MPI_BYTE, comm));
    int ok = 1, go = 1;
    const int peer = size - 1;
    if (me != peer) {
        if (me == 0) CHECK(MPI_Send(&go, 1, MPI_INT, peer, 0, MPI_COMM_WORLD));
        int rc = MPI_Alltoall(send, block, MPI_BYTE, recv, block, MPI_BYTE, comm), cls = -1;
        MPI_Error_class(rc, &cls);
        ok = late ? rc == MPI_SUCCESS : die ? cls == MPIX_ERR_PROC_FAILED : cls == MPIX_ERR_REVOKED;
        printf("coll_outcome rank=%d %s\n", me,
               cls == MPIX_ERR_REVOKED       ? "revoked"
               : cls == MPIX_ERR_PROC_FAILED ? "proc_failed"
               : rc == MPI_SUCCESS           ? "success"
                                             : "other_error");
    } else {
        CHECK(MPI_Recv(&go, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        struct timespec moment = {0, 200 * 1000 * 1000};
        nanosleep(&moment, NULL);
        if (die) raise(SIGKILL);
        if (late)
            ok = MPI_Alltoall(send, block, MPI_BYTE, recv, block, MPI_BYTE, comm) == MPI_SUCCESS;
        else
            CHECK(MPIX_Comm_revoke(comm));
    }
    if (finalize_after_death) { /* bench/ulfm_finalize_after_death.sh: does MPI_Finalize return? */
        printf("result ulfm_coll_inside rank=%d ok=%d\n", me, ok);
        fflush(stdout);
        MPI_Finalize();
        printf("finalized rank=%d\n", me);
        return 0;
    }
    if (die) {
        /* The survivor stops here: Open MPI's own MPI_Finalize after a process died hangs
         * now and then (1 run in 8 plainly). Preloaded, clampi's counters say which path the
         * call took (a line that is not a result: the plain run has no such function). */
        int (*coll_stats)(CMPIX_Coll_stats_like *) =
            (int (*)(CMPIX_Coll_stats_like *))dlsym(RTLD_DEFAULT, "CMPIX_Coll_get_stats");
        CMPIX_Coll_stats_like cs;
        if (coll_stats && coll_stats(&cs) == MPI_SUCCESS)
            printf("clampi_coll rank=%d eager=%lu hierarchical=%lu abandoned=%lu\n", me, cs.eager, cs.hierarchical,
                   cs.abandoned);
        printf("result ulfm_coll_inside rank=%d ok=%d\n", me, ok);
        fflush(stdout);
        _exit(0);
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(MPI_Comm_free(&comm));
    CHECK(MPI_Free_mem(send));
    CHECK(MPI_Free_mem(recv));
    printf("result ulfm_coll_inside rank=%d ok=%d\n", me, ok);
#else
    printf("result ulfm_coll_inside rank=%d no_ulfm\n", me);
#endif
    MPI_Finalize();
    return 0;
}
