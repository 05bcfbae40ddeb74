/* Instructions per atomic, counted: N fetch-and-op (MPI_SUM on a long) or
 * compare-and-swap from rank 0 to rank 1, each followed by a flush, on a plain MPI window or
 * a clampi UCX window with or without mpi_assert_accumulate_intrinsic. Run rank 0 under
 * valgrind --tool=callgrind --toggle-collect='*Fetch_and_op' (or '*Compare_and_swap', or
 * '*Win_flush'): amo_count.sh does, and divides by N.
 *
 * usage: amo_count mpi|ucx|intrinsic fop|cas N */
#include <clampi.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4) {
        if (rank == 0) fprintf(stderr, "usage: amo_count mpi|ucx|intrinsic fop|cas N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int is_mpi = !strcmp(argv[1], "mpi"), cas = !strcmp(argv[2], "cas"), n = atoi(argv[3]);
    long *base, one = 1, res = 0, cmp = 0;
    MPI_Win mw = MPI_WIN_NULL;
    CMPI_Win cw;
    if (is_mpi) {
        /* 64 bytes: MPICH 4.0.2's MPI_Win_allocate misplaces the targets after a rank whose size
         * is not a multiple of 16 (an 8-byte window: rank 0's FOPs land in its own memory) */
        MPI_Win_allocate(64, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &mw);
        MPI_Win_lock_all(0, mw);
    } else {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "clampi_backend", "ucx");
        MPI_Info_set(info, "clampi_mode", "off");
        if (!strcmp(argv[1], "intrinsic")) MPI_Info_set(info, "mpi_assert_accumulate_intrinsic", "true");
        CMPI_Win_allocate(64, sizeof(long), info, MPI_COMM_WORLD, &base, &cw);
        MPI_Info_free(&info);
        CMPI_Win_lock_all(0, cw);
    }
    *base = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i <= n; i++) {
            if (i == 1) CALLGRIND_ZERO_STATS; /* the first one is a warm-up */
            if (is_mpi) {
                if (cas)
                    MPI_Compare_and_swap(&one, &cmp, &res, MPI_LONG, 1, 0, mw);
                else
                    MPI_Fetch_and_op(&one, &res, MPI_LONG, 1, 0, MPI_SUM, mw);
                MPI_Win_flush(1, mw);
            } else {
                if (cas)
                    CMPI_Compare_and_swap(&one, &cmp, &res, MPI_LONG, 1, 0, cw);
                else
                    CMPI_Fetch_and_op(&one, &res, MPI_LONG, 1, 0, MPI_SUM, cw);
                CMPI_Win_flush(1, cw);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (is_mpi)
        MPI_Win_sync(mw); /* the target's view of its memory in the passive epoch */
    else
        CMPI_Win_sync(cw);
    long expect = cas ? 1 : n + 1; /* the first CAS swaps 0 -> 1, the others find 1 */
    if (rank == 1 && *base != expect) printf("amo_count: wrong result %ld, expected %ld\n", *base, expect);
    if (rank == 0) printf("variant=%s op=%s n=%d\n", argv[1], argv[2], n);
    if (is_mpi) {
        MPI_Win_unlock_all(mw);
        MPI_Win_free(&mw);
    } else {
        CMPI_Win_unlock_all(cw);
        CMPI_Win_free(&cw);
    }
    MPI_Finalize();
    return 0;
}
