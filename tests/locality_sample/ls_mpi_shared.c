/* MPI shared memory under the sampler (check_sample.py mpi): a plain
 * MPI_Win_allocate_shared window, a CMPI_Win_allocate window (node-shared) and a
 * CMPI_Alloc_mem buffer (shared heap). After allocation every rank first READS its
 * peer's segment, then writes its own. clampi's segments are first-touched by their
 * owner inside the allocation (clampi_numa_touch_own), so there the owner must be first;
 * the plain MPI window shows who touches first without that fix. Prints
 * "SEG <rank> <name> <address> <bytes>" lines for the checker. */
#include <clampi.h>
#include <stdio.h>
#include <string.h>

#define PAGES 8
#define BYTES (PAGES * 4096)

static volatile double sink;

static void peer_reads_then_own_writes(MPI_Win win, int rank, int size, double *mine) {
    int peer = (rank + 1) % size;
    MPI_Aint sz;
    int du;
    double *theirs;
    MPI_Win_shared_query(win, peer, &sz, &du, &theirs);
    for (size_t i = 0; i < (size_t)sz / sizeof(double); i += 512) sink += theirs[i];
    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t i = 0; i < BYTES / sizeof(double); i++) mine[i] = rank;
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");

    double *plain;
    MPI_Win pw;
    MPI_Win_allocate_shared(BYTES, sizeof(double), info, MPI_COMM_WORLD, &plain, &pw);
    CMPI_Win cw;
    double *cbase;
    CMPI_Win_allocate(BYTES, sizeof(double), info, MPI_COMM_WORLD, &cbase, &cw);
    double *hbuf;
    CMPI_Alloc_mem(BYTES, MPI_INFO_NULL, &hbuf);
    printf("SEG %d plain %p %d\nSEG %d clampi_win %p %d\nSEG %d clampi_heap %p %d\n", rank, (void *)plain, BYTES, rank,
           (void *)cbase, BYTES, rank, (void *)hbuf, BYTES);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    peer_reads_then_own_writes(pw, rank, size, plain);
    peer_reads_then_own_writes(cw.win, rank, size, cbase);
    for (size_t i = 0; i < BYTES / sizeof(double); i++) hbuf[i] = rank;
    CMPI_Free_mem(hbuf);
    CMPI_Win_free(&cw);
    MPI_Win_free(&pw);
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
