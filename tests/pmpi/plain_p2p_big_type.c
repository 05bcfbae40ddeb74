/* One message of more than 2 GiB (INT_MAX bytes) of a non-contiguous datatype: a vector of
 * 2,049 blocks of 1 MiB - 64 B at a 1 MiB stride (2,148,401,088 bytes of data), sent with
 * MPI_Send and received with MPI_Recv, count 1, from rank 0 to rank 1. Rank 1 checks every
 * block's first and last byte and a gap byte left alone, and prints one "result" line.
 * clampi's UCX carrier packs such a message itself (MPI_Pack's int size overflowed: MPI
 * refused the negative size). Needs 2 ranks and about 9 GiB of memory in all. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 2049
#define STRIDE (1 << 20)
#define BLOCK (STRIDE - 64)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Datatype big;
    MPI_Type_vector(BLOCKS, BLOCK, STRIDE, MPI_BYTE, &big);
    MPI_Type_commit(&big);
    size_t span = (size_t)BLOCKS * STRIDE;
    unsigned char *buf = malloc(span);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == 0) {
        for (size_t b = 0; b < BLOCKS; b++)
            for (size_t i = 0; i < STRIDE; i++)
                buf[b * STRIDE + i] = i < BLOCK ? (unsigned char)(b * 7 + i % 251) : 0xee;
        MPI_Send(buf, 1, big, 1, 3, MPI_COMM_WORLD);
    } else if (rank == 1) {
        for (size_t i = 0; i < span; i++) buf[i] = 0x11;
        MPI_Status st;
        int rc = MPI_Recv(buf, 1, big, 0, 3, MPI_COMM_WORLD, &st);
        MPI_Count n = 0;
        MPI_Get_elements_x(&st, MPI_BYTE, &n);
        long bad = 0;
        for (size_t b = 0; b < BLOCKS; b++) {
            unsigned char *p = buf + b * STRIDE;
            bad += p[0] != (unsigned char)(b * 7) || p[BLOCK - 1] != (unsigned char)(b * 7 + (BLOCK - 1) % 251) ||
                   p[BLOCK] != 0x11;
        }
        printf("result rc=%d bytes=%lld bad_blocks=%ld\n", rc, (long long)n, bad);
    }
    free(buf);
    MPI_Type_free(&big);
    MPI_Finalize();
    return 0;
}
