/* Open MPI 4.1.4 and 5.0.11, no clampi: MPI_T_init_thread after MPI_Init_thread changes the
 * thread level MPI_Query_thread reports to the level MPI_T_init_thread was asked for: a
 * program initialised with MPI_THREAD_MULTIPLE (provided MPI_THREAD_MULTIPLE) reads
 * MPI_THREAD_SINGLE back once any code has called MPI_T_init_thread(MPI_THREAD_SINGLE, ...).
 * MPICH 4.0.2 keeps the level. (mpi4py decides by MPI_Query_thread whether threads may call
 * MPI.)
 *
 * clampi calls MPI_T_init_thread at the level MPI_Query_thread reports
 * (src/common/mpi_cvar.c); tests/pmpi/plain_startup.c checks the level stays.
 *
 *   mpicc.openmpi ompi_mpit_init_thread_lowers_query_thread.c -o repro
 *   mpirun.openmpi -np 1 ./repro     # "query after MPI_T_init_thread: 0 (wrong)": exits 1 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int provided, before, after, tool;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Query_thread(&before);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &tool);
    MPI_Query_thread(&after);
    printf("provided %d, query before MPI_T_init_thread: %d, after: %d (%s)\n", provided, before, after,
           after == before ? "right" : "wrong");
    MPI_T_finalize();
    MPI_Finalize();
    return after != before;
}
