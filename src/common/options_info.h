/* The options table's MPI side: a knob's value from an MPI_Info (window or communicator). */
#ifndef CLAMPI_COMMON_OPTIONS_INFO_H
#define CLAMPI_COMMON_OPTIONS_INFO_H
#include <mpi.h>

#include "common/options.h"

/* 1: info has the knob's key with a valid value (in *out; out->text is not kept);
 * 0: info is MPI_INFO_NULL or lacks the key; -1: the value is not allowed. */
int clampi_opt_info(MPI_Info info, clampi_opt_id id, clampi_opt_value *out);
/* info key > environment > default, for a per-object knob. On an invalid value returns
 * MPI_ERR_INFO_VALUE and names the key or variable in *bad; else MPI_SUCCESS. */
int clampi_opt_resolve(MPI_Info info, clampi_opt_id id, clampi_opt_value *out, clampi_opt_source *source,
                       const char **bad);
#endif
