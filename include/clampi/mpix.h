/* The seed's MPIX_ spellings of clampi's RMA extensions (<clampi/rmax.h>), for code
 * written against the paper's proposal. Each is an alias of the CMPIX_ function and is
 * defined only where the MPI library does not define that name itself. They take
 * CMPI_Win windows (clampi's handle), not MPI_Win. */
#ifndef CLAMPI_MPIX_H
#define CLAMPI_MPIX_H

#include <clampi/rmax.h>

#ifndef MPI_MAX_MEMHANDLE_SIZE
#define MPI_MAX_MEMHANDLE_SIZE CMPIX_MAX_MEMHANDLE_SIZE
#endif
#ifndef MPIX_MAX_MEMHANDLE_SIZE
#define MPIX_MAX_MEMHANDLE_SIZE CMPIX_MAX_MEMHANDLE_SIZE
#endif
#ifndef MPIX_Win_op_intrinsic
#define MPIX_Win_op_intrinsic CMPIX_Win_op_intrinsic
#endif
#ifndef MPIX_Win_dup_with_info
#define MPIX_Win_dup_with_info CMPIX_Win_dup_with_info
#endif
#ifndef MPIX_Memhandle_create
#define MPIX_Memhandle_create CMPIX_Memhandle_create
#endif
#ifndef MPIX_Win_from_memhandle
#define MPIX_Win_from_memhandle CMPIX_Win_from_memhandle
#endif
#ifndef MPIX_Memhandle_release
#define MPIX_Memhandle_release CMPIX_Memhandle_release
#endif
#ifndef MPIX_Rrput
#define MPIX_Rrput CMPIX_Rrput
#endif
#ifndef MPIX_Rraccumulate
#define MPIX_Rraccumulate CMPIX_Rraccumulate
#endif
#ifndef MPIX_Rrget_accumulate
#define MPIX_Rrget_accumulate CMPIX_Rrget_accumulate
#endif
#ifndef MPIX_Put_notify
#define MPIX_Put_notify CMPIX_Put_notify
#endif
#ifndef MPIX_Win_notify_request
#define MPIX_Win_notify_request CMPIX_Win_notify_request
#endif
#endif
