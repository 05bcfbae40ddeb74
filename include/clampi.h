/* clampi: a caching and locality layer for MPI. Umbrella header: include this one. */
#ifndef CLAMPI_H
#define CLAMPI_H

#include <clampi/rma.h>   /* RMA get cache: CMPI_Win_*, CMPI_Get, ... */
#include <clampi/coll.h>  /* collectives on a shared heap: CMPI_Alltoall, CMPI_Alloc_mem, ... */
#include <clampi/rmax.h>  /* RMA extensions (seed 002): CMPIX_Win_dup_with_info, memory handles, ... */

#endif
