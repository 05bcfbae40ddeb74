/* A peer's passive-target RMA while this process waits in a blocking receive: rank 1 locks
 * rank 0's window, fetch-and-adds, unlocks, then sends; rank 0 only receives. MPI requires
 * the receive to let the lock through. Under CLAMPI_MATCH on the UCX carrier the receive
 * waits in clampi, which must still enter MPI's progress (MPICH has no progress hook). */
#include "plain_check.h"

#define ROUNDS 100
static int me;

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    me = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    long *base;
    MPI_Win win;
    CHECK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    *base = 0;
    CHECK(MPI_Win_unlock(rank, win));
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int in_order = 1;
    for (int i = 0; i < ROUNDS; i++) {
        if (rank == 1) {
            long one = 1, old = -1;
            CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            CHECK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win));
            CHECK(MPI_Win_unlock(0, win));
            CHECK(MPI_Send(&old, 1, MPI_LONG, 0, 40, MPI_COMM_WORLD));
        } else if (rank == 0) {
            long v = -1;
            CHECK(MPI_Recv(&v, 1, MPI_LONG, 1, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            in_order &= v == i;
        }
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    long counter = *base;
    CHECK(MPI_Win_unlock(rank, win));
    if (rank == 0) printf("result lock_recv counter=%ld in_order=%d\n", counter, in_order);
    CHECK(MPI_Win_free(&win));
    MPI_Finalize();
    return 0;
}
