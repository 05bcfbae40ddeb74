/* clampi's options table, readable by programs and tools (clampi-info prints it).
 * Every knob has a name, the part it belongs to, an info key (per window or communicator;
 * NULL for process-wide knobs), an environment variable, a type, a default and one line of
 * documentation. Strongest first: info key > environment variable > default. */
#ifndef CLAMPI_OPTIONS_H
#define CLAMPI_OPTIONS_H

#include <mpi.h>

#include "clampi/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CMPIX_Option {
    const char *name;          /* "mode", "match_width", ... */
    const char *part;          /* "rma", "preload", "coll", "match", "locality" */
    const char *info_key;      /* "clampi_mode", ...; NULL: process-wide, environment only */
    const char *env;           /* "CLAMPI_MODE", ... */
    const char *type;          /* "bool", "size", "uint", "enum", "string" */
    const char *default_value; /* as text */
    const char *doc;           /* one line */
} CMPIX_Option;

/* Number of options (rows of the table). Callable before MPI_Init. */
CLAMPI_API int CMPIX_Option_count(void);
/* Row `index` (0 <= index < CMPIX_Option_count()); MPI_ERR_ARG otherwise. */
CLAMPI_API int CMPIX_Option_get(int index, CMPIX_Option *option);
/* The allowed values of row `index` as text ("transparent|always_cache|user_defined|off"). */
CLAMPI_API int CMPIX_Option_allowed(int index, char *buf, int len);
/* The process-wide value of row `index` (environment > default) in canonical spelling, and
 * where it came from: "environment", "default", or "invalid" (the variable is set to a value
 * that is not allowed; the value given is then the environment's text). Per-window and
 * per-communicator info keys may override it: MPI_Win_get_info / MPI_Comm_get_info say. */
CLAMPI_API int CMPIX_Option_current(int index, char *value, int len, const char **source);

#ifdef __cplusplus
}
#endif
#endif
