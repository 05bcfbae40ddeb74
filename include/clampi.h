/* clampi: a caching and locality layer for MPI. Umbrella header: include this one. */
#ifndef CLAMPI_H
#define CLAMPI_H

#include <clampi/rma.h>      /* RMA get cache: CMPI_Win_*, CMPI_Get, ... */
#include <clampi/coll.h>     /* collectives on a shared heap: CMPI_Alltoall, CMPI_Alloc_mem, ... */
#include <clampi/numa.h>     /* NUMA first-touch allocation: clampi_numa_alloc, ... */
#include <clampi/locality.h> /* locality analysis: CLAMPI_LOCALITY_NAME (clampi-locality) */
#include <clampi/match.h>    /* message matching over UCX: CMPIX_Comm_enable, CMPIX_Isend, ... */
#include <clampi/rmax.h>     /* RMA extensions: CMPIX_Win_dup_with_info, memory handles, ... */
#include <clampi/options.h>  /* the options table: CMPIX_Option_* (clampi-info) */

#endif
