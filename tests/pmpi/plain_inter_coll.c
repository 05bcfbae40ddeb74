/* Plain MPI (no clampi calls): MPI_Allgather and MPI_Alltoall where clampi must step aside
 * and leave MPI's answer, and a program that never calls them on MPI_COMM_WORLD.
 *   - an intercommunicator (even and odd ranks of MPI_COMM_WORLD), symmetric counts, and
 *     asymmetric ones, legal there: one group sends COUNT and receives 0, the other the
 *     reverse (MPICH's test/mpi/coll icallgather, icalltoall);
 *   - the same calls on a duplicate of MPI_COMM_WORLD only (clampi's state never lives on
 *     MPI_COMM_WORLD itself: MPI_Finalize must still succeed).
 * Prints deterministic "result" lines (run_preload.sh: identical plainly and preloaded).
 * Usage (an even number of ranks): plain_inter_coll [COUNT] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long sum(const int *v, int n) {
    unsigned long h = 0;
    for (int i = 0; i < n; i++) h = h * 31 + (unsigned long)v[i];
    return h;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    const int count = argc > 1 ? atoi(argv[1]) : 4;
    if (ws % 2) MPI_Abort(MPI_COMM_WORLD, 2);
    int *s = malloc(sizeof(int) * (size_t)count * (size_t)ws), *r = malloc(sizeof(int) * (size_t)count * (size_t)ws);
    for (int i = 0; i < count * ws; i++) s[i] = wr * 1000 + i;

    const int color = wr % 2;
    MPI_Comm local, inter, dup;
    MPI_Comm_split(MPI_COMM_WORLD, color, wr, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 7, &inter);
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    const int n = count * rsize;
    const int sc = color == 0 ? count : 0, rc = color == 0 ? 0 : count; /* asymmetric */
    for (int i = 0; i < n; i++) r[i] = -1;
    int err = MPI_Allgather(s, count, MPI_INT, r, count, MPI_INT, inter);
    printf("result inter allgather symmetric rank=%d err=%d sum=%lu\n", wr, err, sum(r, n));
    for (int i = 0; i < n; i++) r[i] = -1;
    err = MPI_Allgather(s, sc, MPI_INT, r, rc, MPI_INT, inter);
    printf("result inter allgather asymmetric rank=%d err=%d sum=%lu\n", wr, err, sum(r, n));
    for (int i = 0; i < n; i++) r[i] = -1;
    err = MPI_Alltoall(s, count, MPI_INT, r, count, MPI_INT, inter);
    printf("result inter alltoall symmetric rank=%d err=%d sum=%lu\n", wr, err, sum(r, n));
    for (int i = 0; i < n; i++) r[i] = -1;
    err = MPI_Alltoall(s, sc, MPI_INT, r, rc, MPI_INT, inter);
    printf("result inter alltoall asymmetric rank=%d err=%d sum=%lu\n", wr, err, sum(r, n));
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    err = MPI_Allgather(s, count, MPI_INT, r, count, MPI_INT, dup);
    printf("result dup allgather rank=%d err=%d sum=%lu\n", wr, err, sum(r, count * ws));
    err = MPI_Alltoall(s, count, MPI_INT, r, count, MPI_INT, dup);
    printf("result dup alltoall rank=%d err=%d sum=%lu\n", wr, err, sum(r, count * ws));
    MPI_Comm_free(&dup);
    free(s);
    free(r);
    return MPI_Finalize();
}
