/* ULFM (Open MPI with its fault tolerance on: OMPI_MCA_mpi_ft_enable=1): rank 0 revokes a
 * communicator while rank 1 waits in a blocking receive from it; rank 1's receive must fail
 * with MPIX_ERR_REVOKED, and a barrier after it on both. On the MPI carrier rank 1 waits on
 * clampi's duplicate of the communicator, which only a revocation of that duplicate too
 * reaches. An MPI without ULFM says so. */
#include "plain_check.h"
#include "plain_ulfm.h"

static int me;

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
#ifdef OMPI_HAVE_MPI_EXT_FTMPI
    MPI_Comm comm;
    int x = me, y = -1;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    CHECK(MPI_Sendrecv(&x, 1, MPI_INT, 1 - me, 0, &y, 1, MPI_INT, 1 - me, 0, comm, MPI_STATUS_IGNORE));
    int waited = 1; /* rank 0 does not wait */
    if (me == 0)
        CHECK(MPIX_Comm_revoke(comm));
    else
        waited = revoked(MPI_Recv(&y, 1, MPI_INT, 0, 5, comm, MPI_STATUS_IGNORE));
    int barrier = revoked(MPI_Barrier(comm));
    printf("result ulfm_remote rank=%d waited=%d barrier=%d ok=%d\n", me, waited, barrier, waited && barrier);
    CHECK(MPI_Comm_free(&comm));
#else
    printf("result ulfm_remote rank=%d no_ulfm\n", me);
#endif
    MPI_Finalize();
    return 0;
}
