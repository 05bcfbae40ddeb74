/* Data-structure names from an allocation's source line (numalize's heuristic).
 *
 * Pure C without any library call, so the same code runs inside the Valgrind
 * tool (which has no libc) and in native unit tests. */
#ifndef CL_SRCNAME_H
#define CL_SRCNAME_H

/* Finds the variable an allocation on source line `line` is assigned to and
 * writes it (NUL-terminated, at most cap-1 characters) to out.
 *   "double *u = malloc(n)"          -> "u"
 *   "s->cells = calloc(n, 8);"       -> "s->cells"
 *   "std::vector<double> u(n);"      -> "u"
 *   "uBuffer.resize(n);"             -> "uBuffer"
 *   "p = new double[n];"             -> "p"
 * Returns 1 when a name was found, 0 otherwise (out is then ""). */
int cl_srcname_from_line(const char *line, char *out, unsigned long cap);

#endif
