/* Parsing of option values (environment variables, info values). MPI-free. */
#ifndef CLAMPI_COMMON_PARSE_H
#define CLAMPI_COMMON_PARSE_H
#include <stddef.h>

/* "4096", "64K", "16M", "1G" (binary units). Returns 0 and sets *out, or -1 if the
 * string is not a positive size. */
int clampi_parse_size(const char *s, size_t *out);
/* "1/0", "true/false", "yes/no", "on/off". Returns 0 and sets *out, or -1. */
int clampi_parse_bool(const char *s, int *out);
#endif
