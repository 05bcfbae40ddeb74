/* The name of the variable an allocation is assigned to, read from the allocation's
 * source line, as docs/locality-format.md asks for struct.name:
 *   double *u = malloc(...);            -> u
 *   g->cells[i] = calloc(...);          -> cells
 *   posix_memalign((void **)&u, ...);   -> u
 *   std::vector<double> u(n);           -> u
 *   u.resize(n);                        -> u
 * MPI-free engine function, unit-tested. */
#ifndef CLAMPI_LOCALITY_NAMES_H
#define CLAMPI_LOCALITY_NAMES_H
#include <stddef.h>

/* Returns 1 and writes the name into out (size n), or 0 when the line names nothing. */
int clampi_locality_name_from_line(const char *line, char *out, size_t n);
#endif
