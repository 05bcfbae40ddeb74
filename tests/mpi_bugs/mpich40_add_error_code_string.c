/* MPICH 4.0.2 (Debian 12), no clampi: MPI_Add_error_code on a predefined class returns a
 * code without MPICH's dynamic-code bit (259, 515, ...: the class plus an index), and
 * MPI_Error_string then prints one of MPICH's own generic messages for it ("Network type
 * AF_INET invalid in call to inet_pton") instead of the string given to
 * MPI_Add_error_string; fatal errors raised with such a code print the same stray text.
 * MPICH 5.0.2, Intel MPI 2021.19 and Open MPI 4.1.4 print the added string.
 *
 * clampi: it checks that the MPI prints its message for each code it adds, and raises the
 * class itself where it does not (src/common/errors.c; tests/mpi/test_bad_input.c).
 *
 *   mpicc.mpich mpich40_add_error_code_string.c -o repro
 *   mpiexec.mpich -n 1 ./repro     # "... prints: (wrong)": exits 1 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int code, len;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Add_error_code(MPI_ERR_TYPE, &code);
    MPI_Add_error_string(code, "added string");
    MPI_Error_string(code, msg, &len);
    int right = strcmp(msg, "added string") == 0;
    printf("code %d prints: %s (%s)\n", code, msg, right ? "right" : "wrong");
    MPI_Finalize();
    return right ? 0 : 1;
}
