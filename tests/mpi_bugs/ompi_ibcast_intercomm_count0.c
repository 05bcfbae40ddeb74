/* Open MPI 4.1.4 (Debian 12) and 5.0.11, no clampi: MPI_Ibcast on an intercommunicator loses its place
 * when the processes of the root's group that are not the root (root = MPI_PROC_NULL) pass
 * count 0, as mpi4py's object broadcast does. Open MPI returns at once for count 0 (its
 * ompi/mpi/c/ibcast.c), so libnbc's per-communicator tag sequence skips one step on those
 * processes and later nonblocking collectives on the communicator exchange the wrong
 * messages. The blocking MPI_Bcast has the same shortcut but no tag sequence, so only the
 * nonblocking form is hit. MPICH 4.0 and 5.0 are right.
 *
 * clampi's workaround: on the MPI carrier (CLAMPI_MATCH_CARRIER=mpi), collectives on an
 * intercommunicator are MPI's blocking calls (src/pmpi/match_progress.c).
 *
 *   mpicc.openmpi ompi_ibcast_intercomm_count0.c -o repro
 *   timeout 30 mpirun.openmpi --oversubscribe -n 3 ./repro   # hangs (or exits 1: wrong values)
 *   (Open MPI 5.0.11 hangs the same way)
 *   mpiexec.mpich -n 3 ./repro                                 # exits 0
 *
 * 3 ranks: world rank 0 is one group and receives; world ranks 1 and 2 are the other group
 * and take turns as root (the other passes MPI_PROC_NULL with count 0). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    if (ws != 3) {
        if (wr == 0) fprintf(stderr, "run with 3 ranks\n");
        MPI_Finalize();
        return 2;
    }
    int color = wr == 0 ? 0 : 1;
    MPI_Comm intra, inter;
    MPI_Request r;
    MPI_Comm_split(MPI_COMM_WORLD, color, 0, &intra);
    MPI_Intercomm_create(intra, 0, MPI_COMM_WORLD, color ? 0 : 1, 0, &inter);
    int v[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        int root;
        if (wr == 0) {
            root = i < 2 ? 0 : 1;
        } else if (wr == 1) {
            root = i < 2 ? MPI_ROOT : MPI_PROC_NULL;
            v[i] = 100 + i;
        } else {
            root = i < 2 ? MPI_PROC_NULL : MPI_ROOT;
            v[i] = 200 + i;
        }
        MPI_Ibcast(&v[i], root == MPI_PROC_NULL ? 0 : 1, MPI_INT, root, inter, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    int bad = wr == 0 && (v[0] != 100 || v[1] != 101 || v[2] != 202 || v[3] != 203);
    if (wr == 0)
        printf("rank 0 received %d %d %d %d (right: 100 101 202 203): %s\n", v[0], v[1], v[2], v[3],
               bad ? "WRONG" : "ok");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&intra);
    MPI_Finalize();
    return bad;
}
