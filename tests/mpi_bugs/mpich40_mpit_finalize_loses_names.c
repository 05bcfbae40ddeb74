/* MPICH 4.0.2 (Debian 12), no clampi: once MPI_T has been finalized as often as it was
 * initialised, a later MPI_T_init_thread gives a tool interface in which
 * MPI_T_cvar_get_index finds no variable by name (MPI_T_ERR_INVALID_NAME), although
 * MPI_T_cvar_get_num and MPI_T_cvar_get_info still list it. Open MPI 4.1.4 finds it again.
 *
 * clampi: it initialises MPI_T once, when it first sets a control variable around its own
 * call (src/common/mpi_cvar.c), and never finalizes it, so the program's own use of MPI_T
 * keeps working (tests/pmpi/plain_startup.c).
 *
 *   mpicc.mpich mpich40_mpit_finalize_loses_names.c -o repro
 *   mpiexec.mpich -n 1 ./repro     # "second lookup: error 73 (wrong)": exits 1 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int provided, index, first, second;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    first = MPI_T_cvar_get_index("MPIR_CVAR_SHM_SYMHEAP_RETRY", &index);
    MPI_T_finalize();
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    second = MPI_T_cvar_get_index("MPIR_CVAR_SHM_SYMHEAP_RETRY", &index);
    MPI_T_finalize();
    printf("first lookup: error %d, second lookup: error %d (%s)\n", first, second,
           second == first ? "right" : "wrong");
    MPI_Finalize();
    return second != first;
}
