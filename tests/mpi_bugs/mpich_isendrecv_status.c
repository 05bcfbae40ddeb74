/* MPICH 4.0.2 (Debian 12), MPICH 5.0.2 and Intel MPI 2021.19, no clampi: MPI_Isendrecv's
 * request completes without the receive's status (MPICH 4.0.2 and Intel MPI: source 0, tag
 * 0, count 0; MPICH 5.0.2: other values). With MPI_PROC_NULL as both destination and
 * source, MPICH 4.0.2 crashes (SIGSEGV inside UCX) and MPICH 5.0.2 leaves the status as it
 * was. Open MPI 5.0.11 reports the receive's status.
 *
 * clampi's MPI_Isendrecv under CLAMPI_MATCH (src/msg/pair.c) reports the receive's status;
 * tests/pmpi/plain_p2p_mpi4.c leaves these statuses out of the results it compares with a
 * plain run, checks them only with clampi loaded, and does not make the MPI_PROC_NULL call.
 *
 *   mpicc.mpich mpich_isendrecv_status.c -o repro
 *   mpiexec.mpich -n 2 ./repro     # "status tag=0 source=0 count=0 (wrong)": exits 1
 *   mpiexec.mpich -n 2 ./repro 1   # both peers MPI_PROC_NULL: crashes */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, v, got = -1, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    v = rank;
    MPI_Request q;
    MPI_Status st;
    st.MPI_SOURCE = -5, st.MPI_TAG = -5;
    if (argc > 1) {
        MPI_Isendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 7, &got, 1, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &q);
    } else {
        MPI_Isendrecv(&v, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT, (rank + size - 1) % size, 7,
                      MPI_COMM_WORLD, &q);
    }
    MPI_Wait(&q, &st);
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    int want_src = argc > 1 ? MPI_PROC_NULL : (rank + size - 1) % size, want_tag = argc > 1 ? MPI_ANY_TAG : 7;
    if (st.MPI_SOURCE != want_src || st.MPI_TAG != want_tag) bad = 1;
    printf("rank %d: got %d, status tag=%d source=%d count=%d%s\n", rank, got, st.MPI_TAG, st.MPI_SOURCE, n,
           bad ? " (wrong)" : "");
    MPI_Finalize();
    return bad;
}
