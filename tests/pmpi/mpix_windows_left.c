/* Family windows left to MPI_Finalize under the preload (linked with libclampi_pmpi for
 * <clampi/mpix.h>), made unevenly across ranks: two UCX windows X (dynamic) then Y
 * (allocated); a duplicate of Y on every rank; then a memory-handle window onto rank 0's
 * memory in X on rank 1 only (a local call), the newest window there; none freed. clampi
 * frees what is left newest first inside MPI_Finalize, each family window through its own
 * MPI window (the handle window locally, the duplicates together, then Y, then X): freeing
 * a family window through its parent's would free X first on rank 1 while rank 0 frees
 * the duplicate and Y, and the two would wait in different collectives; leaving the family
 * windows' own MPI windows to MPI makes UCX warn about their keys at MPI_Finalize.
 * Its "result" lines are what the reads saw; np >= 2. */
#include <mpi.h>
#include <clampi/mpix.h>

#include <stdio.h>
#include <string.h>

static int me, np;

#define OK(call)                                                                     \
    do {                                                                             \
        if ((call) != MPI_SUCCESS) {                                                 \
            fprintf(stderr, "rank %d: %s failed at line %d\n", me, #call, __LINE__); \
            MPI_Abort(MPI_COMM_WORLD, 2);                                            \
        }                                                                            \
    } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "clampi_backend", "ucx");
    MPI_Win x, y, dup, mw = MPI_WIN_NULL;
    OK(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &x));
    int *ymem;
    OK(MPI_Win_allocate(16 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &ymem, &y));
    MPI_Info_free(&info);
    OK(MPIX_Win_dup_with_info(y, MPI_INFO_NULL, &dup));
    int v = 100 + me, right = (me + 1) % np;
    OK(MPI_Win_lock_all(0, dup));
    OK(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, dup));
    OK(MPI_Win_unlock_all(dup));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, y));
    printf("result dup_put rank=%d value=%d\n", me, ymem[3]);
    OK(MPI_Win_unlock(me, y));
    static int mem[16];
    for (int i = 0; i < 16; i++) mem[i] = 1000 * me + i;
    OK(MPI_Win_attach(x, mem, sizeof mem));
    unsigned char h[MPI_MAX_MEMHANDLE_SIZE];
    int hlen = 0;
    if (me == 0) {
        OK(MPIX_Memhandle_create(mem, sizeof mem, x, h, &hlen));
        MPI_Send(&hlen, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Send(h, hlen, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    } else if (me == 1) {
        MPI_Recv(&hlen, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(h, hlen, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        OK(MPIX_Win_from_memhandle(h, hlen, 0, sizeof(int), MPI_INFO_NULL, x, &mw));
        int got = -1;
        OK(MPI_Win_lock_all(0, x));
        OK(MPI_Get(&got, 1, MPI_INT, 0, 5, 1, MPI_INT, mw));
        OK(MPI_Win_flush(0, mw));
        OK(MPI_Win_unlock_all(x));
        printf("result handle_window_read rank=1 value=%d\n", got);
    }
    fflush(stdout);
    return MPI_Finalize(); /* x, y, dup and (rank 1) mw left */
}
